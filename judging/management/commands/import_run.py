from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.models import Benchmark
from benchmark.validation import ImportRejected
from judging.evaluation.importing import (
    DEFAULT_JUDGE,
    DEFAULT_SV_JUDGE,
    do_import_run,
    read_rows,
)
from judging.evaluation.scores import ScoreMatrix, load_scores
from judging.interop.inspect_log import RUBRIC_SCORER, InspectReader
from judging.interop.lm_eval import LmEvalReader


class Command(BaseCommand):
    help = (
        "Import an evaluation run done elsewhere: IndustryBench evaluate.py CSV/JSONL "
        "columns, an Inspect AI .eval/.json log, or lm-evaluation-harness "
        "samples_*.jsonl; all-or-nothing."
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
        parser.add_argument(
            "--format", choices=["evaluate", "inspect", "lm-eval"], default="evaluate"
        )
        parser.add_argument(
            "--scorer", default=RUBRIC_SCORER, help="inspect: the 0–3 rubric score"
        )
        parser.add_argument(
            "--assume-no-violation",
            action="store_true",
            help="inspect, lm-eval: the source had no safety check; record none "
            "rather than leaving the items SV pending",
        )
        parser.add_argument("--metric", help="lm-eval: the metric taken as the score")
        parser.add_argument(
            "--metric-scale",
            type=int,
            default=1,
            help="lm-eval: multiply the metric (3 puts a 0/1 exact_match on 0–3)",
        )
        parser.add_argument("--id-field", default="id", help="lm-eval: doc's id key")
        parser.add_argument("--filter", default="", help="lm-eval: the filter to read")

    def _reader(self, opts):
        if opts["format"] == "inspect":
            return InspectReader(
                scorer=opts["scorer"],
                assume_no_violation=opts["assume_no_violation"],
            )
        if opts["format"] == "lm-eval":
            if not opts["metric"]:
                raise CommandError("--format lm-eval needs --metric.")
            return LmEvalReader(
                metric=opts["metric"],
                id_field=opts["id_field"],
                scale=opts["metric_scale"],
                filter_name=opts["filter"],
                assume_no_violation=opts["assume_no_violation"],
            )
        return read_rows

    def handle(self, *args, **opts):
        benchmark = Benchmark.objects.filter(slug=opts["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {opts['benchmark']!r}.")
        path: Path = opts["file"]
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
        reader = self._reader(opts)
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
                reader=reader,
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
        if isinstance(reader, InspectReader) and reader.ignored:
            listed = ", ".join(
                f"{name} ({n})" for name, n in sorted(reader.ignored.items())
            )
            self.stdout.write(f"Scores not read: {listed}.")
