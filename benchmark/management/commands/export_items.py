import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.exporting import FORMATS, write_export
from benchmark.models import Benchmark


class Command(BaseCommand):
    help = (
        "Export a benchmark's items as IndustryBench-layout CSV or generic JSONL. "
        "--release writes only approved current renderings and final labels."
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", metavar="SLUG", required=True)
        parser.add_argument("--format", dest="fmt", choices=FORMATS, required=True)
        parser.add_argument("--release", action="store_true")
        parser.add_argument(
            "--output", type=Path, help="File to write (default: standard output)."
        )

    def handle(self, *args, benchmark, fmt, release, output, **options):
        found = Benchmark.objects.filter(slug=benchmark).first()
        if found is None:
            raise CommandError(f"No benchmark with slug {benchmark!r}.")
        if output is None:
            report = write_export(found, sys.stdout, fmt, release=release)
        else:
            try:
                with output.open("w", encoding="utf-8", newline="") as out:
                    report = write_export(found, out, fmt, release=release)
            except OSError as error:
                raise CommandError(
                    f"Cannot write {output}: {error.strerror}."
                ) from None
        # The report goes to stderr so that it never mixes with an export on stdout.
        for line in report.lines(release):
            self.stderr.write(line)
