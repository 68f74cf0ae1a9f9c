from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from benchmark import formats
from benchmark.commands import add_benchmark_argument, benchmark_named
from benchmark.validation import ImportRejected
from judging.robustness import actions, generation

FORMATS = {"mc": formats.MULTIPLE_CHOICE, "tf": formats.TRUE_FALSE}


class Command(AssayCommand):
    help = gettext_lazy(
        "Generate a benchmark's rule-based metamorphic variants (all but logic); a "
        "seed keeps a variant it already has."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--relations",
            default=",".join(generation.DETERMINISTIC),
            help=gettext_lazy("comma-separated (default: every rule-based relation)"),
        )
        parser.add_argument(
            "--formats", default="mc,tf", help=gettext_lazy("mc, tf or mc,tf")
        )
        parser.add_argument(
            "--sector-field",
            default=generation.DOMAIN,
            help=gettext_lazy(
                "a label dimension's code, or 'domain' (the item's domain)"
            ),
        )
        parser.add_argument(
            "--resources",
            help=gettext_lazy("a CSV file (kind,language,key,value) to save first"),
        )

    def handle(self, *args, **opts):
        benchmark = benchmark_named(opts["benchmark"])
        try:
            item_formats = [FORMATS[f] for f in opts["formats"].split(",") if f]
        except KeyError as unknown:
            raise CommandError(
                _("Unknown format %(format)r; use mc and tf.")
                % {"format": unknown.args[0]}
            ) from None
        relation_names = [r for r in opts["relations"].split(",") if r]
        if opts["resources"]:
            self._save_resources(benchmark, opts["resources"])
        try:
            actions.check_generation(
                benchmark, item_formats, relation_names, opts["sector_field"]
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        done = actions.generate_variants(
            benchmark, item_formats, relation_names, opts["sector_field"]
        )
        self.stdout.write(
            ngettext("%(count)s new variant.", "%(count)s new variants.", done.created)
            % {"count": done.created}
        )
        for relation, count in sorted(done.not_applicable.items()):
            self.stdout.write(
                "  "
                + ngettext(
                    "%(relation)s: %(count)s seed it does not apply to",
                    "%(relation)s: %(count)s seeds it does not apply to",
                    count,
                )
                % {"relation": relation, "count": count}
            )
        for refusal in done.refusals():
            self.stdout.write(f"  {refusal}")

    def _save_resources(self, benchmark, path):
        try:
            with open(path, encoding="utf-8-sig") as source:
                text = source.read()
        except OSError as error:
            raise CommandError(
                _("Cannot read %(file)s: %(error)s.")
                % {"file": path, "error": error.strerror}
            ) from None
        except UnicodeDecodeError:
            raise CommandError(
                _("%(file)s is not UTF-8 text.") % {"file": path}
            ) from None
        try:
            count = actions.do_replace_resources(benchmark, text)
        except ImportRejected as rejected:
            raise CommandError(
                _("%(file)s was rejected; nothing was changed:") % {"file": path}
                + "\n"
                + "\n".join(rejected.lines())
            ) from None
        self.stdout.write(
            ngettext(
                "Saved %(count)s resource entry.",
                "Saved %(count)s resource entries.",
                count,
            )
            % {"count": count}
        )
