"""The counters on a work screen move with each submit and agree with each other and
with the manager's dashboard (#18)."""

import pytest
from playwright.sync_api import expect

from annotation.actions import (
    do_create_adjudication_campaign,
    do_create_grading_campaign,
)
from tests.annotation.factories import make_items, make_run, make_split_consensus
from tests.annotation.test_browser import settled, task_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def opened(page, url: str):
    """Open a work screen and wait until the task it asks for on load is shown."""
    page.goto(url)
    expect(page.locator("#task")).not_to_have_attribute("data-task", "")
    settled(page)


def submit_and_wait(page, *keys):
    before = task_id(page)
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    expect(page.locator("#task")).not_to_have_attribute("data-task", before)
    settled(page)


def test_adjudication_counters_agree_right_after_a_submit(
    benchmark, personas, login, signed_in_page
):
    for item in make_items(benchmark, 4):
        make_split_consensus(benchmark, item)
    campaign = do_create_adjudication_campaign(
        benchmark, name="Splits", assignees=[personas["adjudicator"]]
    )
    page = login("adjudicator")
    opened(page, f"/annotation/campaigns/{campaign.pk}/adjudicate/")
    stats = page.locator(".q-stats")
    expect(stats).to_contain_text("0 / 4 labels (0.0%)")
    submit_and_wait(page, "1")
    expect(stats).to_contain_text("1 / 4 labels (25.0%)")
    expect(page.get_by_test_id("my-count")).to_have_text("1")
    expect(stats).not_to_contain_text("Pace: —")
    submit_and_wait(page, "2")
    expect(stats).to_contain_text("2 / 4 labels (50.0%)")
    expect(page.get_by_test_id("my-count")).to_have_text("2")
    page.screenshot(path="/tmp/counters-adjudicate.png", full_page=True)

    manager = signed_in_page("manager")
    manager.goto(f"/annotation/campaigns/{campaign.pk}/")
    expect(manager.locator(".q-kpi").first).to_have_text("2 / 4")


def test_grading_pace_appears_after_the_first_grade_and_follows_each(
    benchmark, personas, login
):
    make_run(benchmark, make_items(benchmark, 6))
    campaign = do_create_grading_campaign(
        benchmark, name="Pace", size=6, seed=1, assignees=[personas["expert"]]
    )
    page = login("expert")
    opened(page, f"/annotation/campaigns/{campaign.pk}/grade/")
    stats = page.locator(".q-stats")
    expect(stats).to_contain_text("Pace: —")
    for done in range(1, 6):
        submit_and_wait(page, "2")
        expect(stats).to_contain_text(f"{done} / 6 labels")
        expect(page.get_by_test_id("my-count")).to_have_text(str(done))
        expect(stats).not_to_contain_text("Pace: —")
        expect(stats).not_to_contain_text("ETA for your share: —")
