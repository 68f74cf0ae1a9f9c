"""Print a judge-reliability or consensus report: `manage.py report NAME --benchmark
SLUG [--format text|json|csv|latex] [--table KEY] [--judge NAME …]`."""

from django.core.management.base import CommandError
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.agreement.loading import REPORT_TITLES, build_report
from annotation.agreement.tables import FORMATS
from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named


class Command(AssayCommand):
    help = format_lazy(
        gettext_lazy("Print a report ({names}) for a benchmark."),
        names=", ".join(REPORT_TITLES),
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "name",
            choices=list(REPORT_TITLES),
            help=gettext_lazy("the report to print"),
        )
        add_benchmark_argument(parser)
        parser.add_argument(
            "--format",
            choices=list(FORMATS),
            default="text",
            help=gettext_lazy("output format (default: %(default)s)"),
        )
        parser.add_argument(
            "--table",
            help=gettext_lazy(
                "CSV only: which table of the report (default: the first)"
            ),
        )
        parser.add_argument(
            "--judge",
            action="append",
            default=[],
            help=gettext_lazy(
                "cross-judge only: a judge to compare (repeat; at least two; "
                "default: the judges whose shared responses hold the most judgments)"
            ),
        )

    def handle(self, *args, name, benchmark, format, table, judge, **options):
        bench = benchmark_named(benchmark)
        report = build_report(bench, name, judges=tuple(judge))
        render_format = FORMATS[format][0]
        if format == "csv":
            keys = [t.slug for t in report.tables]
            if table is not None and table not in keys:
                raise CommandError(
                    _("Report %(report)s has tables %(tables)s; no %(table)r.")
                    % {"report": name, "tables": ", ".join(keys), "table": table}
                )
            self.stdout.write(render_format(report, table), ending="")
        else:
            self.stdout.write(render_format(report), ending="")
