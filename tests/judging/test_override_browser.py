"""Browser flow: a manager overrides a judge's score on an item's results page, and
the leaderboard then says one score was overridden."""

import pytest
from playwright.sync_api import expect

from tests.judging.factories import make_items, make_run


@pytest.mark.browser
def test_manager_overrides_a_judge_score_and_the_leaderboard_notes_it(
    transactional_db, benchmark, personas, login, page
):
    items = make_items(benchmark, 6)
    run = make_run(benchmark, items, [3, 2, 2, 1, 0, 3], [False] * 6, model="alpha")
    response = run.responses.get(item__external_id="item-000")
    login("manager")
    page.goto(f"/judging/evaluations/{benchmark.slug}/items/item-000/")
    block = page.locator(f"#response-{response.pk}")
    expect(block.locator("td.num .score").first).to_have_text("3")
    block.locator("details.override summary").click()
    form = block.locator("form[data-override=rubric]")
    form.get_by_label("Score").select_option("1")
    form.get_by_label("Why").fill("Gives the limit in psi; the reference is in kPa.")
    form.get_by_role("button", name="Override score").click()

    # htmx swaps in the response's new block: the judge's 3 struck out, the 1 in
    # force, and who overrode it and why.
    expect(block.get_by_role("status")).to_have_text(
        "Saved: the leaderboard now uses it."
    )
    expect(block.locator("td.num s")).to_have_text("3")
    history = block.get_by_test_id("override-history")
    expect(history).to_contain_text("manager: score 3 → 1")
    expect(history).to_contain_text("Gives the limit in psi; the reference is in kPa.")
    expect(history).to_contain_text("Judge judge had given score 3")
    page.screenshot(path="/tmp/override.png", full_page=True)

    page.get_by_role("link", name="← Leaderboard").click()
    note = "1 judge score overridden by people (1 response)"
    expect(page.get_by_test_id("overrides")).to_contain_text(note)
    board = page.locator("#leaderboard")
    expect(board.locator(".notes")).to_contain_text(note)
    # Final (SV) of alpha: (1 + 2 + 2 + 1 + 0 + 3) / 6.
    expect(board.locator("table[data-table=leaderboard] tbody td").nth(3)).to_have_text(
        "1.500"
    )
    page.screenshot(path="/tmp/override_leaderboard.png")
