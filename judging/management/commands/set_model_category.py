from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from judging.evaluation.actions import EvaluationActionError, do_set_model_category


class Command(AssayCommand):
    help = gettext_lazy(
        "Set the category (closed, open MoE, open dense, …) of every run of a model; "
        "the leaderboard groups by it. An empty category clears it."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--model", required=True, help=gettext_lazy("model name of the runs")
        )
        parser.add_argument(
            "--category",
            required=True,
            help=gettext_lazy("e.g. closed, open MoE; an empty one clears it"),
        )

    def handle(self, *args, benchmark, model, category, **options):
        found = benchmark_named(benchmark)
        try:
            count = do_set_model_category(found, model, category)
        except EvaluationActionError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            ngettext(
                "%(model)s: category %(category)s on %(count)s run.",
                "%(model)s: category %(category)s on %(count)s runs.",
                count,
            )
            % {
                "model": model,
                "category": category.strip() or _("(none)"),
                "count": count,
            }
        )
