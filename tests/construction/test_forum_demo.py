"""The simulated LPFQA construction `load_demo` adds: seven posts through the
forum stages, the first batch verified and released, two items waiting for an
expert — and nothing more the second time; its pages in the browser."""

import base64

import pytest
from playwright.sync_api import expect

from benchmark.models import Item
from construction.demo import forum as forum_demo
from construction.expert.actions import waiting
from construction.models import Benchmark, StageDecision
from construction.report import funnel_rows


def funnel(benchmark):
    return [
        (row.stage, (row.entered, row.passed, row.rejected, row.pending))
        for row in funnel_rows(benchmark.pk)
        if row.group == "all"
    ]


def ledger():
    return sorted(
        StageDecision.objects.values_list("candidate_id", "stage", "outcome", "reason")
    )


@pytest.mark.django_db
def test_the_forum_demo_is_built_once(personas):
    forum_demo.seed()
    first = ledger()
    forum_demo.seed()
    assert ledger() == first
    benchmark = Benchmark.objects.get(slug=forum_demo.FORUM_SLUG)
    assert funnel(benchmark) == [
        ("extract_qa", (6, 6, 0, 0)),
        ("dedup", (0, 0, 0, 0)),
        ("qa_filter", (6, 5, 1, 0)),
        ("convert", (5, 5, 0, 0)),
        ("expert", (5, 3, 0, 2)),
        ("released", (3, 3, 0, 0)),
    ]
    items = Item.objects.filter(benchmark=benchmark, status="active")
    assert sorted(items.values_list("format", flat=True)) == [
        "multiple_choice",
        "multiple_choice",
        "short_answer",
    ]
    assert waiting(benchmark.pk).count() == 2
    edited = StageDecision.objects.get(stage="expert", outcome="refine")
    assert edited.decided_by == personas["expert"]
    assert edited.evidence["after"]["question"].endswith("(Give the reason.)")
    (shot,) = benchmark.sources.get(fields__post_id="3305").fields["images"]
    assert base64.b64decode(shot.partition(",")[2]).startswith(b"\x89PNG")


@pytest.mark.browser
def test_the_forum_demo_in_the_browser(page, login, personas):
    forum_demo.seed()
    login("manager")
    page.goto(f"/construction/{forum_demo.FORUM_SLUG}/")
    forum = page.locator("#forum")
    expect(forum).to_contain_text("Verify: 2 items wait")
    expect(forum.locator("[data-count=released]")).to_have_text("3 released")
    expect(page.locator("[data-table=funnel]")).to_contain_text("Expert verification")
    page.screenshot(path="/tmp/forum_demo_construction.png", full_page=True)
    forum.get_by_role("link", name="Verify: 2 items wait").click()
    expect(page.locator("[data-count=waiting]")).to_have_text("2 waiting")
    page.screenshot(path="/tmp/forum_demo_queue.png", full_page=True)


@pytest.mark.django_db
def test_a_broken_edit_on_the_screen_changes_nothing(client, personas):
    forum_demo.seed()
    benchmark = Benchmark.objects.get(slug=forum_demo.FORUM_SLUG)
    client.force_login(personas["expert"])
    url = f"/construction/{benchmark.slug}/forum/expert/"
    claimed = client.post(url, {"action": "next"}, headers={"HX-Request": "true"})
    decision = waiting(benchmark.pk).first()
    assert f'data-task="{decision.pk}"' in claimed.content.decode()
    before = decision.candidate.form
    answer = client.post(
        f"{url}{decision.pk}/",
        {
            "outcome": "refine",
            "question": "Which?",
            "options": "a\nb\na",
            "correct": "A",
        },
        headers={"HX-Request": "true"},
    )
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "Give 5 to 7 options, not 3" in page and "repeats option A" in page
    decision.refresh_from_db()
    decision.candidate.refresh_from_db()
    assert decision.outcome == "pending" and decision.candidate.form == before
