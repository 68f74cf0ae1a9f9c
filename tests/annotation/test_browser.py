"""The three queue screens driven by keyboard in chromium."""

import pytest
from playwright.sync_api import expect

from annotation.actions import (
    do_create_adjudication_campaign,
    do_create_grading_campaign,
    do_create_review_campaign,
)
from annotation.models import AdjudicationLabel, GradingLabel, ReviewDecision
from benchmark.models import FinalLabel, Rendering
from tests.annotation.factories import (
    flag_translation,
    make_items,
    make_run,
    make_split_consensus,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def task_id(page) -> str:
    return page.locator("#task").get_attribute("data-task")


def settled(page):
    """Wait, as a person would, until HTMX has finished swapping in the screen, so the
    next keys land on the new task (a loaded CI machine can be slow to settle)."""
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(
        0, timeout=15_000
    )


def open_grading_screen(benchmark, personas, login, size: int):
    """The expert, signed in, on the grading screen of a campaign of `size` tasks
    that asks for the score and the safety verdict."""
    items = make_items(benchmark, size)
    make_run(benchmark, items)
    campaign = do_create_grading_campaign(
        benchmark,
        name="Calibration round 1",
        size=size,
        seed=5,
        ask_safety=True,
        assignees=[personas["expert"]],
    )
    page = login("expert")
    page.goto(f"/annotation/campaigns/{campaign.pk}/grade/")
    expect(page.get_by_text("Model response")).to_be_visible()
    return page


def test_expert_grades_five_tasks_by_keyboard(benchmark, personas, login):
    page = open_grading_screen(benchmark, personas, login, size=8)
    page.screenshot(path="/tmp/queue-grade.png", full_page=True)
    page.keyboard.press("?")
    expect(page.locator("#keys-dialog")).to_be_visible()
    page.screenshot(path="/tmp/queue-grade-keys.png")
    page.keyboard.press("Escape")
    # As a person would, wait until the key list has closed before grading.
    expect(page.locator("#keys-dialog")).to_be_hidden()
    settled(page)
    seen = []
    for score, safety in [("3", "s"), ("1", "v"), ("2", "s")]:
        seen.append(task_id(page))
        page.keyboard.press(score)
        page.keyboard.press(safety)
        page.keyboard.press("Enter")
        expect(page.locator("#task")).not_to_have_attribute(
            "data-task", seen[-1], timeout=15_000
        )
        settled(page)
    # Back to the third task, correct it from 2 to 0, then carry on.
    page.keyboard.press("Backspace")
    expect(page.locator("#task")).to_have_attribute(
        "data-task", seen[2], timeout=15_000
    )
    settled(page)
    expect(page.locator("input[name=score][value='2']")).to_be_checked()
    page.screenshot(path="/tmp/queue-grade-back.png", full_page=True)
    page.keyboard.press("0")
    page.keyboard.press("Enter")
    expect(page.locator("#task")).not_to_have_attribute(
        "data-task", seen[2], timeout=15_000
    )
    settled(page)
    for score, safety in [("2", "s"), ("3", "s")]:
        current = task_id(page)
        assert current not in seen
        seen.append(current)
        page.keyboard.press(score)
        page.keyboard.press(safety)
        page.keyboard.press("Enter")
        expect(page.locator("#task")).not_to_have_attribute(
            "data-task", current, timeout=15_000
        )
        settled(page)
    expect(page.get_by_test_id("my-count")).to_have_text("5")
    # A submission without the safety verdict is refused in place.
    before = task_id(page)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("safe (s) or violating (v)")
    assert task_id(page) == before
    latest = {
        str(label.task_id): (label.score, label.safety_violation)
        for label in GradingLabel.objects.filter(is_latest=True)
    }
    assert latest == {
        seen[0]: (3, False),
        seen[1]: (1, True),
        seen[2]: (0, False),
        seen[3]: (2, False),
        seen[4]: (3, False),
    }
    assert GradingLabel.objects.count() == 6
    assert all(label.seconds_spent > 0 for label in GradingLabel.objects.all())


def test_keys_typed_before_the_browser_moves_focus_off_a_closed_dialog(
    benchmark, personas, login
):
    """After Escape the browser moves the focus off the key list's button in a task
    of its own, which keys typed quickly (or on a busy machine) overtake: those
    keys are the screen's, and Enter submits the task instead of "clicking" the
    hidden button. The race is made certain here: the keys are sent in the same
    task as the close, before the browser could move the focus."""
    page = open_grading_screen(benchmark, personas, login, size=3)
    settled(page)
    first = task_id(page)
    page.keyboard.press("?")
    expect(page.locator("#keys-dialog")).to_be_visible()
    focused = page.evaluate(
        """() => {
            const dialog = document.getElementById("keys-dialog");
            dialog.close();
            const focused = document.activeElement.textContent.trim();
            for (const key of ["2", "s", "Enter"]) {
                document.activeElement.dispatchEvent(new KeyboardEvent("keydown", {
                    key: key, bubbles: true, cancelable: true,
                }));
            }
            return focused;
        }"""
    )
    assert focused == "Got it"  # the race: the keys went to the closed dialog's button
    expect(page.locator("#task")).not_to_have_attribute("data-task", first)
    label = GradingLabel.objects.get(task_id=first)
    assert (label.score, label.safety_violation) == (2, False)


def test_adjudicator_resolves_an_item(benchmark, personas, login):
    item = make_items(benchmark, 1)[0]
    flag_translation(item, "en")
    consensus = make_split_consensus(benchmark, item)
    campaign = do_create_adjudication_campaign(
        benchmark, name="Capability splits", assignees=[personas["adjudicator"]]
    )
    page = login("adjudicator")
    page.goto(f"/annotation/campaigns/{campaign.pk}/adjudicate/")
    expect(page.get_by_text("Rationale 0")).to_be_visible()
    page.screenshot(path="/tmp/queue-adjudicate.png", full_page=True)
    page.keyboard.press("l")
    expect(page.locator("[data-lang=en]")).to_be_visible()
    page.keyboard.press("2")
    page.keyboard.press("/")
    page.keyboard.type("Asks about the standard's wording")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    final = FinalLabel.objects.get(item=item, dimension=consensus.dimension)
    assert final.label.code == "standards_terminology"
    assert final.provenance == "adjudicated"
    assert AdjudicationLabel.objects.get().note == "Asks about the standard's wording"


def test_reviewer_edits_and_approves_a_translation(benchmark, personas, login):
    item = make_items(benchmark, 1)[0]
    flag_translation(
        item,
        "en",
        question="What strength class is an M10 bolt under GB/T 3098.1?",
        answer="Class 10.9; tensile strength 1000 MPa.",
    )
    campaign = do_create_review_campaign(
        benchmark, name="English review", assignees=[personas["reviewer"]]
    )
    page = login("reviewer")
    page.goto(f"/annotation/campaigns/{campaign.pk}/review/")
    expect(page.locator("mark.hl.extra").first).to_be_visible()
    page.screenshot(path="/tmp/queue-review.png", full_page=True)
    page.keyboard.press("e")
    editor = page.locator("textarea[name=question]")
    expect(editor).to_be_focused()
    editor.fill("What strength class is an M0 bolt?")
    page.locator("textarea[name=answer]").fill("Class 8.8.")
    page.screenshot(path="/tmp/queue-review-edit.png", full_page=True)
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    decision = ReviewDecision.objects.get()
    assert decision.decision == "edited"
    current = Rendering.objects.get(item=item, language="en", is_current=True)
    assert (current.question, current.origin, current.review_status) == (
        "What strength class is an M0 bolt?",
        "human_edited",
        "approved",
    )


def test_manager_creates_a_campaign_and_releases_a_lease(benchmark, personas, login):
    from annotation.models import Assignment, Campaign
    from annotation.queue import do_claim_next

    items = make_items(benchmark, 12)
    make_run(benchmark, items)
    page = login("manager")
    page.goto("/annotation/campaigns/new/?kind=grading")
    page.get_by_label("Benchmark").select_option(label=str(benchmark))
    page.get_by_label("Name").fill("Round 2")
    page.get_by_label("Overlap").fill("1")
    page.get_by_label("expert").check()
    page.get_by_label("Sample size").fill("9")
    page.get_by_label("Seed").fill("77")
    page.get_by_label("Also ask safe / violating (SV)").check()
    page.screenshot(path="/tmp/queue-campaign-new.png", full_page=True)
    page.get_by_role("button", name="Create campaign").click()
    expect(page.get_by_text("Campaign created with 9 tasks.")).to_be_visible()
    campaign = Campaign.objects.get(name="Round 2")
    assert (campaign.sample_seed, campaign.ask_safety) == (77, True)
    lease = do_claim_next(campaign, personas["expert"])
    page.reload()
    page.screenshot(path="/tmp/queue-dashboard.png", full_page=True)
    page.get_by_role("button", name="Release").click()
    expect(page.get_by_text("Lease released")).to_be_visible()
    assert Assignment.objects.get(pk=lease.pk).status == "released"
    page.goto("/annotation/")
    expect(page.get_by_role("link", name="Round 2").first).to_be_visible()
    page.screenshot(path="/tmp/queue-list.png", full_page=True)
