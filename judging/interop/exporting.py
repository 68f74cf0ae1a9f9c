"""An evaluation run read from the database into the plain data the log writers
take (judging.interop.inspect_log)."""

from benchmark.models import Rendering
from judging.evaluation.models import EvaluationRun, Judgment
from judging.interop.inspect_log import RunData, SampleData, eval_zip

# An Inspect log's status (inspect_ai/log/_log.py EvalStatus) for a run's status.
LOG_STATUS = {
    EvaluationRun.Status.COMPLETE: "success",
    EvaluationRun.Status.CANCELLED: "cancelled",
    EvaluationRun.Status.ATTENTION: "error",
}


def _verdicts(response, run) -> tuple[Judgment | None, Judgment | None]:
    """The done verdicts of the judges the run is scored with, as its reports read
    them (judging.evaluation.scores.load_scores, without people's overrides)."""
    rubric = safety = None
    for judgment in response.judgments.all():
        if judgment.status != Judgment.Status.DONE:
            continue
        if judgment.kind == Judgment.Kind.RUBRIC and (
            judgment.judge_name,
            judgment.prompt_version,
        ) == (run.judge_name, run.judge_prompt_version):
            rubric = judgment
        if judgment.kind == Judgment.Kind.SAFETY and (
            judgment.judge_name,
            judgment.prompt_version,
        ) == (run.sv_judge_name, run.sv_prompt_version):
            safety = judgment
    return rubric, safety


def _input(response, rendering) -> str | list[dict]:
    """The messages the model was sent when the call is kept, else the question."""
    if response.call is not None and response.call.messages:
        return [
            {"role": m.get("role", "user"), "content": m.get("content", "")}
            for m in response.call.messages
        ]
    return rendering.question if rendering else ""


def run_data(run: EvaluationRun) -> RunData:
    responses = (
        run.responses.select_related("item", "rendering", "call")
        .prefetch_related("judgments")
        .order_by("item__external_id")
    )
    # A response keeps the rendering it answered; imported ones may have none, and
    # then the current text in the run's language stands for it.
    current = {
        r.item_id: r
        for r in Rendering.objects.filter(
            item__benchmark=run.benchmark, language=run.language, is_current=True
        )
    }
    samples = []
    for response in responses:
        rendering = response.rendering or current.get(response.item_id)
        rubric, safety = _verdicts(response, run)
        score = rubric.score if rubric else None
        violation = safety.safety_violation if safety else None
        empty = not response.text.strip()
        final = None
        if score is not None and (violation is not None or empty):
            final = 0 if violation else score
        samples.append(
            SampleData(
                item_id=response.item.external_id,
                input=_input(response, rendering),
                target=rendering.answer if rendering else "",
                completion=response.text,
                reasoning=response.reasoning_text,
                score=score,
                judge_reason=rubric.reason if rubric else "",
                final=final,
                violation=violation,
                sv_reason=safety.reason if safety else "",
                input_tokens=response.call.input_tokens if response.call else 0,
                output_tokens=response.call.output_tokens if response.call else 0,
                metadata={"language": run.language, "status": response.status},
            )
        )
    return RunData(
        run_id=str(run.pk),
        task=run.benchmark.slug,
        task_version=run.benchmark.version,
        model=run.model_name,
        created=run.created_at.isoformat(),
        started=run.started_at.isoformat() if run.started_at else "",
        completed=run.finished_at.isoformat() if run.finished_at else "",
        status=LOG_STATUS.get(run.status, "started"),
        judge=run.judge_name,
        sv_judge=run.sv_judge_name,
        metadata={
            "assay_run_id": run.pk,
            "language": run.language,
            "thinking": run.thinking,
            "judge": run.judge_name,
            "judge_prompt_version": run.judge_prompt_version,
            "sv_judge": run.sv_judge_name,
            "sv_prompt_version": run.sv_prompt_version,
        },
        samples=samples,
    )


def inspect_eval_file(run: EvaluationRun) -> bytes:
    return eval_zip(run_data(run))
