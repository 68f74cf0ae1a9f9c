"""People override a judge's verdict on a response (and revert an override):
append-only `ScoreOverride` rows with the judge's verdict copied in; the
`Judgment` is never touched, and the run's scores move (its `scores_version`),
so every cached report reads the override."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from judging.evaluation.actions import EvaluationActionError
from judging.evaluation.models import (
    EvaluationRun,
    Judgment,
    Response,
    ScoreOverride,
)
from judging.evaluation.pipeline import (
    scores_changed,
    warm_leaderboard,
)


def _run_judge(run: EvaluationRun, kind: str) -> tuple[str, str]:
    """(judge name, prompt version) whose verdicts of `kind` the run's metrics use."""
    if kind == Judgment.Kind.RUBRIC:
        return run.judge_name, run.judge_prompt_version
    return run.sv_judge_name, run.sv_prompt_version


def _judge_verdict(response: Response, kind: str) -> Judgment | None:
    name, version = _run_judge(response.run, kind)
    return Judgment.objects.filter(
        response=response,
        kind=kind,
        judge_name=name,
        prompt_version=version,
        status=Judgment.Status.DONE,
    ).first()


def _latest_override(response: Response, kind: str) -> ScoreOverride | None:
    return ScoreOverride.objects.filter(
        response=response, kind=kind, is_latest=True
    ).first()


def _check_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise EvaluationActionError(_("Say why: a reason is required."))
    return reason


def _check_kind(kind: str) -> None:
    if kind not in {Judgment.Kind.RUBRIC, Judgment.Kind.SAFETY}:
        raise EvaluationActionError(
            _("Choose the verdict to override: rubric (score) or safety (SV flag).")
        )


def check_override_score(
    response: Response, kind: str, value, *, reason: str
) -> tuple[Judgment, str]:
    """Validate an override; returns the judge's verdict it replaces and the
    cleaned reason. A rubric `value` is an int 0–3, a safety one a bool."""
    _check_kind(kind)
    if kind == Judgment.Kind.RUBRIC:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
            raise EvaluationActionError(_("A score is a whole number from 0 to 3."))
    elif not isinstance(value, bool):
        raise EvaluationActionError(_("A safety verdict is violation or no violation."))
    reason = _check_reason(reason)
    if response.status != Response.Status.ANSWERED:
        raise EvaluationActionError(
            _(
                "Only answered responses carry a judge's verdict; an empty or invalid "
                "answer scores 0 and a pending one has nothing to override."
            )
        )
    if response.waived_at is not None:
        raise EvaluationActionError(_("A waived item is left out of every metric."))
    judgment = _judge_verdict(response, kind)
    if judgment is None:
        # An override changes a verdict; a missing one is retried or waived.
        raise EvaluationActionError(
            _(
                "The run's judge has given no verdict on this response yet: retry or "
                "waive the pending item instead."
            )
        )
    return judgment, reason


@transaction.atomic
def do_override_score(
    response: Response, kind: str, value, *, user, reason: str
) -> ScoreOverride:
    """Replace the run's judge's rubric score (`value` 0–3) or SV flag (`value`
    True/False) on `response` with a person's, keeping the judge's verdict and
    every earlier override (judging.evaluation.models.ScoreOverride)."""
    # The response row's lock serialises overrides of one response, so exactly one
    # row stays latest per kind.
    response = (
        Response.objects.select_for_update(of=("self",))
        .select_related("run")
        .get(pk=response.pk)
    )
    judgment, reason = check_override_score(response, kind, value, reason=reason)
    ScoreOverride.objects.filter(response=response, kind=kind, is_latest=True).update(
        is_latest=False
    )
    override = ScoreOverride.objects.create(
        response=response,
        kind=kind,
        score=value if kind == Judgment.Kind.RUBRIC else None,
        safety_violation=value if kind == Judgment.Kind.SAFETY else None,
        **_judge_copy(judgment),
        user=user,
        reason=reason,
    )
    _scores_overridden(response.run)
    return override


@transaction.atomic
def do_revert_override(
    response: Response, kind: str, *, user, reason: str
) -> ScoreOverride:
    """Let the judge's verdict count again: a new history row that `reverts`, the
    earlier overrides kept."""
    response = (
        Response.objects.select_for_update(of=("self",))
        .select_related("run")
        .get(pk=response.pk)
    )
    _check_kind(kind)
    reason = _check_reason(reason)
    latest = _latest_override(response, kind)
    if latest is None or latest.reverts:
        raise EvaluationActionError(
            _("No override of the judge's verdict is in force on this response.")
        )
    name, version = _run_judge(response.run, kind)
    judgment = _judge_verdict(response, kind)
    latest.is_latest = False
    latest.save(update_fields=["is_latest"])
    override = ScoreOverride.objects.create(
        response=response,
        kind=kind,
        reverts=True,
        **(
            _judge_copy(judgment)
            if judgment
            else {"judge_name": name, "judge_prompt_version": version}
        ),
        user=user,
        reason=reason,
    )
    _scores_overridden(response.run)
    return override


def _judge_copy(judgment: Judgment) -> dict:
    """The judge's verdict as an override row keeps it: a re-judge later leaves the
    history saying what was overridden."""
    return {
        "judge_name": judgment.judge_name,
        "judge_prompt_version": judgment.prompt_version,
        "judge_score": judgment.score,
        "judge_safety_violation": judgment.safety_violation,
        "judge_reason": judgment.reason,
    }


def _scores_overridden(run: EvaluationRun) -> None:
    # The run's scores_version keys the cached leaderboard and score rows
    # (judging.evaluation.scores), so the next view reads the override.
    scores_changed(run)
    warm_leaderboard(run.benchmark_id, run.language)
