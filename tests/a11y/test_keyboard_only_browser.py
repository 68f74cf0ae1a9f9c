"""A grading task and a review task done with the keyboard alone (#30): the skip
link leads past the menu to the task, Tab reaches every control with a visible focus
ring, the key dialog lists each key with its meaning, and what was chosen is
saved."""

import pytest
from playwright.sync_api import expect

from annotation.actions import do_create_grading_campaign, do_create_review_campaign
from annotation.models import GradingLabel, ReviewDecision
from tests.annotation.factories import flag_translation, make_items, make_run
from tests.annotation.test_browser import settled, task_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The focused control and whether a ring at least 2 px wide is drawn around it; a
# score's radio button is drawn by its label.
FOCUS = """() => {
  const focused = document.activeElement;
  const drawn = focused.closest(".q-choice") || focused;
  const style = getComputedStyle(drawn);
  return {
    tag: focused.tagName.toLowerCase(),
    id: focused.id,
    name: focused.getAttribute("name"),
    type: focused.getAttribute("type"),
    text: focused.textContent.trim(),
    ring: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2,
  };
}"""


def focused(page) -> dict:
    return page.evaluate(FOCUS)


def tab_to(page, wanted, most=60) -> dict:
    """Press Tab until `wanted(focused)` holds; every control passed on the way must
    show its focus."""
    for _ in range(most):
        page.keyboard.press("Tab")
        now = focused(page)
        assert now["ring"], f"no visible focus on {now}"
        if wanted(now):
            return now
    raise AssertionError("Tab never reached the control")


def skip_to_the_task(page):
    settled(page)
    page.keyboard.press("Tab")
    link = focused(page)
    assert (link["text"], link["ring"]) == ("Skip to the task", True), link
    page.screenshot(path="/tmp/a11y-skip-link.png")
    page.keyboard.press("Enter")
    assert focused(page)["id"] == "task"


def test_expert_grades_two_tasks_with_tab_arrows_and_keys(benchmark, personas, login):
    items = make_items(benchmark, 4)
    make_run(benchmark, items)
    campaign = do_create_grading_campaign(
        benchmark, name="Keyboard only", size=4, seed=2, assignees=[personas["expert"]]
    )
    page = login("expert")
    page.goto(f"/annotation/campaigns/{campaign.pk}/grade/")
    skip_to_the_task(page)

    # The key dialog: every key with what it does, opened and closed by keys.
    page.keyboard.press("?")
    keys = page.locator("#keys-dialog")
    expect(keys).to_be_visible()
    expect(keys.locator("th")).to_have_text(["Key", "What it does"])
    expect(
        keys.locator("tr", has_text="Score by the rubric").locator("kbd")
    ).to_have_text(["0", "1", "2", "3"])
    expect(keys.locator("tr", has=page.locator("kbd", has_text="k"))).to_contain_text(
        "Skip this task"
    )
    page.screenshot(path="/tmp/a11y-keys-dialog.png")
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()

    # First task: Tab to the scores, an arrow to choose, Tab to Submit, Enter.
    first = task_id(page)
    score = page.locator("input[name=score][value='0']")
    expect(score).to_have_attribute("aria-label", "Score 0: Wrong")
    tab_to(page, lambda now: now["name"] == "score")
    page.keyboard.press("ArrowDown")
    chosen = page.locator("input[name=score]:checked").get_attribute("value")
    page.screenshot(path="/tmp/a11y-grade-focus.png")
    tab_to(page, lambda now: now["type"] == "submit")
    page.keyboard.press("Enter")
    expect(page.locator("#task")).not_to_have_attribute("data-task", first)
    settled(page)
    expect(page.locator("#announcer")).to_contain_text("You: 1 done")

    # Second task: the keys alone.
    second = task_id(page)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.locator("#task")).not_to_have_attribute("data-task", second)

    saved = dict(
        GradingLabel.objects.filter(
            user=personas["expert"], is_latest=True
        ).values_list("task_id", "score")
    )
    assert saved == {int(first): int(chosen), int(second): 3}


def test_reviewer_rejects_a_translation_with_tab_and_enter(benchmark, personas, login):
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
    skip_to_the_task(page)
    reject = tab_to(page, lambda now: now["text"].startswith("Reject…"))
    assert reject["tag"] == "button"
    page.keyboard.press("Enter")
    reason = page.locator("#rejecter input[name=reason]")
    expect(reason).to_be_focused()
    page.keyboard.type("The unit was converted")
    page.screenshot(path="/tmp/a11y-review-reject.png")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    decision = ReviewDecision.objects.get()
    assert (decision.decision, decision.reason) == (
        "rejected",
        "The unit was converted",
    )
