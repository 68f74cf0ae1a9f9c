"""manage.py translation_report --benchmark SLUG [--format text|json|csv]"""

import json

from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from judging.translation.report import as_csv, as_rows, as_text, translation_report


class Command(AssayCommand):
    help = gettext_lazy(
        "Per target language: translated, auto-approved, flagged (by LLM score / "
        "by preservation check), reviewer decisions, mean faithfulness, review time."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--format",
            choices=["text", "json", "csv"],
            default="text",
            help=gettext_lazy("Output format (default: %(default)s)"),
        )

    def handle(self, *args, **options):
        benchmark = benchmark_named(options["benchmark"])
        summaries = translation_report(benchmark)
        if options["format"] == "json":
            self.stdout.write(json.dumps(as_rows(summaries), indent=2))
        elif options["format"] == "csv":
            self.stdout.write(as_csv(summaries), ending="")
        else:
            self.stdout.write(as_text(summaries))
