"""An expert works a binary majority-vote campaign by keyboard (#15)."""

import pytest
from playwright.sync_api import expect

from annotation.actions import do_create_grading_campaign
from annotation.models import Campaign, GradingLabel
from tests.annotation.factories import make_items, make_run
from tests.annotation.test_browser import settled, task_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_expert_answers_correct_or_incorrect_by_keyboard(benchmark, personas, login):
    make_run(benchmark, make_items(benchmark, 4))
    # Open to every expert, as the study's panel of three would work in it.
    campaign = do_create_grading_campaign(
        benchmark,
        name="Blind questionnaire",
        size=4,
        seed=2,
        scale=Campaign.Scale.BINARY,
        overlap=3,
    )
    page = login("expert")
    page.goto(f"/annotation/campaigns/{campaign.pk}/grade/")
    expect(page.get_by_test_id("correct-means")).to_contain_text("Correct means")
    expect(page.get_by_text("Model response")).to_be_visible()
    expect(page.locator("input[name=score]")).to_have_count(2)
    settled(page)

    page.keyboard.press("?")
    keys = page.locator("#keys-dialog")
    expect(keys).to_contain_text("Incorrect")
    expect(keys).not_to_contain_text("Score by the rubric")
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()

    seen = []
    for key in ("1", "0", "1"):
        seen.append(task_id(page))
        page.keyboard.press(key)
        expect(page.locator(f"input[name=score][value='{key}']")).to_be_checked()
        if len(seen) == 1:
            page.screenshot(path="/tmp/binary_grade.png", full_page=True)
        page.keyboard.press("Enter")
        expect(page.locator("#task")).not_to_have_attribute(
            "data-task", seen[-1], timeout=15_000
        )
        settled(page)
    expect(page.get_by_test_id("my-count")).to_have_text("3")
    latest = {
        str(label.task_id): label.score
        for label in GradingLabel.objects.filter(is_latest=True)
    }
    assert latest == {seen[0]: 1, seen[1]: 0, seen[2]: 1}
