"""Demo: a simulated translation run on the demo benchmark, so the translation report
and the translation-review queue have content without an API key.

Every target rendering gets a simulated faithfulness review (seeded: mostly 5, about
1.5% scored 4, as in the paper's 1–2.4% flag rates) and the real preservation check.
The deliberately flawed renderings in benchmark/demo/flawed_translations.jsonl (a
changed number, a converted unit, a missing standard id …) are added as machine
versions with the scores written there, so they are flagged. Everything is marked
simulated; `seed` does nothing the second time.
"""

import json
import random
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from benchmark.actions import do_add_rendering_version
from benchmark.models import Benchmark, Rendering
from judging.translation.models import (
    FaithfulnessReview,
    TranslationRun,
    TranslationTask,
)
from judging.translation.pipeline import do_record_review

FLAWED_TRANSLATIONS = (
    Path(settings.BASE_DIR) / "benchmark" / "demo" / "flawed_translations.jsonl"
)
REVIEWER_NAME = "simulated reviewer"
PROMPT_VERSION = "simulated"
LOWER_SCORE_RATE = 0.015
NOTE = "Simulated (demo): "


def flawed_renderings(path: Path = FLAWED_TRANSLATIONS) -> list[dict]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@transaction.atomic
def seed(
    benchmark: Benchmark, *, flawed_path: Path = FLAWED_TRANSLATIONS
) -> TranslationRun:
    existing = TranslationRun.objects.filter(
        benchmark=benchmark, origin=TranslationRun.Origin.SIMULATED
    ).first()
    if existing is not None:
        return existing
    now = timezone.now()
    run = TranslationRun.objects.create(
        benchmark=benchmark,
        languages=list(benchmark.target_languages),
        origin=TranslationRun.Origin.SIMULATED,
        status=TranslationRun.Status.COMPLETE,
        started_at=now,
        finished_at=now,
    )
    current = {
        (rendering.item.external_id, rendering.language): rendering
        for rendering in Rendering.objects.filter(
            item__benchmark=benchmark, is_current=True
        )
        .select_related("item")
        .order_by("item__external_id", "language")
    }
    flawed = {
        (row["id"], row["language"]): row
        for row in flawed_renderings(flawed_path)
        if (row["id"], benchmark.source_language) in current
        and (row["id"], row["language"]) in current
    }
    rng = random.Random(f"{benchmark.slug}-translation-demo")
    reviewed = []
    for (external_id, language), rendering in current.items():
        if language not in run.languages:
            continue
        source = current[external_id, benchmark.source_language]
        row = flawed.get((external_id, language))
        if row:
            rendering = do_add_rendering_version(
                rendering.item,
                language,
                question=row["question"],
                answer=row["answer"],
                origin=Rendering.Origin.MACHINE,
                review_status=Rendering.ReviewStatus.PENDING,
                note=f"{NOTE}deliberately flawed machine translation ({row['flaw']})",
            )
            score, reason = row["faithfulness_score"], row["reason"]
        elif rng.random() < LOWER_SCORE_RATE:
            score, reason = 4, "Simulated: a minor wording issue to check."
        else:
            score, reason = 5, "Simulated: faithful."
        reviewed.append(
            do_record_review(
                rendering,
                source,
                run=run,
                reviewer_name=REVIEWER_NAME,
                prompt_version=PROMPT_VERSION,
                score=score,
                reason=reason,
                status=FaithfulnessReview.Status.DONE,
                threshold=run.approve_threshold,
                note_prefix=NOTE,
            )
        )
    TranslationTask.objects.bulk_create(
        TranslationTask(
            run=run,
            item_id=review.rendering.item_id,
            language=review.rendering.language,
            stage=TranslationTask.Stage.REVIEWED,
            outcome=(
                TranslationTask.Outcome.FLAGGED
                if review.is_flagged
                else TranslationTask.Outcome.AUTO_APPROVED
            ),
            rendering=review.rendering,
        )
        for review in reviewed
    )
    run.total_tasks = run.translated = run.reviewed = len(reviewed)
    run.flagged = sum(review.is_flagged for review in reviewed)
    run.auto_approved = run.total_tasks - run.flagged
    run.save(
        update_fields=[
            "total_tasks",
            "translated",
            "reviewed",
            "flagged",
            "auto_approved",
        ]
    )
    return run
