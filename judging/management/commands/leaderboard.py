import json

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from judging.leaderboard.building import build_report
from judging.leaderboard.diagnostics import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    PAIRS_TOP_K,
)
from judging.reporting.tables import latex_file


class Command(AssayCommand):
    help = gettext_lazy(
        "Print a benchmark's leaderboard and diagnostic tables (slices, thinking vs "
        "non-thinking, languages, bootstrap CIs, paired differences)."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--language", default=None, help=gettext_lazy("default: source")
        )
        parser.add_argument(
            "--format",
            choices=["text", "json", "csv", "latex"],
            default="text",
            help=gettext_lazy("output format (default: %(default)s)"),
        )
        parser.add_argument(
            "--table",
            default=None,
            help=gettext_lazy(
                "only this table (leaderboard, capability, industry, difficulty, "
                "mode, multilingual, sv_zeroed, ci, pairs)"
            ),
        )
        parser.add_argument(
            "--resamples",
            type=int,
            default=BOOTSTRAP_RESAMPLES,
            help=gettext_lazy(
                "bootstrap resamples for the confidence intervals, at least 100 "
                "(default: %(default)s)"
            ),
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=BOOTSTRAP_SEED,
            help=gettext_lazy("seed of the bootstrap (default: %(default)s)"),
        )
        parser.add_argument(
            "--top",
            type=int,
            default=PAIRS_TOP_K,
            help=gettext_lazy(
                "how many runs the paired-difference table (Table 19) compares"
            ),
        )

    def handle(self, *args, **opts):
        benchmark = benchmark_named(opts["benchmark"])
        if opts["resamples"] < 100:
            raise CommandError(_("--resamples must be at least 100."))
        if opts["top"] < 2:
            raise CommandError(_("--top must be at least 2."))
        report = build_report(
            benchmark,
            language=opts["language"],
            resamples=opts["resamples"],
            seed=opts["seed"],
            pairs_top=opts["top"],
        )
        if opts["language"] and opts["language"] not in report.languages:
            raise CommandError(
                _("No runs in language %(language)r; runs exist in: %(languages)s.")
                % {
                    "language": opts["language"],
                    "languages": ", ".join(report.languages) or _("none"),
                }
            )
        tables = report.ordered_tables()
        if opts["table"]:
            tables = [t for t in tables if t.slug == opts["table"]]
            if not tables:
                raise CommandError(_("No table %(table)r.") % {"table": opts["table"]})
        fmt = opts["format"]
        if fmt == "json":
            payload = report.as_dict(tables)
            self.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2))
            return
        if fmt == "latex":  # one file: one header naming the packages
            self.stdout.write(latex_file(*(t.latex_body() for t in tables)), ending="")
            return
        writer = {"text": "to_text", "csv": "to_csv"}[fmt]
        for index, table in enumerate(tables):
            if index:
                self.stdout.write("")
            if fmt == "csv":
                self.stdout.write(f"# {table.title}")
            self.stdout.write(getattr(table, writer)(), ending="")
