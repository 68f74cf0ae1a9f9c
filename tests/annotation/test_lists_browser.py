"""Long lists are paged and the item list has a compact density (#18)."""

import pytest
from playwright.sync_api import expect

from annotation.actions import do_create_grading_campaign, do_submit_grading
from annotation.queue import do_claim_next
from tests.annotation.factories import make_items, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_dashboards_label_log_is_paged(benchmark, personas, login):
    make_run(benchmark, make_items(benchmark, 30))
    campaign = do_create_grading_campaign(
        benchmark, name="Thirty", size=30, seed=1, assignees=[personas["expert"]]
    )
    while (lease := do_claim_next(campaign, personas["expert"])) is not None:
        do_submit_grading(lease.task, personas["expert"], score=1, seconds=3)
    page = login("manager")
    page.goto(f"/annotation/campaigns/{campaign.pk}/")
    log = page.locator("h2#labels + table tbody tr")
    expect(log).to_have_count(25)
    expect(page.locator("h2#labels")).to_contain_text("1–25 of 30")
    page.get_by_role("link", name="Older ›").click()
    expect(log).to_have_count(5)
    expect(page.locator("h2#labels")).to_contain_text("26–30 of 30")
    assert "labels_page=2" in page.url
    page.get_by_role("link", name="‹ Newer").click()
    expect(log).to_have_count(25)


def test_the_item_list_has_a_compact_density(benchmark, login):
    make_items(benchmark, 12)
    page = login("expert")
    page.goto(f"/b/{benchmark.slug}/items/")
    rows = page.locator("table.items tbody tr")
    expect(rows).to_have_count(12)
    comfortable = rows.first.bounding_box()["height"]
    page.get_by_label("Compact").check()
    expect(page.locator("table.items.compact")).to_be_visible()
    assert "density=compact" in page.url
    assert rows.first.bounding_box()["height"] < comfortable
    page.screenshot(path="/tmp/items-compact.png")
