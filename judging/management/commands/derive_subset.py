"""Derive and save an item subset from how many models solved each item:
`manage.py derive_subset --benchmark SLUG --rule lpfqa-minus|lpfqa-equal --name NAME
[--run ID …] [--solved-at N]` (default: every run in the source language)."""

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from judging.evaluation.actions import (
    EvaluationActionError,
    default_solved_at,
    do_derive_subset,
)
from judging.evaluation.models import EvaluationRun
from judging.reporting.subsets import RULES


class Command(AssayCommand):
    help = gettext_lazy(
        "Save an item subset (LPFQA⁻ / LPFQA⁼) derived from the runs' scores."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--rule",
            required=True,
            choices=sorted(RULES),
            help=gettext_lazy(
                "lpfqa-minus: drop the items no run solved; lpfqa-equal: also drop "
                "those every run solved"
            ),
        )
        parser.add_argument(
            "--name", required=True, help=gettext_lazy("the subset's name (slug)")
        )
        parser.add_argument(
            "--run",
            type=int,
            action="append",
            default=[],
            dest="runs",
            help=gettext_lazy(
                "an evaluation run id (repeat; default: every source-language run)"
            ),
        )
        parser.add_argument(
            "--solved-at",
            type=int,
            default=None,
            help=gettext_lazy(
                "the final score at which a run has solved an item, 1–3 (default: "
                "3 on the 0–3 rubric, 1 on a binary benchmark)"
            ),
        )

    def handle(self, *args, benchmark, rule, name, runs, solved_at, **options):
        bench = benchmark_named(benchmark)
        chosen = EvaluationRun.objects.filter(benchmark=bench)
        chosen = (
            chosen.filter(pk__in=runs)
            if runs
            else chosen.filter(language=bench.source_language)
        )
        try:
            subset = do_derive_subset(
                bench,
                name=name,
                rule=rule,
                runs=list(chosen.order_by("pk")),
                solved_at=default_solved_at(bench) if solved_at is None else solved_at,
                user=None,
            )
        except EvaluationActionError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            _("Saved %(subset)s: %(description)s.")
            % {"subset": subset, "description": subset.description}
        )
