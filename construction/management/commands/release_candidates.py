from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from construction.release import (
    PAPER_RELEASE_SIZE,
    do_draw_release_sample,
    do_open_pool,
    do_release,
)

STEPS = ("open-pool", "sample", "release")


class Command(AssayCommand):
    help = gettext_lazy(
        "The release in IndustryBench's order, one step at a time: open-pool "
        "(the verified pool's candidates become draft items, to be labelled), "
        "sample (a seeded release sample stratified by capability × industry; "
        "then run exact_dedup and dangling with run_stage), release (the "
        "sample's candidates that passed both checks become active items). "
        "Each step repeated changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "step", choices=STEPS, help=gettext_lazy("the step to take")
        )
        add_benchmark_argument(parser)
        parser.add_argument(
            "--size",
            type=int,
            default=PAPER_RELEASE_SIZE,
            help=gettext_lazy(
                "sample: how many candidates to draw (default: %(default)s, as "
                "IndustryBench's release)"
            ),
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=0,
            help=gettext_lazy("sample: the draw's seed (default: %(default)s)"),
        )

    def handle(self, *args, step, benchmark, size, seed, **options):
        target = benchmark_named(benchmark)
        try:
            if step == "open-pool":
                opened = do_open_pool(target)
                result = ngettext(
                    "%(count)s draft item opened.",
                    "%(count)s draft items opened.",
                    opened,
                ) % {"count": opened}
            elif step == "sample":
                result = do_draw_release_sample(target, size, seed)
            else:
                result = do_release(target)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(str(result))
