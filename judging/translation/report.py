"""The translation report: per target language, how many renderings were machine
translated and reviewed, how many passed automatically, how many were flagged and
why, what the human reviewers decided and how long they took.

`collect(benchmark)` reads the database into `PairOutcome`s (one per item × language,
from the latest faithfulness review); `summarise(pairs, seconds)` is pure;
`as_text` / `as_csv` format the result.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, fields

import numpy as np
from django.apps import apps

from benchmark.csv_writer import csv_text
from benchmark.models import Benchmark, Rendering
from judging.translation.models import FaithfulnessReview


class HumanOutcome:
    PENDING = "pending"
    APPROVED = "approved"
    EDITED = "edited"
    REJECTED = "rejected"


@dataclass(frozen=True)
class PairOutcome:
    """The latest review of one item's rendering in one language and where the
    item's text in that language stands now."""

    language: str
    score: int | None
    flagged_by_score: bool
    flagged_by_preservation: bool
    human: str  # HumanOutcome, for flagged pairs; "" for auto-approved ones


@dataclass(frozen=True)
class LanguageSummary:
    language: str
    translated: int
    auto_approved: int
    flagged: int
    flagged_percent: float
    flagged_by_score: int
    flagged_by_preservation: int
    flagged_by_both: int
    approved: int
    edited: int
    rejected: int
    awaiting_review: int
    scored: int
    mean_score: float | None
    reviewer_seconds: float | None
    reviewer_decisions: int


def human_outcome(reviewed: Rendering, current: Rendering | None) -> str:
    if current is None:
        return HumanOutcome.PENDING
    if current.review_status == Rendering.ReviewStatus.REJECTED:
        return HumanOutcome.REJECTED
    if current.pk != reviewed.pk and current.origin == Rendering.Origin.HUMAN_EDITED:
        return HumanOutcome.EDITED
    if current.review_status == Rendering.ReviewStatus.APPROVED:
        return HumanOutcome.APPROVED
    return HumanOutcome.PENDING


def collect(benchmark: Benchmark) -> list[PairOutcome]:
    latest: dict[tuple[int, str], FaithfulnessReview] = {}
    for review in (
        FaithfulnessReview.objects.filter(rendering__item__benchmark=benchmark)
        .select_related("rendering")
        .order_by("created_at", "id")
    ):
        latest[review.rendering.item_id, review.rendering.language] = review
    current = {
        (rendering.item_id, rendering.language): rendering
        for rendering in Rendering.objects.filter(
            item__benchmark=benchmark, is_current=True
        ).exclude(language=benchmark.source_language)
    }
    return [
        PairOutcome(
            language=language,
            score=review.score,
            flagged_by_score=review.flagged_by_score,
            flagged_by_preservation=review.flagged_by_preservation,
            human=(
                human_outcome(review.rendering, current.get((item_id, language)))
                if review.is_flagged
                else ""
            ),
        )
        for (item_id, language), review in latest.items()
    ]


def reviewer_seconds(benchmark: Benchmark) -> dict[str, list[float]]:
    """Seconds reviewers spent per translation-review decision, by language, from
    the annotation app's review decisions (latest submission per person)."""
    try:
        decision_model = apps.get_model("annotation", "ReviewDecision")
    except LookupError:
        return {}
    task_model = apps.get_model("annotation", "Task")
    rendering_of = dict(
        task_model.objects.filter(
            campaign__benchmark=benchmark, rendering__isnull=False
        ).values_list("pk", "rendering__language")
    )
    seconds: dict[str, list[float]] = defaultdict(list)
    for task_id, spent in decision_model.objects.filter(
        task_id__in=rendering_of, is_latest=True
    ).values_list("task_id", "seconds_spent"):
        seconds[rendering_of[task_id]].append(spent)
    return seconds


def summarise(
    pairs: list[PairOutcome], seconds: dict[str, list[float]] | None = None
) -> list[LanguageSummary]:
    seconds = seconds or {}
    by_language: dict[str, list[PairOutcome]] = defaultdict(list)
    for pair in pairs:
        by_language[pair.language].append(pair)
    summaries = []
    for language in sorted(by_language):
        rows = by_language[language]
        by_score = np.array([row.flagged_by_score for row in rows], dtype=bool)
        by_check = np.array([row.flagged_by_preservation for row in rows], dtype=bool)
        flagged = by_score | by_check
        humans = [row.human for row in rows if row.human]
        scores = np.array([row.score for row in rows if row.score is not None])
        spent = seconds.get(language, [])
        summaries.append(
            LanguageSummary(
                language=language,
                translated=len(rows),
                auto_approved=int((~flagged).sum()),
                flagged=int(flagged.sum()),
                flagged_percent=round(100 * float(flagged.mean()), 1),
                flagged_by_score=int(by_score.sum()),
                flagged_by_preservation=int(by_check.sum()),
                flagged_by_both=int((by_score & by_check).sum()),
                approved=humans.count(HumanOutcome.APPROVED),
                edited=humans.count(HumanOutcome.EDITED),
                rejected=humans.count(HumanOutcome.REJECTED),
                awaiting_review=humans.count(HumanOutcome.PENDING),
                scored=len(scores),
                mean_score=round(float(scores.mean()), 2) if len(scores) else None,
                reviewer_seconds=round(float(np.sum(spent)), 1) if spent else None,
                reviewer_decisions=len(spent),
            )
        )
    return summaries


def translation_report(benchmark: Benchmark) -> list[LanguageSummary]:
    return summarise(collect(benchmark), reviewer_seconds(benchmark))


COLUMNS = [field.name for field in fields(LanguageSummary)]


def as_rows(summaries: list[LanguageSummary]) -> list[dict]:
    return [asdict(summary) for summary in summaries]


def as_csv(summaries: list[LanguageSummary]) -> str:
    rows = (
        ["" if row[column] is None else row[column] for column in COLUMNS]
        for row in as_rows(summaries)
    )
    return csv_text(COLUMNS, rows, newline="\n")


def as_text(summaries: list[LanguageSummary]) -> str:
    if not summaries:
        return "No reviewed translations yet."
    header = (
        f"{'lang':<5}{'translated':>11}{'auto-ok':>9}{'flagged':>9}{'%':>7}"
        f"{'by score':>10}{'by check':>10}{'approved':>10}{'edited':>8}"
        f"{'rejected':>10}{'waiting':>9}{'mean':>7}{'review s':>10}"
    )
    lines = [header]
    for s in summaries:
        mean = f"{s.mean_score:.2f}" if s.mean_score is not None else "—"
        spent = f"{s.reviewer_seconds:.0f}" if s.reviewer_seconds is not None else "—"
        lines.append(
            f"{s.language:<5}{s.translated:>11}{s.auto_approved:>9}{s.flagged:>9}"
            f"{s.flagged_percent:>7.1f}{s.flagged_by_score:>10}"
            f"{s.flagged_by_preservation:>10}{s.approved:>10}{s.edited:>8}"
            f"{s.rejected:>10}{s.awaiting_review:>9}{mean:>7}{spent:>10}"
        )
    return "\n".join(lines)
