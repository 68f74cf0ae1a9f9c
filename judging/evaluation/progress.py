"""An evaluation run's counts and progress: which responses are scored, the counts
written to the run row as chunks go (`refresh_counts`, throttled by
`CountRefresher`) and the figures its live page polls (`run_progress`)."""

from __future__ import annotations

import time

from django.db.models import Count, Exists, OuterRef, Q

from judging.evaluation.models import (
    AnswerGrade,
    EvaluationRun,
    Judgment,
    Response,
)
from judging.runs.progress import run_timing

COUNT_REFRESH_SECONDS = 1.0


def _verdict_with_status(kind: str, judge_name: str, version: str, statuses):
    return Judgment.objects.filter(
        response=OuterRef("pk"),
        kind=kind,
        judge_name=judge_name,
        prompt_version=version,
        status__in=statuses,
    )


def usable_verdict(kind: str, judge_name: str, version: str):
    return _verdict_with_status(kind, judge_name, version, [Judgment.Status.DONE])


def failed_call(run: EvaluationRun) -> Q:
    """Responses a finished call left without what the run's metrics need: the
    answer call failed, or the run's judge or SV verdict failed or stayed
    unparseable. Nothing asks for them again until a manager retries them; the
    run's other unscored responses are still being asked while it runs."""
    unusable = [Judgment.Status.FAILED, Judgment.Status.UNPARSEABLE]
    judge_failed = Q(status=Response.Status.FAILED) | Exists(
        _verdict_with_status(
            run.verdict_kind, run.judge_name, run.judge_prompt_version, unusable
        )
    )
    if run.binary:
        return judge_failed
    return judge_failed | Exists(
        _verdict_with_status(
            Judgment.Kind.SAFETY, run.sv_judge_name, run.sv_prompt_version, unusable
        )
    )


class CountRefresher:
    """Refresh the run's counters at most once per COUNT_REFRESH_SECONDS while a
    stage writes results (the page polls every 2 s; counting after every batch
    would slow the writes)."""

    def __init__(self, run: EvaluationRun):
        self.run = run
        self.last = 0.0

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last >= COUNT_REFRESH_SECONDS:
            self.last = now
            refresh_counts(self.run)


def scored(run: EvaluationRun) -> Q:
    """Responses with every verdict their score needs.

    0–3 runs: the rubric verdict and the SV verdict (or none needed: an empty or
    invalid answer). Binary runs: an MC/TF answer once graded (flagged ones too:
    an outcome, counted apart), the others once the key-point judge has given its
    verdict."""
    verdict = Exists(
        usable_verdict(run.verdict_kind, run.judge_name, run.judge_prompt_version)
    )
    if run.binary:
        # A provider's refusal is an outcome too: never asked again.
        return (
            Q(Exists(AnswerGrade.objects.filter(response=OuterRef("pk"))))
            | Q(verdict)
            | Q(status=Response.Status.REFUSED)
        )
    sv_done = Exists(
        usable_verdict(Judgment.Kind.SAFETY, run.sv_judge_name, run.sv_prompt_version)
    )
    unanswered = Q(status__in=[Response.Status.EMPTY, Response.Status.INVALID])
    return Q(verdict) & (unanswered | Q(sv_done))


def refresh_counts(run: EvaluationRun, *, final: bool = False) -> None:
    """Write the stage counters the run page polls; `final` counts as for an ended
    run (the lifecycle then writes its end state).

    Pending (`failed_count`) are, while the run is active, the items a finished
    call left unscored (`failed_call`) — the others are still being asked — and,
    once it has ended, every unscored item."""
    responses = run.responses.filter(waived_at__isnull=True)
    counts = responses.aggregate(
        total=Count("pk"),
        answered=Count(
            "pk",
            filter=Q(
                status__in=[
                    Response.Status.ANSWERED,
                    Response.Status.EMPTY,
                    Response.Status.INVALID,
                    Response.Status.REFUSED,
                ]
            ),
        ),
    )
    judged = responses.filter(
        Exists(
            usable_verdict(run.verdict_kind, run.judge_name, run.judge_prompt_version)
        )
    ).count()
    sv_done = Exists(
        usable_verdict(Judgment.Kind.SAFETY, run.sv_judge_name, run.sv_prompt_version)
    )
    sv_checked = (
        0
        if run.binary
        else responses.filter(status=Response.Status.ANSWERED).filter(sv_done).count()
    )
    scored_items = scored(run)
    scored_count = responses.filter(scored_items).count()
    if final or not run.is_active:
        pending = counts["total"] - scored_count
    else:
        pending = responses.filter(failed_call(run)).exclude(scored_items).count()
    fields = {
        "total_items": counts["total"],
        "answered_count": counts["answered"],
        "judged_count": judged,
        "sv_checked_count": sv_checked,
        "scored_count": scored_count,
        "failed_count": pending,
    }
    EvaluationRun.objects.filter(pk=run.pk).exclude(
        status=EvaluationRun.Status.CANCELLED
    ).update(**fields)


def event_counts(run: EvaluationRun) -> dict:
    """The counts a run's end event carries. The run's counters leave waived items
    out (they leave every metric); the event says how many there were, out of the
    run's whole total."""
    waived = run.responses.filter(waived_at__isnull=False).count()
    return {
        "total_items": run.total_items + waived,
        "scored": run.scored_count,
        "pending": run.failed_count,
        "waived": waived,
    }


def run_progress(run: EvaluationRun, now=None) -> dict:
    """The run's item counters, calls, tokens and cost plus rate and ETA, as the run
    page shows them. The ETA extrapolates the pace of finished items."""
    return {
        "total": run.total_items,
        "finished": run.finished_items,
        "scored": run.scored_count,
        "pending": run.failed_count,
        "open": run.open_items,
        "calls": run.made_calls,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "cost": run.cost,
        **run_timing(
            run,
            remaining=run.open_items,
            finished=run.finished_items,
            calls_made=run.made_calls,
            now=now,
        ),
    }
