import sys
from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from judging.leaderboard.consistency import (
    RATE_READINGS,
    UnreadableTable,
    check_table,
    parse_table,
)

# Exit codes: findings are 1 (like a failing check), an unreadable table 2.
FOUND = 1
UNREADABLE = 2


class Command(AssayCommand):
    help = gettext_lazy(
        "Check a summary table (CSV or tab-separated, header first: the leaderboard "
        "CSV or model, n, raw, final, delta, perfect, pass, rank, raw_rank, Δrank) "
        "for rows whose numbers cannot all be true. Exits 1 when any is found."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "file", help=gettext_lazy("the table; - reads standard input")
        )
        parser.add_argument(
            "--rates",
            choices=RATE_READINGS,
            default="auto",
            help=gettext_lazy(
                "Perfect and Pass written without %%: percentages, fractions, or "
                "auto (percentages if any is above 1)"
            ),
        )
        parser.add_argument(
            "--rates-before-sv",
            action="store_true",
            help=gettext_lazy(
                "Perfect and Pass count scores before the SV rule, so they bound "
                "Raw rather than Final"
            ),
        )

    def handle(self, *args, **opts):
        text = self._read(opts["file"])
        try:
            table = parse_table(text, rates=opts["rates"])
        except UnreadableTable as unreadable:
            problems = [str(problem) for problem in unreadable.problems]
            if unreadable.total > len(problems):
                hidden = unreadable.total - len(problems)
                problems.append(
                    ngettext(
                        "… and %(count)s more problem.",
                        "… and %(count)s more problems.",
                        hidden,
                    )
                    % {"count": hidden}
                )
            raise CommandError(
                _("The table could not be read:") + "\n  " + "\n  ".join(problems),
                returncode=UNREADABLE,
            ) from None
        result = check_table(table, rates_after_sv=not opts["rates_before_sv"])
        for finding in result.findings:
            self.stdout.write(str(finding))
        self.stdout.write(
            _("Checks run: %(checks)s")
            % {"checks": ", ".join(c.title for c in result.checks_run) or _("none")}
        )
        for check, missing in result.checks_skipped:
            self.stdout.write(
                _("Not run: %(check)s (needs %(missing)s)")
                % {"check": check.title, "missing": missing}
            )
        if result.findings:
            count = len(result.findings)
            rows = ngettext("%(count)s row", "%(count)s rows", result.rows) % {
                "count": result.rows
            }
            raise CommandError(
                ngettext(
                    "%(count)s inconsistency in %(found)s of %(rows)s.",
                    "%(count)s inconsistencies in %(found)s of %(rows)s.",
                    count,
                )
                % {"count": count, "found": result.rows_with_findings, "rows": rows},
                returncode=FOUND,
            )
        self.stdout.write(
            ngettext(
                "No inconsistency found in %(count)s row.",
                "No inconsistency found in %(count)s rows.",
                result.rows,
            )
            % {"count": result.rows}
        )

    def _read(self, name: str) -> str:
        if name == "-":
            return sys.stdin.read()
        try:
            return Path(name).read_text(encoding="utf-8")
        except OSError as error:
            raise CommandError(
                _("Cannot read %(file)s: %(error)s.")
                % {"file": name, "error": error.strerror}
            ) from None
        except UnicodeDecodeError:
            raise CommandError(
                _("%(file)s is not UTF-8 text.") % {"file": name}
            ) from None
