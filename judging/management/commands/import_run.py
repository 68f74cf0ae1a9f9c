from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.models import Benchmark
from benchmark.validation import ImportRejected
from judging.evaluation.importing import (
    DEFAULT_JUDGE,
    DEFAULT_SV_JUDGE,
    do_import_run,
)
from judging.evaluation.reports import ScoreMatrix, load_scores


class Command(BaseCommand):
    help = (
        "Import an evaluation run done elsewhere (IndustryBench evaluate.py CSV/JSONL "
        "columns); all-or-nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--benchmark", required=True, help="benchmark slug")
        parser.add_argument("--model", required=True, help="model name for the run")
        parser.add_argument("--language", default=None, help="default: source")
        parser.add_argument("--thinking", action="store_true")
        parser.add_argument("--category", default="", help="e.g. closed, open MoE")
        parser.add_argument("--judge-name", default=DEFAULT_JUDGE)
        parser.add_argument("--sv-judge-name", default=DEFAULT_SV_JUDGE)

    def handle(self, *args, **opts):
        benchmark = Benchmark.objects.filter(slug=opts["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {opts['benchmark']!r}.")
        path: Path = opts["file"]
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
        try:
            run = do_import_run(
                benchmark,
                data,
                filename=path.name,
                model_name=opts["model"],
                language=opts["language"] or benchmark.source_language,
                thinking=opts["thinking"],
                model_category=opts["category"],
                judge_name=opts["judge_name"],
                sv_judge_name=opts["sv_judge_name"],
            )
        except ImportRejected as rejected:
            lines = "\n".join(f"  {problem}" for problem in rejected.problems)
            raise CommandError(
                f"{path} was rejected; nothing was imported:\n{lines}"
            ) from None
        matrix: ScoreMatrix = load_scores([run])
        metrics = matrix.metrics(0)
        self.stdout.write(
            f"Imported run {run.pk}: {run} with {metrics.n_items} items — "
            f"final {metrics.final_mean:.3f}, raw {metrics.raw_mean:.3f}, "
            f"{metrics.n_pending} pending."
        )
