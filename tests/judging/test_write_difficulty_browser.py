"""Writing panel-derived difficulty shows the runs it uses and the change per tier,
and asks first; the imported values stay in each item's history (#19)."""

import pytest
from playwright.sync_api import expect

from benchmark.models import Item, ItemEvent
from judging.demo import runs as demo_runs
from tests.judging.factories import make_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_previews_then_writes_difficulty(benchmark, login):
    make_items(benchmark, 30)
    Item.objects.update(difficulty="medium", difficulty_provenance="imported")
    demo_runs.seed(benchmark)
    page = login("manager")
    page.get_by_role("link", name="Leaderboards").click()
    page.get_by_role("link", name="Test bench").click()
    # Four runs: enough distinct panel means for three tiers (equal means are
    # never split across tiers).
    for run in ("atlas-pro", "dense-8b", "atlas-mini", "sparrow-moe"):
        page.get_by_label(f"{run} [zh, non-thinking]").check()
    page.get_by_role("button", name="Preview the difficulty change…").click()

    expect(page.get_by_role("heading", level=1)).to_contain_text("Write panel-derived")
    runs = page.get_by_test_id("panel-runs").locator("li")
    expect(runs).to_have_count(4)
    expect(runs.first).to_contain_text("Simulated (demo)")
    change = page.locator("table[data-table=difficulty-change]")
    expect(change.locator("tr", has_text="medium")).to_contain_text("30")
    changed = int(page.get_by_test_id("difficulty-changed").inner_text())
    assert 0 < changed < 30
    expect(page.get_by_text("replacing an imported difficulty")).to_be_visible()
    expect(page.get_by_text(f"{30 - changed} keep their tier")).to_be_visible()
    page.screenshot(path="/tmp/write-difficulty.png", full_page=True)
    assert set(Item.objects.values_list("difficulty_provenance", flat=True)) == {
        "imported"
    }

    page.get_by_role("button", name="Write difficulty to 30 items").click()
    expect(page.get_by_text("written to 30 items")).to_be_visible()
    events = ItemEvent.objects.filter(kind="difficulty")
    assert events.count() == 30
    assert {event.before["provenance"] for event in events} == {"imported"}
    assert {event.before["difficulty"] for event in events} == {"medium"}
