from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from benchmark.validation import ImportRejected
from judging.evaluation.importing import (
    DEFAULT_JUDGE,
    DEFAULT_SV_JUDGE,
    do_import_run,
)
from judging.evaluation.scores import ScoreMatrix, load_scores
from judging.interop.detect import EVALUATE, FORMAT_NAMES, INSPECT, LM_EVAL
from judging.interop.importing import Choices, make_reader, parse_map, preview_file


class Command(AssayCommand):
    help = gettext_lazy(
        "Import an evaluation run done elsewhere: IndustryBench evaluate.py CSV/JSONL "
        "columns, an Inspect AI .eval/.json log, or lm-evaluation-harness "
        "samples_*.jsonl (the format is detected); all-or-nothing. Without --map "
        "or --full, an Inspect scorer's values take their default map; "
        "lm-eval needs one (what 1.0 means)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "file", type=Path, help=gettext_lazy("the results file to import")
        )
        add_benchmark_argument(parser)
        parser.add_argument(
            "--model", default="", help=gettext_lazy("model name (default: the file's)")
        )
        parser.add_argument(
            "--language", default=None, help=gettext_lazy("default: source")
        )
        parser.add_argument(
            "--thinking",
            action="store_true",
            help=gettext_lazy("the run was made in thinking mode"),
        )
        parser.add_argument(
            "--category", default="", help=gettext_lazy("e.g. closed, open MoE")
        )
        parser.add_argument(
            "--judge-name",
            default=DEFAULT_JUDGE,
            help=gettext_lazy(
                "judge name recorded for the file's scores (default: %(default)s)"
            ),
        )
        parser.add_argument(
            "--sv-judge-name",
            default=DEFAULT_SV_JUDGE,
            help=gettext_lazy(
                "judge name recorded for the file's SV flags, not on a binary "
                "benchmark (default: %(default)s)"
            ),
        )
        parser.add_argument(
            "--format",
            choices=["", EVALUATE, INSPECT, LM_EVAL],
            default="",
            help=gettext_lazy("the file's format (default: detected from its content)"),
        )
        parser.add_argument(
            "--scorer",
            default="",
            help=gettext_lazy(
                "inspect: the scorer read; lm-eval: the metric (acc, acc_norm, …)"
            ),
        )
        parser.add_argument(
            "--map",
            default="",
            help=gettext_lazy(
                "value=score pairs, e.g. 'C=3,I=0,P=1,N=0' or 'P=pending'"
            ),
        )
        parser.add_argument(
            "--full",
            type=int,
            default=None,
            help=gettext_lazy(
                "what a value of 1.0 means on the benchmark's scale (numbers not "
                "in --map are multiplied by it and rounded)"
            ),
        )
        parser.add_argument(
            "--epoch",
            type=int,
            default=None,
            help=gettext_lazy("inspect, 0–3 scale: the epoch"),
        )
        parser.add_argument(
            "--ids",
            default="",
            help=gettext_lazy(
                "inspect: id, position or metadata.<key>; lm-eval: the doc key"
            ),
        )
        parser.add_argument(
            "--filter", default="", help=gettext_lazy("lm-eval: the filter to read")
        )
        parser.add_argument(
            "--results",
            type=Path,
            help=gettext_lazy("lm-eval: results_*.json (names the model)"),
        )
        parser.add_argument(
            "--assume-no-violation",
            action="store_true",
            help=gettext_lazy(
                "inspect, lm-eval: the source had no safety check; record none "
                "rather than leaving the items SV pending"
            ),
        )

    def _choices(self, opts) -> Choices:
        values, problem = parse_map(opts["map"])
        if problem:
            raise CommandError(_("--map: %(problem)s") % {"problem": problem})
        results = b""
        if opts["results"]:
            try:
                results = opts["results"].read_bytes()
            except OSError as error:
                raise CommandError(
                    _("Cannot read %(file)s: %(error)s.")
                    % {"file": opts["results"], "error": error.strerror}
                ) from None
        return Choices(
            format=opts["format"],
            scorer=opts["scorer"],
            values=values,
            full=opts["full"],
            epoch=opts["epoch"],
            ids=opts["ids"],
            filter_name=opts["filter"],
            results=results,
            assume_no_violation=opts["assume_no_violation"],
        )

    def handle(self, *args, **opts):
        benchmark = benchmark_named(opts["benchmark"])
        path: Path = opts["file"]
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(
                _("Cannot read %(file)s: %(error)s.")
                % {"file": path, "error": error.strerror}
            ) from None
        choices = self._choices(opts)
        preview = preview_file(benchmark, data, choices)
        self.stdout.write(f"{path.name}: {FORMAT_NAMES[preview.format]}.")
        if preview.needs_map:
            self._show(preview)
        reader = make_reader(benchmark, data, choices)
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
            raise CommandError(
                _("%(file)s was rejected; nothing was imported:") % {"file": path}
                + "".join(f"\n  {line}" for line in rejected.lines())
            ) from None
        if run.binary:
            self.stdout.write(
                ngettext(
                    "Imported run %(id)s: %(run)s with %(answers)s answers (%(count)s "
                    "trial), %(pending)s pending.",
                    "Imported run %(id)s: %(run)s with %(answers)s answers (%(count)s "
                    "trials), %(pending)s pending.",
                    run.trials,
                )
                % {
                    "id": run.pk,
                    "run": run,
                    "answers": run.total_items,
                    "count": run.trials,
                    "pending": run.failed_count,
                }
            )
        else:
            matrix: ScoreMatrix = load_scores([run])
            metrics = matrix.metrics(0)
            self.stdout.write(
                _(
                    "Imported run %(id)s: %(run)s with %(items)s items — final "
                    "%(final)s, raw %(raw)s, %(pending)s pending."
                )
                % {
                    "id": run.pk,
                    "run": run,
                    "items": metrics.n_items,
                    "final": f"{metrics.final_mean:.3f}",
                    "raw": f"{metrics.raw_mean:.3f}",
                    "pending": metrics.n_pending,
                }
            )
        ignored = getattr(reader, "ignored", None)
        if ignored:
            listed = ", ".join(f"{name} ({n})" for name, n in sorted(ignored.items()))
            self.stdout.write(_("Scores not read: %(scores)s.") % {"scores": listed})

    def _show(self, preview) -> None:
        values = {
            "kind": _("scorer") if preview.format == INSPECT else _("metric"),
            "source": preview.source or _("(none chosen)"),
            "sources": ", ".join(preview.sources) or _("none"),
            "epochs": preview.epochs,
            "reducer": preview.reducer,
        }
        if preview.reducer:
            shown = _(
                "%(kind)s %(source)s of %(sources)s; epochs %(epochs)s, reduced by "
                "%(reducer)s"
            )
        else:
            shown = _("%(kind)s %(source)s of %(sources)s; epochs %(epochs)s")
        self.stdout.write(shown % values)
        for row in preview.rows:
            target = row.problem or (
                _("pending") if row.score is None else str(row.score)
            )
            self.stdout.write(f"  {row.value} ×{row.count} → {target}")
