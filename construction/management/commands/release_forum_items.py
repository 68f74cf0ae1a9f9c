from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from construction.expert.actions import do_open_expert_review, do_release_forum

STEPS = ("open-review", "release")


class Command(AssayCommand):
    help = gettext_lazy(
        "LPFQA's last construction steps: open-review (every converted forum "
        "candidate waits for an expert in the verification queue), release (what "
        "the experts passed becomes active MC / short-answer items). Each step "
        "repeated changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "step", choices=STEPS, help=gettext_lazy("the step to take")
        )
        add_benchmark_argument(parser)

    def handle(self, *args, step, benchmark, **options):
        target = benchmark_named(benchmark)
        try:
            if step == "open-review":
                opened = do_open_expert_review(target)
                result = ngettext(
                    "%(count)s item opened for expert review.",
                    "%(count)s items opened for expert review.",
                    opened,
                ) % {"count": opened}
            else:
                result = do_release_forum(target)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(str(result))
