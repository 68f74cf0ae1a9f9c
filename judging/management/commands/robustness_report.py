from django.core.management.base import BaseCommand, CommandError

from benchmark.models import Benchmark
from judging.robustness import report


class Command(BaseCommand):
    help = (
        "Print a benchmark's robustness tables (pooled, per relation, per sector) "
        "from its finished runs' stored replies."
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="benchmark slug")
        parser.add_argument("--format", choices=["text", "csv"], default="text")
        parser.add_argument(
            "--language",
            default=None,
            help="the runs asked in this language (default: the source language)",
        )
        parser.add_argument(
            "--table",
            default=None,
            help="only this table (robustness, correct-by-relation, "
            "incorrect-by-relation, correct-by-sector, incorrect-by-sector, "
            "variant-counts)",
        )

    def handle(self, *args, **opts):
        benchmark = Benchmark.objects.filter(slug=opts["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {opts['benchmark']!r}.")
        language = opts["language"] or benchmark.source_language
        if language not in benchmark.languages:
            raise CommandError(
                f"{benchmark.name} has no language {language!r} "
                f"(it has {', '.join(benchmark.languages)})."
            )
        built = report.build(benchmark, language)
        if built.result is None:
            raise CommandError(
                "No variants yet." if not built.variants else "No finished runs yet."
            )
        tables = built.tables
        if opts["table"]:
            if opts["table"] not in tables:
                raise CommandError(
                    f"No table {opts['table']!r}; tables: {', '.join(tables)}."
                )
            tables = {opts["table"]: tables[opts["table"]]}
        for table in tables.values():
            if opts["format"] == "csv":
                self.stdout.write(table.to_csv(), ending="")
            else:
                self.stdout.write(table.to_text())
