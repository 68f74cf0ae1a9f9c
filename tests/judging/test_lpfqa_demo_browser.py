"""Browser: the LPFQA-style demo's pages have content without keys — the accuracy
leaderboard with its per-format table, a simulated run's answers and outcomes, and
an item's answers per model and trial."""

import pytest
from playwright.sync_api import expect

from judging.demo import lpfqa as lpfqa_demo


@pytest.mark.browser
def test_manager_reads_the_lpfqa_demo(transactional_db, personas, login, page):
    lpfqa_demo.seed()
    login("manager")
    page.get_by_role("link", name="Leaderboards").click()
    page.get_by_role("link", name=lpfqa_demo.NAME).click()
    board = page.locator("table[data-table=leaderboard]")
    expect(board.locator("tbody tr:not(.group-header)")).to_have_count(
        len(lpfqa_demo.MODELS)
    )
    expect(board.locator("thead")).to_contain_text("Trial SD")
    page.get_by_role("link", name="by format").click()
    formats = page.locator("table[data-table=formats]")
    expect(formats).to_be_visible()
    expect(formats.locator("thead")).to_contain_text("Short answer with key points")
    page.screenshot(path="/tmp/lpfqa_demo_leaderboard.png", full_page=True)

    board.get_by_role("link", name="atlas-pro").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("atlas-pro")
    expect(page.get_by_text("3 trials per item").first).to_be_visible()
    answers = page.locator("table[data-table=choice-answers] tbody tr")
    expect(answers).to_have_count(len(lpfqa_demo.MULTIPLE_CHOICE) * 3)
    page.screenshot(path="/tmp/lpfqa_demo_run.png", full_page=True)

    answers.first.get_by_role("link").click()
    expect(page.get_by_test_id("answer-key")).to_contain_text("correct: B")
    rows = page.locator("table[data-table=item-results] tbody[data-response]")
    expect(rows).to_have_count(len(lpfqa_demo.MODELS) * 3)
    page.screenshot(path="/tmp/lpfqa_demo_item.png", full_page=True)
