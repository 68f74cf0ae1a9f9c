from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.models import Benchmark
from benchmark.validation import ImportRejected
from construction.actions import do_import_sources


class Command(BaseCommand):
    help = (
        "Import source documents (GB/T clauses, product records) from CSV or JSONL "
        "into a benchmark, all or nothing; sources already present are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--benchmark", required=True, help="benchmark slug")

    def handle(self, *args, file, benchmark, **options):
        target = Benchmark.objects.filter(slug=benchmark).first()
        if target is None:
            raise CommandError(f"No benchmark {benchmark!r}.")
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"No file {file!r}.")
        try:
            result = do_import_sources(target, path.read_bytes(), path.name)
        except ImportRejected as rejected:
            for problem in rejected.problems:
                self.stderr.write(str(problem))
            raise CommandError(str(rejected)) from None
        self.stdout.write(str(result))
