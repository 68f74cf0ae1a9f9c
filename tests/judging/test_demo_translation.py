"""The demo seeder: simulated faithfulness reviews for the demo renderings and the
deliberately flawed renderings flagged into a review campaign, idempotently."""

import json
from pathlib import Path

from django.conf import settings

from annotation.models import Campaign, Task
from benchmark.actions import do_add_rendering_version, do_create_benchmark
from benchmark.models import Item, Rendering
from judging import demo_translation
from judging.models import FaithfulnessReview, TranslationRun
from judging.translation_report import translation_report

DEMO_ITEMS = Path(settings.BASE_DIR) / "benchmark" / "demo" / "items.jsonl"


def load_demo_items():
    benchmark = do_create_benchmark(name="Demo", slug="demo", is_demo=True)
    with DEMO_ITEMS.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            item = Item.objects.create(benchmark=benchmark, external_id=row["id"])
            for language, text in row["renderings"].items():
                do_add_rendering_version(
                    item,
                    language,
                    question=text["question"],
                    answer=text["answer"],
                    origin=(
                        Rendering.Origin.SOURCE
                        if language == "zh"
                        else Rendering.Origin.IMPORTED
                    ),
                    review_status=Rendering.ReviewStatus.APPROVED,
                )
    return benchmark


def test_seed_flags_the_flawed_renderings_and_is_idempotent(db):
    benchmark = load_demo_items()
    flawed = demo_translation.flawed_renderings()
    demo_translation.seed(benchmark)

    run = TranslationRun.objects.get(benchmark=benchmark)
    assert run.origin == TranslationRun.Origin.SIMULATED
    target_pairs = Rendering.objects.filter(
        item__benchmark=benchmark, is_current=True
    ).exclude(language="zh")
    assert run.total_tasks == target_pairs.count()
    for row in flawed:
        rendering = target_pairs.get(
            item__external_id=row["id"], language=row["language"]
        )
        assert rendering.origin == Rendering.Origin.MACHINE
        assert rendering.review_status == Rendering.ReviewStatus.FLAGGED
        review = FaithfulnessReview.objects.get(rendering=rendering)
        assert review.flagged_by_preservation, row["flaw"]
        assert review.score == row["faithfulness_score"]
    # The hand-written renderings pass the preservation check: nothing else is
    # flagged by it.
    assert FaithfulnessReview.objects.filter(
        run=run, flagged_by_preservation=True
    ).count() == len(flawed)
    assert (
        run.flagged
        == FaithfulnessReview.objects.filter(run=run)
        .exclude(flagged_by_score=False, flagged_by_preservation=False)
        .count()
    )
    assert len(flawed) <= run.flagged <= len(flawed) + 0.05 * run.total_tasks
    campaign = Campaign.objects.get(pk=run.review_campaign_id)
    assert campaign.kind == Campaign.Kind.TRANSLATION_REVIEW
    assert Task.objects.filter(campaign=campaign).count() == run.flagged

    summaries = {s.language: s for s in translation_report(benchmark)}
    assert sum(s.flagged for s in summaries.values()) == run.flagged
    assert sum(s.translated for s in summaries.values()) == run.total_tasks

    versions = Rendering.objects.filter(item__benchmark=benchmark).count()
    demo_translation.seed(benchmark)
    assert TranslationRun.objects.filter(benchmark=benchmark).count() == 1
    assert Rendering.objects.filter(item__benchmark=benchmark).count() == versions
