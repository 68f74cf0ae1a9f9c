"""Browser flow: a manager opens the leaderboard, sorts it, opens a heatmap cell's
items and an item's drill-down."""

import pytest
from playwright.sync_api import expect

from judging.demo import runs as demo_runs
from tests.judging.factories import make_items


@pytest.mark.browser
def test_manager_sorts_leaderboard_and_drills_into_a_heatmap_cell(
    transactional_db, benchmark, personas, login, page
):
    make_items(benchmark, 90)
    demo_runs.seed(benchmark)
    login("manager")
    page.get_by_role("link", name="Leaderboards").click()
    page.get_by_role("link", name="Test bench").click()
    board = page.locator("table[data-table=leaderboard]")
    expect(board).to_be_visible()
    expect(board.locator("tr.group-header")).to_have_count(3)
    expect(board.locator("thead")).to_contain_text("Rank (overall)")
    # The summary opens with the top three, the first being the rank-1 row.
    summary = page.get_by_test_id("summary")
    expect(summary.locator("li")).to_have_count(3)
    first_row = board.locator("tbody tr:has(td:first-child[data-sort='1'])").first
    expect(summary.locator("li a").first).to_have_text(
        first_row.locator("td:nth-child(2)").inner_text().strip()
    )
    # The height is the styled page's: on a loaded machine the rows can be in the
    # DOM before the stylesheet has applied.
    page.wait_for_load_state("load")
    page_height = page.evaluate("document.body.scrollHeight")
    assert page_height < 2500, page_height
    page.screenshot(path="/tmp/leaderboard.png", full_page=True)

    def column(label):
        headers = board.locator("thead th").all_text_contents()
        index = [h.replace("↕", "").strip() for h in headers].index(label)
        return [
            float(text.strip().rstrip("%"))
            for text in board.locator(
                f"tbody tr:not(.group-header) td:nth-child({index + 1})"
            ).all_inner_texts()
        ]

    page.get_by_role("link", name="Show one ranked list").click()
    board = page.locator("table[data-table=leaderboard]")
    expect(board.locator("tr.group-header")).to_have_count(0)
    board.get_by_role("button", name="Raw Mean").click()
    expect(board.locator("th[aria-sort=ascending]")).to_have_count(1)
    raw = column("Raw Mean")
    assert raw == sorted(raw)
    board.get_by_role("button", name="Raw Mean").click()
    raw = column("Raw Mean")
    assert raw == sorted(raw, reverse=True)
    board.get_by_role("button", name="SV rate").click()
    sv = column("SV rate")
    assert sv == sorted(sv)

    heatmap = page.locator("table[data-table=capability]")
    expect(heatmap).to_be_hidden()  # sections after the leaderboard start closed
    page.get_by_role("navigation", name="Report").get_by_role(
        "link", name="capability"
    ).click()
    expect(heatmap).to_be_visible()
    page.screenshot(path="/tmp/leaderboard_heatmaps.png", full_page=True)
    first_cell = heatmap.locator("td.heat a").first
    support = int(first_cell.locator(".support").inner_text().removeprefix("n="))
    first_cell.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Capability:")
    rows = page.locator("table[data-table=cell-items] tbody tr")
    expect(rows).to_have_count(support)
    page.screenshot(path="/tmp/leaderboard_cell.png", full_page=True)

    rows.first.locator("td a").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("every model's answer")
    # One block per response: its row, and under it the override history and form.
    expect(
        page.locator("table[data-table=item-results] tbody[data-response]")
    ).to_have_count(len(demo_runs.DEMO_MODELS) + 3)
    expect(page.get_by_text("judge-b:").first).to_be_visible()
    page.screenshot(path="/tmp/leaderboard_item.png", full_page=True)
