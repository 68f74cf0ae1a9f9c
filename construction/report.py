"""What the construction page reads: each stage's latest decision per candidate
counted by source kind (for construction.funnel), the reject reasons, a stage
run's progress, and the post-processing flags waiting for review."""

from __future__ import annotations

from collections import Counter, defaultdict

from benchmark.textdiff import diff_segments
from construction.dangling import Hit, segments
from construction.funnel import FunnelRow, funnel
from construction.models import (
    STAGE_ORDER,
    Candidate,
    Generation,
    Source,
    Stage,
    StageDecision,
    StageRun,
)
from construction.pipeline import FLAGGED_FIELDS, finished_units
from judging.runs.progress import run_timing

REJECTS_SHOWN = 50


def decision_counts(benchmark_id: int) -> Counter:
    """(stage, source kind, outcome) → candidates whose latest decision in the
    stage (over every prompt version) that is."""
    latest: dict[tuple[int, str], tuple[str, str]] = {}
    for candidate_id, stage, kind, outcome in (
        StageDecision.objects.filter(candidate__source__benchmark_id=benchmark_id)
        .order_by("id")
        .values_list("candidate_id", "stage", "candidate__source__kind", "outcome")
    ):
        latest[candidate_id, stage] = (kind, outcome)
    return Counter(
        (stage, kind, outcome) for (_, stage), (kind, outcome) in latest.items()
    )


def funnel_rows(benchmark_id: int) -> list[FunnelRow]:
    return funnel(decision_counts(benchmark_id), STAGE_ORDER, Source.Kind.values)


def reject_reasons(benchmark_id: int) -> list[tuple[str, int, list[StageDecision]]]:
    """(stage label, rejects, the newest REJECTS_SHOWN) per stage with rejects."""
    decisions = StageDecision.objects.filter(
        candidate__source__benchmark_id=benchmark_id,
        outcome=StageDecision.Outcome.REJECT,
    )
    totals = Counter(decisions.values_list("stage", flat=True))
    shown = defaultdict(list)
    for stage in totals:
        shown[stage] = list(
            decisions.filter(stage=stage)
            .select_related("candidate")
            .order_by("-id")[:REJECTS_SHOWN]
        )
    return [
        (Stage(stage).label, totals[stage], shown[stage])
        for stage in STAGE_ORDER
        if stage in totals
    ]


def refined_candidates(benchmark_id: int):
    """The refine decisions of deep verification, newest first: each candidate's
    page shows its answer's versions and what changed."""
    return (
        StageDecision.objects.filter(
            candidate__source__benchmark_id=benchmark_id,
            stage=Stage.DEEP,
            outcome=StageDecision.Outcome.REFINE,
        )
        .select_related("candidate")
        .order_by("-id")
    )


def pending_generations(benchmark_id: int):
    return Generation.objects.filter(
        source__benchmark_id=benchmark_id, status=Generation.Status.PENDING
    ).select_related("source")


def run_progress(run: StageRun) -> dict:
    finished, pending = finished_units(run)
    # Units served from the call record cost nothing and say nothing of the pace.
    made = finished - run.cached_calls if run.stage != Stage.DEDUP else 0
    return {
        "total": run.total_units,
        "finished": finished,
        "pending": pending,
        "open": max(run.total_units - finished, 0),
        **run_timing(
            run,
            remaining=max(run.total_units - finished, 0),
            finished=finished,
            calls_made=max(made, 0),
        ),
    }


def pending_flags(benchmark_id: int):
    """The post-processing decisions waiting for a person."""
    return StageDecision.objects.filter(
        candidate__source__benchmark_id=benchmark_id,
        stage=Stage.POST,
        outcome=StageDecision.Outcome.PENDING,
    )


def flags_to_review(benchmark_id: int) -> list[dict]:
    """The flags waiting for a person, oldest first, each with its question and
    answer cut at the matched phrases for highlighting."""
    flags = (
        pending_flags(benchmark_id).select_related("candidate__source").order_by("id")
    )
    rows = []
    for decision in flags:
        found = decision.evidence.get("dangling", {})
        candidate = decision.candidate
        rows.append(
            {
                "decision": decision,
                "candidate": candidate,
                **{
                    field: segments(
                        getattr(candidate, field),
                        [Hit(*hit) for hit in found.get(field, [])],
                    )
                    for field in FLAGGED_FIELDS
                },
            }
        )
    return rows


def answer_history(candidate: Candidate) -> list[dict]:
    """The candidate's reference-answer versions, newest first, each refined one
    with what it changed from the version before and the decision that made it."""
    versions = list(
        candidate.answer_versions.select_related("decision").order_by("version")
    )
    rows = []
    for before, version in zip([None, *versions], versions, strict=False):
        rows.append(
            {
                "version": version,
                "diff": diff_segments(before.reference_answer, version.reference_answer)
                if before is not None
                else None,
            }
        )
    return rows[::-1]
