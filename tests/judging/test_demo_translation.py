"""The demo seeder: simulated faithfulness reviews for the demo renderings and the
deliberately flawed renderings flagged into a review campaign, idempotently."""

import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from annotation.actions import do_open_translation_review
from annotation.models import Campaign, Task
from benchmark.actions import do_add_rendering_version, do_create_benchmark
from benchmark.exporting import write_export
from benchmark.management.commands import load_demo
from benchmark.models import Benchmark, Item, Rendering
from judging.translation import demo as demo_translation
from judging.translation.models import FaithfulnessReview, TranslationRun
from judging.translation.report import translation_report
from tests.annotation.factories import take_next_task

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
    # The annotation app puts the flagged renderings into a review campaign.
    campaign = do_open_translation_review(run.pk)
    run.refresh_from_db()
    assert campaign.pk == run.review_campaign_id
    assert campaign.kind == Campaign.Kind.TRANSLATION_REVIEW
    assert Task.objects.filter(campaign=campaign).count() == run.flagged

    summaries = {s.language: s for s in translation_report(benchmark)}
    assert sum(s.flagged for s in summaries.values()) == run.flagged
    assert sum(s.translated for s in summaries.values()) == run.total_tasks

    versions = Rendering.objects.filter(item__benchmark=benchmark).count()
    demo_translation.seed(benchmark)
    assert TranslationRun.objects.filter(benchmark=benchmark).count() == 1
    assert Rendering.objects.filter(item__benchmark=benchmark).count() == versions


def test_load_demo_seeds_translations_reviewer_screen_and_release(db, client):
    call_command("load_demo", "--allow-without-debug", stdout=io.StringIO())
    benchmark = Benchmark.objects.get(slug=load_demo.DEMO_SLUG)
    run = TranslationRun.objects.get(benchmark=benchmark)
    flawed = demo_translation.flawed_renderings()
    assert run.flagged >= len(flawed)

    # The reviewer screen shows the simulated faithfulness score and highlights.
    # load_demo creates the demo reviewer.
    client.force_login(get_user_model().objects.get(username="reviewer"))
    page = take_next_task(
        client, reverse("annotation:review", args=[run.review_campaign_id])
    )
    text = page.content.decode()
    assert page.status_code == 200
    assert "LLM faithfulness" in text and "No LLM faithfulness score" not in text

    # A release carries only approved renderings: the flawed ones stay out.
    out = io.StringIO()
    report = write_export(benchmark, out, "jsonl", release=True)
    released = {
        json.loads(line)["id"]: json.loads(line) for line in out.getvalue().splitlines()
    }
    for row in flawed:
        renderings = released[row["id"]]["renderings"]
        assert row["language"] not in renderings
        assert row["id"] in report.missing_approved[row["language"]]


@pytest.mark.browser
def test_demo_review_screen_shows_score_and_highlights(transactional_db, page):
    call_command("load_demo", "--allow-without-debug", stdout=io.StringIO())
    run = TranslationRun.objects.get(benchmark__slug=load_demo.DEMO_SLUG)
    page.goto("/login/")
    page.get_by_label("Username").fill("reviewer")
    page.get_by_label("Password").fill(load_demo.DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login/" not in url)
    page.goto(reverse("annotation:review", args=[run.review_campaign_id]))
    page.locator(".q-faith").wait_for()
    assert "LLM faithfulness" in page.locator(".q-faith").inner_text()
    page.screenshot(path="/tmp/translation_review_demo.png", full_page=True)


def test_run_page_rows_add_up_to_its_totals_and_show_a_rejection(db, client_for):
    import re

    from annotation.actions import do_submit_review
    from annotation.models import Assignment

    benchmark = load_demo_items()
    demo_translation.seed(benchmark)
    run = TranslationRun.objects.get(benchmark=benchmark)
    campaign = do_open_translation_review(run.pk)
    manager = client_for("manager")
    url = reverse("judging:translation_run", args=[run.pk])

    page = manager.get(url).content.decode()
    rows = re.findall(
        r'<tr data-language="(\w+)"><td>\w+</td>((?:\s*<td class="num">\d+</td>)+)',
        page,
    )
    assert [language for language, _ in rows] == run.languages
    per_language = [list(map(int, re.findall(r">(\d+)<", cells))) for _, cells in rows]
    totals = [sum(column) for column in zip(*per_language, strict=True)]
    shown = [
        int(re.search(rf'data-count="{key}">(\d+)<', page).group(1))
        for key in (
            "pending",
            "translated",
            "reviewed",
            "auto_approved",
            "flagged",
            "kept",
            "present",
            "failed",
            "unparseable",
        )
    ]
    assert shown == totals
    # The run's own counters agree with the rows.
    assert shown[1:5] == [run.translated, run.reviewed, run.auto_approved, run.flagged]
    assert all(row[1] > 0 for row in per_language)  # translated, per language

    reviewer = get_user_model().objects.get(username="reviewer")
    take_next_task(
        client_for("reviewer"), reverse("annotation:review", args=[campaign.pk])
    )
    task = Assignment.objects.get(user=reviewer, status=Assignment.Status.ACTIVE).task
    do_submit_review(task, reviewer, decision="rejected", reason="wrong unit")
    page = manager.get(url).content.decode()
    assert page.count('data-decision="rejected"') == 1
    summary = {s.language: s for s in translation_report(benchmark)}
    assert summary[task.rendering.language].rejected == 1
