from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from benchmark.models import Benchmark
from judging.evaluation.actions import (
    EvaluationActionError,
    do_rejudge,
    do_start_evaluation,
)
from judging.evaluation.models import EvaluationRun
from judging.evaluation.pipeline import run_evaluation
from judging.llm.models import Endpoint
from judging.llm.prompts import JUDGE_SETS, PRESETS


class Command(AssayCommand):
    help = gettext_lazy(
        "Start an evaluation run (answer → judge → SV; on a binary benchmark answer "
        "→ rules or key-point judge, --trials times) on the LLM gateway, or re-judge "
        "an existing run's stored answers with --run."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument("--model", help=gettext_lazy("tested endpoint name"))
        parser.add_argument("--judge", help=gettext_lazy("rubric judge endpoint name"))
        parser.add_argument(
            "--sv-judge", help=gettext_lazy("safety-violation judge endpoint name")
        )
        parser.add_argument(
            "--language",
            choices=["zh", "en", "ru", "vi"],
            help=gettext_lazy(
                "the language the items are asked in (required for a new run)"
            ),
        )
        parser.add_argument(
            "--thinking",
            action="store_true",
            help=gettext_lazy("ask the tested model in thinking mode"),
        )
        parser.add_argument(
            "--category", default="", help=gettext_lazy("e.g. closed, open MoE")
        )
        parser.add_argument(
            "--limit", type=int, help=gettext_lazy("only the first N items")
        )
        parser.add_argument(
            "--preset",
            choices=sorted(PRESETS),
            help=gettext_lazy(
                "the preset's answer prompt, judge set and SV prompt (newest versions)"
            ),
        )
        parser.add_argument(
            "--judge-set",
            choices=sorted(JUDGE_SETS),
            help=gettext_lazy(
                "judge with the set's prompt for the run's language (also with --run)"
            ),
        )
        parser.add_argument(
            "--trials",
            type=int,
            default=1,
            help=gettext_lazy("binary benchmarks: times each item is asked (LPFQA: 3)"),
        )
        parser.add_argument(
            "--run",
            type=int,
            help=gettext_lazy(
                "re-judge this run's stored answers (with --judge / --sv-judge), or "
                "resume it"
            ),
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help=gettext_lazy(
                "run the stages in this process and wait, instead of queueing"
            ),
        )

    def handle(self, *args, **opts):
        benchmark = benchmark_named(opts["benchmark"])
        judge = self._endpoint(opts["judge"], "--judge")
        sv_judge = self._endpoint(opts["sv_judge"], "--sv-judge")
        try:
            if opts["run"]:
                run = EvaluationRun.objects.filter(
                    pk=opts["run"], benchmark=benchmark
                ).first()
                if run is None:
                    raise CommandError(
                        _("No run %(run)s in this benchmark.") % {"run": opts["run"]}
                    )
                run = do_rejudge(
                    run,
                    judge=judge,
                    sv_judge=sv_judge,
                    judge_set=opts["judge_set"] or "",
                    enqueue=not opts["wait"],
                )
            else:
                # A binary benchmark's judge is the key-point judge, needed only
                # for items other than MC/TF (the action says so), and no SV.
                binary = benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
                needed = [("--model", opts["model"]), ("--language", opts["language"])]
                if not binary:
                    needed += [("--judge", judge), ("--sv-judge", sv_judge)]
                missing = [flag for flag, value in needed if not value]
                if missing:
                    raise CommandError(
                        _("A new run needs %(flags)s.") % {"flags": ", ".join(missing)}
                    )
                run = do_start_evaluation(
                    benchmark,
                    tested=self._endpoint(opts["model"], "--model"),
                    judge=judge,
                    sv_judge=sv_judge,
                    language=opts["language"],
                    thinking=opts["thinking"],
                    limit=opts["limit"],
                    trials=opts["trials"],
                    model_category=opts["category"],
                    enqueue=not opts["wait"],
                    **self._prompts(opts["preset"], opts["judge_set"]),
                )
        except EvaluationActionError as error:
            raise CommandError(str(error)) from None
        if not opts["wait"]:
            self.stdout.write(
                ngettext(
                    "Queued run %(id)s: %(run)s (%(count)s item). Follow it at "
                    "/judging/evaluation-runs/%(id)s/",
                    "Queued run %(id)s: %(run)s (%(count)s items). Follow it at "
                    "/judging/evaluation-runs/%(id)s/",
                    run.total_items,
                )
                % {"id": run.pk, "run": run, "count": run.total_items}
            )
            return
        stats = run_evaluation(run.pk)
        run.refresh_from_db()
        for stage, stage_stats in stats.items():
            self.stdout.write(
                _(
                    "%(stage)s: %(requested)s requested, %(made)s made, %(cached)s "
                    "from the record, %(ok)s ok, %(unparseable)s unparseable, "
                    "%(failed)s failed in %(seconds)s s"
                )
                % {
                    "stage": stage,
                    "requested": stage_stats.requested,
                    "made": stage_stats.made,
                    "cached": stage_stats.cached,
                    "ok": stage_stats.ok,
                    "unparseable": stage_stats.unparseable,
                    "failed": stage_stats.failed,
                    "seconds": f"{stage_stats.seconds:.1f}",
                }
            )
        self.stdout.write(
            _(
                "Run %(run)s %(status)s: %(answered)s answered, %(judged)s judged, "
                "%(checked)s SV-checked, %(pending)s pending."
            )
            % {
                "run": run.pk,
                "status": run.get_status_display().lower(),
                "answered": run.answered_count,
                "judged": run.judged_count,
                "checked": run.sv_checked_count,
                "pending": run.failed_count,
            }
        )

    def _prompts(self, preset_name, judge_set) -> dict:
        """do_start_evaluation's prompt arguments for --preset / --judge-set."""
        prompts = {"judge_set": judge_set or ""}
        if preset_name:
            preset = PRESETS[preset_name]
            templates = preset.templates()
            prompts["answer_template"] = templates["answer"]
            prompts["sv_template"] = templates["sv"]
            prompts["judge_set"] = judge_set or preset.judge_set
        return prompts

    def _endpoint(self, name, flag):
        if not name:
            return None
        endpoint = Endpoint.objects.filter(name=name).first()
        if endpoint is None:
            raise CommandError(
                _("%(flag)s: no endpoint named %(name)r.")
                % {"flag": flag, "name": name}
            )
        return endpoint
