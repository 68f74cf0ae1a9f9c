"""Browser: a researcher (a manager) saves LPFQA⁼ on the LPFQA-style demo from the
subsets page, reads accuracy per field on it — the heatmap with the mean over
models and the best and worst model per field (LPFQA Figures 3–4) — and the field
distribution of the full set and the subset (Figure 5)."""

import pytest
from playwright.sync_api import expect

from judging.demo import lpfqa as lpfqa_demo


@pytest.mark.browser
def test_researcher_reads_accuracy_per_field_on_lpfqa_equal(
    transactional_db, personas, login, page
):
    benchmark = lpfqa_demo.seed()
    fields = sorted(set(benchmark.items.values_list("domain", flat=True)))
    login("manager")
    page.get_by_role("link", name="Leaderboards").click()
    page.get_by_role("link", name=lpfqa_demo.NAME).click()
    page.get_by_role("link", name="Item subsets").click()
    expect(page.get_by_test_id("solved-definition")).to_contain_text(
        "right in at least one trial"
    )

    page.get_by_label("LPFQA⁼", exact=False).check()
    page.get_by_label("An item is solved at a final score of").select_option("1")
    for model, *_ in lpfqa_demo.MODELS:
        page.get_by_label(model, exact=False).check()
    page.get_by_label("Name").fill("lpfqa-equal")
    page.get_by_role("button", name="Preview").click()
    kept = int(page.get_by_test_id("subset-size").inner_text())
    assert 0 < kept < benchmark.items.count()
    page.get_by_role("button", name=f"Save {kept} items as a subset").click()

    # The leaderboard, now on the subset.
    expect(page.get_by_test_id("subset-note")).to_contain_text("lpfqa-equal")
    page.get_by_role("link", name="by field").click()
    table = page.locator("table[data-table=fields]")
    expect(table).to_be_visible()
    for field in fields:
        expect(table.locator("thead")).to_contain_text(field)
    expect(table.locator("tbody tr")).to_have_count(len(lpfqa_demo.MODELS) + 1)
    expect(table.locator("tbody tr").last).to_contain_text("Mean over models")
    expect(page.locator("#fields .notes")).to_contain_text("LPFQA (paper 001) §4.1")
    page.locator("#fields").screenshot(path="/tmp/defs_field_accuracy.png")

    page.get_by_role("link", name="best / worst per field").click()
    extremes = page.locator("table[data-table=field_extremes]")
    expect(extremes.locator("tbody tr")).to_have_count(len(fields))
    page.screenshot(path="/tmp/defs_field_leaderboard.png", full_page=True)

    page.get_by_role("link", name="Item subsets").click()
    distribution = page.locator("table[data-table=field-distribution]")
    expect(distribution.locator("thead")).to_contain_text("lpfqa-equal")
    expect(distribution.locator("tbody tr").last).to_contain_text(str(kept))
    page.screenshot(path="/tmp/defs_subsets.png", full_page=True)
