"""A manager opens "Check a summary table" from a leaderboard, pastes a table with
one impossible row and sees that row named in the findings."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Tab-separated, as a spreadsheet copies; beta's Raw Mean 2.35 over 7 items is no
# k/7 (16/7 = 2.2857, 17/7 = 2.4286).
TABLE = (
    "Rank\tModel\tFinal (SV)\tItems\tRaw Mean\tDelta\tPerfect\tPass\tRaw rank\tΔrank\n"
    "1\talpha\t2.286\t7\t2.429\t-0.143\t57.1%\t85.7%\t1\t+0\n"
    "2\tbeta\t2.000\t7\t2.350\t-0.350\t42.9%\t71.4%\t2\t+0\n"
    "3\tgamma\t1.500\t8\t1.500\t+0.000\t25.0%\t50.0%\t3\t+0\n"
)


def test_a_manager_pastes_a_table_and_sees_the_impossible_row(benchmark, login):
    page = login("manager")
    page.get_by_role("link", name="Leaderboards").click()
    page.get_by_role("link", name="Test bench").click()
    page.get_by_role("link", name="Check a summary table").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Check a summary table")

    page.get_by_label("Summary table").fill(TABLE)
    page.get_by_role("button", name="Check the table").click()

    result = page.get_by_test_id("check-result")
    expect(result.get_by_role("heading", level=2)).to_have_text(
        "2 inconsistencies in 1 of 3 rows"
    )
    rows = result.locator("table[data-table=findings] tbody tr")
    expect(rows).to_have_count(2)
    for row in rows.all():
        expect(row.locator("td").nth(0)).to_have_text("line 3")
        expect(row.locator("td").nth(1)).to_have_text("beta")
    expect(rows.first).to_contain_text("16/7 = 2.28571, 17/7 = 2.42857")
    # What was pasted stays in the box, to be corrected and checked again.
    expect(page.get_by_label("Summary table")).to_have_value(TABLE)
    page.screenshot(path="/tmp/check_table.png", full_page=True)
