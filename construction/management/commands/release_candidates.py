from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from benchmark.models import Benchmark
from construction.actions import do_release


class Command(BaseCommand):
    help = (
        "Release a seeded sample of the candidates that passed every stage as "
        "benchmark items (stratified by label, else by source kind); releasing "
        "the same sample again adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="benchmark slug")
        parser.add_argument("--size", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, benchmark, size, seed, **options):
        target = Benchmark.objects.filter(slug=benchmark).first()
        if target is None:
            raise CommandError(f"No benchmark {benchmark!r}.")
        try:
            result = do_release(target, size, seed)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(str(result))
