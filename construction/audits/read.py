"""What the stage page, the audit screen and the comparison page read: an
audit's progress and its measures against people, a stage's versions, its
trials, two versions side by side and the latest dedup run's threshold sweep."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import Count, Exists, Max, OuterRef, Q

from construction.audits.actions import audit_queue
from construction.audits.stats import Comparison, StageMeasure, compare, measure
from construction.audits.stats import item_verdicts as verdicts_of
from construction.models import (
    AuditAnswer,
    AuditItem,
    Candidate,
    Stage,
    StageAudit,
    StageDecision,
    StageRun,
)
from reviewqueue import engine

OUTCOMES = [outcome.value for outcome in StageDecision.Outcome]
# Column headers, in the interface language (lazy: read per request).
OUTCOME_LABELS = [outcome.label for outcome in StageDecision.Outcome]
DIFFERENCES_SHOWN = 200


def _answered():
    return Exists(AuditAnswer.objects.filter(item=OuterRef("pk")))


def _shown(items):
    return items.select_related("decision__candidate__source")


def unanswered(audit: StageAudit):
    """The items nobody has answered yet, in the audit's order: what the review
    queue hands out, one reviewer per item (reviewqueue leases)."""
    return audit.items.filter(~_answered()).order_by("position")


def shown_item(audit: StageAudit, item_id: int | None) -> AuditItem | None:
    if item_id is None:
        return None
    return _shown(audit.items.filter(pk=item_id)).first()


def answered_item(audit: StageAudit, user, item_id: int) -> AuditItem | None:
    """An item of the audit the user has answered (to look at again)."""
    items = audit.items.filter(pk=item_id, answers__reviewer=user).distinct()
    return _shown(items).first()


def latest_answer(item: AuditItem, user) -> AuditAnswer | None:
    return item.answers.filter(reviewer=user).order_by("-id").first()


def previous_item_id(audit: StageAudit, user, before: AuditItem | None) -> int | None:
    """The item the user answered last before `before` (or last of all)."""
    return engine.previous(
        engine.done_by(audit_queue(audit.pk), user), before.pk if before else None
    )


@dataclass(frozen=True)
class AuditProgress:
    items: int
    answered: int  # items with at least one answer

    @property
    def left(self) -> int:
        return self.items - self.answered


def audit_progress(audit: StageAudit) -> AuditProgress:
    counts = audit.items.aggregate(
        items=Count("pk"), answered=Count("pk", filter=_answered())
    )
    return AuditProgress(counts["items"], counts["answered"])


def _with_progress(audits):
    """Audits annotated with their item and answered-item counts, in one query."""
    return audits.annotate(
        item_count=Count("items", distinct=True),
        answered_count=Count(
            "items", filter=Q(items__answers__isnull=False), distinct=True
        ),
    )


def audit_measure(audit: StageAudit) -> StageMeasure:
    """The stage against people on this audit's items: each reviewer's latest
    answer per item, the majority per item."""
    items = list(
        audit.items.order_by("position").values_list("pk", "decision__outcome")
    )
    position = {pk: index for index, (pk, _) in enumerate(items)}
    latest: dict[tuple[int, int], bool] = {}
    for item_id, reviewer_id, agrees in (
        AuditAnswer.objects.filter(item__audit=audit)
        .order_by("id")
        .values_list("item_id", "reviewer_id", "agrees")
    ):
        latest[item_id, reviewer_id] = agrees
    verdicts = verdicts_of(
        [position[item_id] for item_id, _ in latest],
        list(latest.values()),
        len(items),
    )
    rejected = [outcome == StageDecision.Outcome.REJECT for _, outcome in items]
    return measure(rejected, verdicts)


def stage_audits(benchmark_id: int, stage: str) -> list[dict]:
    audits = StageAudit.objects.filter(benchmark_id=benchmark_id, stage=stage)
    return [
        {
            "audit": audit,
            "progress": AuditProgress(audit.item_count, audit.answered_count),
            "measure": audit_measure(audit),
        }
        for audit in _with_progress(audits.select_related("created_by"))
    ]


DISAGREEMENTS_SHOWN = 50


def disagreements(benchmark_id: int, stage: str) -> list[AuditAnswer]:
    """The newest answers, on the stage's audits, in which a reviewer (by their
    latest answer on the item) disagrees with the stage, with the verdict."""
    latest: dict[tuple[int, int], AuditAnswer] = {}
    for answer in (
        AuditAnswer.objects.filter(
            item__audit__benchmark_id=benchmark_id, item__audit__stage=stage
        )
        .select_related("reviewer", "item__decision__candidate")
        .order_by("id")
    ):
        latest[answer.item_id, answer.reviewer_id] = answer
    found = [answer for answer in latest.values() if not answer.agrees]
    return sorted(found, key=lambda answer: -answer.pk)[:DISAGREEMENTS_SHOWN]


def open_audits() -> list[tuple[StageAudit, AuditProgress]]:
    """Every audit with its progress, those with items left first."""
    rows = [
        (audit, AuditProgress(audit.item_count, audit.answered_count))
        for audit in _with_progress(StageAudit.objects.select_related("benchmark"))
    ]
    return sorted(rows, key=lambda row: (row[1].left == 0, -row[0].pk))


def stage_versions(benchmark_id: int, stage: str) -> list[dict]:
    """Each prompt version of the stage with its automated decisions by
    outcome, the newest version first."""
    counts: dict[str, Counter] = {}
    newest: Counter = Counter()
    for row in (
        StageDecision.objects.filter(
            candidate__source__benchmark_id=benchmark_id,
            stage=stage,
            decided_by__isnull=True,
        )
        .values("prompt_version", "outcome")
        .annotate(n=Count("pk"), last=Max("pk"))
    ):
        version = row["prompt_version"]
        counts.setdefault(version, Counter())[row["outcome"]] = row["n"]
        newest[version] = max(newest[version], row["last"])
    return [
        {
            "version": version,
            "counts": [counts[version][outcome] for outcome in OUTCOMES],
            "total": sum(counts[version].values()),
        }
        for version in sorted(counts, key=lambda version: -newest[version])
    ]


def stage_trials(benchmark_id: int, stage: str):
    return StageRun.objects.filter(
        benchmark_id=benchmark_id, stage=stage, trial_size__gt=0
    ).select_related("template", "endpoint")


@dataclass(frozen=True)
class VersionComparison:
    comparison: Comparison
    rows: list[tuple[str, list[int]]]  # (outcome of A, counts per outcome of B)
    differences: list[tuple[Candidate, StageDecision, StageDecision]]
    total_differences: int


def compare_versions(
    benchmark_id: int, stage: str, version_a: str, version_b: str
) -> VersionComparison:
    """The two versions' decisions on the candidates both decided."""
    decisions = StageDecision.objects.filter(
        candidate__source__benchmark_id=benchmark_id, stage=stage
    )
    a = {d.candidate_id: d for d in decisions.filter(prompt_version=version_a)}
    b = {d.candidate_id: d for d in decisions.filter(prompt_version=version_b)}
    common = sorted(a.keys() & b.keys())
    result = compare(
        [a[pk].outcome for pk in common], [b[pk].outcome for pk in common], OUTCOMES
    )
    shown = [common[index] for index in result.differ[:DIFFERENCES_SHOWN]]
    candidates = Candidate.objects.in_bulk(shown)
    return VersionComparison(
        comparison=result,
        rows=[
            (outcome, result.table[index].tolist())
            for index, outcome in enumerate(OUTCOMES)
        ],
        differences=[(candidates[pk], a[pk], b[pk]) for pk in shown],
        total_differences=len(result.differ),
    )


def latest_sweep(benchmark_id: int) -> tuple[StageRun | None, list[dict]]:
    """The newest dedup run's threshold sweep, each sample pair with its two
    questions."""
    run = (
        StageRun.objects.filter(benchmark_id=benchmark_id, stage=Stage.DEDUP)
        .exclude(sweep=[])
        .select_related("endpoint")
        .first()
    )
    if run is None:
        return None, []
    ids = {pk for row in run.sweep for a, b, _ in row["pairs"] for pk in (a, b)}
    questions = dict(Candidate.objects.filter(pk__in=ids).values_list("pk", "question"))
    rows = [
        {
            **row,
            "pairs": [
                (a, questions.get(a, ""), b, questions.get(b, ""), similarity)
                for a, b, similarity in row["pairs"]
            ],
        }
        for row in run.sweep
    ]
    return run, rows
