"""What a translation run's page shows: its counts per language and in total, read
from the tasks' stages and outcomes (one source, so the totals are the sums of the
rows), and its flagged renderings with where each stands after human review."""

from __future__ import annotations

from django.db.models import Count

from benchmark.models import Rendering
from judging.translation.models import (
    FaithfulnessReview,
    TranslationRun,
    TranslationTask,
)
from judging.translation.report import human_outcome

Stage = TranslationTask.Stage
Outcome = TranslationTask.Outcome

# Column -> the (stage, outcome) pairs it counts; "translated" counts every task
# that got a translation, reviewed or not, as the run's counter does.
COUNTED = {
    "pending": lambda stage, outcome: stage == Stage.PENDING,
    "translated": lambda stage, outcome: stage in (Stage.TRANSLATED, Stage.REVIEWED),
    "reviewed": lambda stage, outcome: stage == Stage.REVIEWED,
    "auto_approved": lambda stage, outcome: outcome == Outcome.AUTO_APPROVED,
    "flagged": lambda stage, outcome: outcome == Outcome.FLAGGED,
    "kept": lambda stage, outcome: stage == Stage.KEPT,
    "present": lambda stage, outcome: stage == Stage.PRESENT,
    "failed": lambda stage, outcome: stage == Stage.FAILED,
    "unparseable": lambda stage, outcome: stage == Stage.UNPARSEABLE,
}


def language_counts(run: TranslationRun) -> tuple[dict[str, dict], dict[str, int]]:
    """({language: {column: count}}, totals) for the run's tasks."""
    per_language = {language: dict.fromkeys(COUNTED, 0) for language in run.languages}
    for row in (
        run.tasks.order_by()
        .values("language", "stage", "outcome")
        .annotate(n=Count("id"))
    ):
        counts = per_language.setdefault(row["language"], dict.fromkeys(COUNTED, 0))
        for column, counts_it in COUNTED.items():
            if counts_it(row["stage"], row["outcome"]):
                counts[column] += row["n"]
    totals = {
        column: sum(counts[column] for counts in per_language.values())
        for column in COUNTED
    }
    return per_language, totals


def flagged_reviews(run: TranslationRun, limit: int) -> tuple[list[dict], int]:
    """The run's first `limit` flagged reviews, each with the reviewer's outcome
    (approved, edited, rejected or pending), and how many there are."""
    flagged = (
        FaithfulnessReview.objects.filter(run=run)
        .exclude(flagged_by_score=False, flagged_by_preservation=False)
        .select_related("rendering__item")
        .order_by("rendering__item__external_id", "rendering__language")
    )
    shown = list(flagged[:limit])
    current = {
        (rendering.item_id, rendering.language): rendering
        for rendering in Rendering.objects.filter(
            item_id__in={review.rendering.item_id for review in shown},
            is_current=True,
        )
    }
    rows = [
        {
            "review": review,
            "decision": human_outcome(
                review.rendering,
                current.get((review.rendering.item_id, review.rendering.language)),
            ),
        }
        for review in shown
    ]
    return rows, flagged.count()
