"""Done-when of LPFQA's construction (issue #29, part 3): ten forum posts (two
whose question is only in a screenshot) go through QA extraction, dedup, the
quality filter and the conversion on a real Celery worker against the OpenAI-
protocol test server, which answers from the post and the screenshots it is
sent; an expert verifies every item in the browser by keyboard alone (approve,
edit, reject with a reason, back); the verified items are released as multiple-
choice and short-answer items carrying their post's provenance."""

import pytest
from playwright.sync_api import expect

from benchmark.models import Item
from construction.expert.actions import do_open_expert_review, do_release_forum
from construction.models import Candidate, StageDecision
from tests.construction.forum_fixtures import (
    FORUM_FUNNEL_BEFORE_EXPERTS,
    MULTIPLE_CHOICE,
    SHORT_ANSWER,
    import_posts,
)
from tests.construction.stage_fixtures import run_stage, stub_endpoint
from tests.construction.test_forum_stages import funnel, run_forum_stages
from tests.openai_stub import ForumModel, OpenAIStub


@pytest.mark.browser
@pytest.mark.worker
def test_ten_posts_become_verified_items(
    page, login, personas, benchmark, running_worker, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    assert import_posts(benchmark).added == 10
    model = ForumModel()
    with OpenAIStub(responder=model) as stub:
        convert = run_forum_stages(benchmark, stub_endpoint(stub), run=run_stage)
        assert stub.duplicate_answers() == {}
    assert convert.status == "complete"
    assert model.images_seen == 2
    assert funnel(benchmark)[:4] == FORUM_FUNNEL_BEFORE_EXPERTS
    assert do_open_expert_review(benchmark) == 6
    order = list(
        StageDecision.objects.filter(stage="expert")
        .order_by("id")
        .select_related("candidate__source")
    )

    page.set_default_timeout(30_000)
    login("expert")
    page.goto(f"/construction/{benchmark.slug}/forum/expert/")
    count = page.locator("[data-count=waiting]")
    expect(count).to_have_text("6 waiting")
    task = page.locator("#task")

    def showing(decision):
        expect(task).to_have_attribute("data-task", str(decision.pk))

    showing(order[0])
    expect(page.locator("[data-field=post]")).to_contain_text("views")
    page.keyboard.press("?")
    expect(page.locator("#keys-dialog")).to_contain_text("Edit")
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # approve the first
    showing(order[1])
    expect(count).to_have_text("5 waiting")

    page.keyboard.press("e")  # edit the second: a clearer question
    question = page.locator("textarea[name=question]")
    expect(question).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("Edited by the expert: which grounding scheme avoids loops?")
    page.keyboard.press("Control+Enter")
    showing(order[2])

    if order[2].candidate.source.fields["images"]:
        expect(page.locator("img.screenshot")).to_be_visible()
    page.screenshot(path="/tmp/forum_expert_queue.png", full_page=True)
    page.keyboard.press("r")  # reject the third, saying why
    expect(page.locator("input[name=reason]")).to_be_focused()
    page.keyboard.type("The key repeats a reply that later posts refute.")
    page.keyboard.press("Enter")
    showing(order[3])
    expect(count).to_have_text("3 waiting")

    page.keyboard.press("Backspace")  # back to the rejected one: shown, not decided
    expect(page.get_by_test_id("decided")).to_contain_text("Rejected")
    page.keyboard.press("n")  # back to the queue
    showing(order[3])
    for decision in order[3:]:
        showing(decision)
        page.keyboard.press("a")
    expect(page.locator(".empty")).to_have_text("Nothing waits for verification.")

    verdicts = dict(
        StageDecision.objects.filter(stage="expert").values_list("pk", "outcome")
    )
    assert [verdicts[d.pk] for d in order] == [
        "pass",
        "refine",
        "reject",
        "pass",
        "pass",
        "pass",
    ]
    edited = Candidate.objects.get(pk=order[1].candidate_id)
    assert edited.form["question"].startswith("Edited by the expert")

    result = do_release_forum(benchmark, user=personas["manager"])
    assert result.released == 5
    assert funnel(benchmark)[4:] == [
        ("expert", (6, 5, 1, 0)),
        ("released", (5, 5, 0, 0)),
    ]
    items = Item.objects.filter(benchmark=benchmark, status="active")
    by_post = {}
    for item in items:
        created = item.events.get(kind="created")
        by_post[created.after["post"]["post_id"]] = (item, created.after["post"])
    rejected = order[2].candidate.source.fields["post_id"]
    assert set(by_post) == (MULTIPLE_CHOICE | SHORT_ANSWER) - {rejected}
    for post_id, (item, post) in by_post.items():
        rendering = item.renderings.get(is_current=True)
        if post_id in MULTIPLE_CHOICE:
            assert item.format == "multiple_choice"
            assert 5 <= len(rendering.options) <= 7 and len(item.correct_options) == 1
        else:
            assert item.format == "short_answer"
            assert 1 <= len(rendering.key_points) <= 5
        assert post["views"] == 400 and "posted_at" in post
    screenshots = {
        post_id: post["screenshots"] for post_id, (_, post) in by_post.items()
    }
    assert sum(screenshots.values()) == 2 - (rejected in ("POST-03", "POST-04"))
