from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from judging.robustness import report


class Command(AssayCommand):
    help = gettext_lazy(
        "Print a benchmark's robustness tables (pooled, per relation, per sector) "
        "from its finished runs' stored replies."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--format",
            choices=["text", "csv"],
            default="text",
            help=gettext_lazy("output format (default: %(default)s)"),
        )
        parser.add_argument(
            "--language",
            default=None,
            help=gettext_lazy(
                "the runs asked in this language (default: the source language)"
            ),
        )
        parser.add_argument(
            "--table",
            default=None,
            help=gettext_lazy(
                "only this table (robustness, correct-by-relation, "
                "incorrect-by-relation, correct-by-sector, incorrect-by-sector, "
                "variant-counts)"
            ),
        )

    def handle(self, *args, **opts):
        benchmark = benchmark_named(opts["benchmark"])
        language = opts["language"] or benchmark.source_language
        if language not in benchmark.languages:
            raise CommandError(
                _("%(benchmark)s has no language %(language)r (it has %(languages)s).")
                % {
                    "benchmark": benchmark.name,
                    "language": language,
                    "languages": ", ".join(benchmark.languages),
                }
            )
        built = report.build(benchmark, language)
        if built.result is None:
            raise CommandError(
                _("No finished runs yet.") if built.variants else _("No variants yet.")
            )
        tables = built.tables
        if opts["table"]:
            if opts["table"] not in tables:
                raise CommandError(
                    _("No table %(table)r; tables: %(tables)s.")
                    % {"table": opts["table"], "tables": ", ".join(tables)}
                )
            tables = {opts["table"]: tables[opts["table"]]}
        for table in tables.values():
            if opts["format"] == "csv":
                self.stdout.write(table.to_csv(), ending="")
            else:
                self.stdout.write(table.to_text())
