"""An evaluation run read from the database into the plain data the log writers
take (judging.interop.inspect_log)."""

from benchmark.models import Rendering
from judging.evaluation.models import AnswerGrade, EvaluationRun, Judgment
from judging.interop.inspect_log import RunData, SampleData, eval_members, eval_zip

# An Inspect log's status (inspect_ai/log/_log.py EvalStatus) for a run's status.
LOG_STATUS = {
    EvaluationRun.Status.COMPLETE: "success",
    EvaluationRun.Status.CANCELLED: "cancelled",
    EvaluationRun.Status.ATTENTION: "error",
}


def _verdicts(response, run) -> tuple[Judgment | None, Judgment | None]:
    """The done verdicts of the judges the run is scored with, as its reports read
    them (judging.evaluation.scores.load_scores, without people's overrides): the
    rubric score (a binary run: the key-point verdict) and the SV flag."""
    rubric = safety = None
    for judgment in response.judgments.all():
        if judgment.status != Judgment.Status.DONE:
            continue
        if judgment.kind == run.verdict_kind and (
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


def _binary_verdict(response, rubric) -> tuple[bool | None, str]:
    """(correct, the answer read): an MC/TF answer's grade (flagged: no verdict),
    else the key-point judge's 0/1."""
    grade = getattr(response, "grade", None)
    if grade is not None:
        if grade.grade in (AnswerGrade.Grade.CORRECT, AnswerGrade.Grade.WRONG):
            return grade.grade == AnswerGrade.Grade.CORRECT, grade.extracted
        return None, grade.extracted
    if rubric is not None and rubric.score is not None:
        return bool(rubric.score), ""
    return None, ""


def _input(response, rendering) -> str | list[dict]:
    """The messages the model was sent when the call is kept, the imported
    sample's input, else the question."""
    if "input" in response.source_record:
        return response.source_record["input"]
    if response.call is not None and response.call.messages:
        return [
            {"role": m.get("role", "user"), "content": m.get("content", "")}
            for m in response.call.messages
        ]
    return rendering.question if rendering else ""


def _sample(response, run, rendering) -> SampleData:
    rubric, safety = _verdicts(response, run)
    score = rubric.score if rubric else None
    violation = safety.safety_violation if safety else None
    empty = not response.text.strip()
    final = None
    if score is not None and (violation is not None or empty):
        final = 0 if violation else score
    correct, answer = _binary_verdict(response, rubric) if run.binary else (None, "")
    source = response.source_record
    # An imported answer keeps the whole of what its scorer read; AnswerGrade
    # holds only its first 20 characters.
    answer = (source.get("score") or {}).get("answer") or answer
    tested_in = response.call.input_tokens if response.call else 0
    tested_out = response.call.output_tokens if response.call else 0
    usage = source.get("usage") or {}
    judge_calls = tuple(
        (verdict.call.model, verdict.call.input_tokens, verdict.call.output_tokens)
        for verdict in (rubric, safety)
        if verdict is not None and verdict.call is not None
    )
    return SampleData(
        item_id=response.item.external_id,
        input=_input(response, rendering),
        target=rendering.answer if rendering else "",
        target_value=source.get("target"),
        completion=response.text,
        reasoning=response.reasoning_text,
        score=score,
        judge_reason=rubric.reason if rubric else "",
        final=final,
        violation=violation,
        sv_reason=safety.reason if safety else "",
        input_tokens=tested_in or usage.get("input_tokens", 0),
        output_tokens=tested_out or usage.get("output_tokens", 0),
        metadata={
            **(source.get("metadata") or {}),
            "language": run.language,
            "status": response.status,
        },
        epoch=response.trial + 1,
        answer=answer,
        correct=correct,
        judge_calls=judge_calls,
    )


def run_data(run: EvaluationRun) -> RunData:
    responses = (
        run.responses.select_related("item", "rendering", "call", "grade")
        .prefetch_related("judgments__call")
        .order_by("trial", "item__external_id")
    )
    # A response keeps the rendering it answered; imported ones may have none, and
    # then the current text in the run's language stands for it.
    current = {
        r.item_id: r
        for r in Rendering.objects.filter(
            item__benchmark=run.benchmark, language=run.language, is_current=True
        )
    }
    samples = [
        _sample(response, run, response.rendering or current.get(response.item_id))
        for response in responses
    ]
    source = run.source_metadata
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
            **(source.get("metadata") or {}),
            "assay_run_id": run.pk,
            "language": run.language,
            "thinking": run.thinking,
            "judge": run.judge_name,
            "judge_prompt_version": run.judge_prompt_version,
            "sv_judge": run.sv_judge_name,
            "sv_prompt_version": run.sv_prompt_version,
            **({"imported_from": source} if source else {}),
        },
        samples=samples,
        binary=run.binary,
        epochs=run.trials,
        # Assay's accuracy over k trials is their mean; an imported log's own
        # reducer is named in `imported_from`.
        reducer="mean",
    )


def inspect_eval_file(run: EvaluationRun) -> bytes:
    return eval_zip(run_data(run))


def inspect_eval_members(run: EvaluationRun):
    """The `.eval` file's members, for a download streamed as it is written."""
    return eval_members(run_data(run))
