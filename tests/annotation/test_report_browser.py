"""A manager opens every report, downloads each table's CSV and finds the page's
numbers in it; then filters the disagreement browser."""

import csv

import numpy as np
import pytest
from playwright.sync_api import expect

from annotation.agreement.loading import REPORT_TITLES
from tests.annotation.report_factories import (
    bulk_items,
    human_grades,
    judged_runs,
    labelling_consensus,
)


def page_cells(page, slug):
    return page.locator(f'table[data-table="{slug}"]').evaluate(
        """table => Array.from(table.tBodies[0].rows, row =>
            Array.from(row.cells, cell => cell.textContent.trim()))"""
    )


def agrees(raw: str, text: str) -> bool:
    """Whether the page's text shows the raw CSV value, judged by the text's own
    shape: the same number to the digits the page shows (the CSV keeps four
    decimals of a percentage, so 66.25 may read 66.3% from 66.2500001)."""
    if raw == "":
        return text == "–"
    if text.endswith("%"):  # CSV rates are percentages, as their "(%)" headers say
        return abs(float(text[:-1]) - float(raw)) <= 0.05 + 1e-6
    if "." in text:
        return abs(float(text) - float(raw)) <= 0.0005 + 1e-9
    return text == raw


@pytest.mark.browser
def test_every_report_page_matches_its_csv(
    transactional_db, benchmark, personas, login, page
):
    items = bulk_items(benchmark, 40)
    runs = judged_runs(benchmark, items)
    responses, scores, flags = runs["Model-A"]
    expert = scores["judge-b"].astype(float)
    second = np.where(np.arange(40) < 15, expert, np.nan)
    human_grades(
        benchmark,
        responses,
        {personas["expert"]: expert, personas["adjudicator"]: second},
        flags={personas["expert"]: ~flags, personas["adjudicator"]: flags},
    )
    labelling_consensus(benchmark, items)

    login("manager")
    page.get_by_role("link", name="Reports").click()
    for name, title in REPORT_TITLES.items():
        page.goto("/annotation/reports/")
        page.get_by_role("row", name=benchmark.name).get_by_role(
            "link", name=title
        ).click()
        expect(page.get_by_role("heading", level=1)).to_contain_text(benchmark.name)
        expect(page.locator(".footnotes li").first).to_be_visible()
        for link in page.locator("a[data-csv]").all():
            slug = link.get_attribute("data-csv")
            with page.expect_download() as download:
                link.click()
            with open(download.value.path(), encoding="utf-8-sig") as f:
                lines = list(csv.reader(f))
            cells = page_cells(page, slug)
            assert len(cells) == len(lines) - 1 > 0, (name, slug)
            for row, line in zip(cells, lines[1:], strict=True):
                assert len(row) == len(line), (name, slug)
                assert all(
                    agrees(raw, text) for raw, text in zip(line, row, strict=True)
                ), (name, slug, row, line)
        page.screenshot(path=f"/tmp/report_{name}.png", full_page=True)

    wide = {}
    for model, (_, model_scores, _) in runs.items():
        stacked = np.vstack(list(model_scores.values()))
        wide[model] = int(np.sum(stacked.max(0) - stacked.min(0) >= 2))
    page.get_by_role("link", name="Disagreement browser").click()
    count = page.locator("[data-count]")
    expect(count).to_have_attribute("data-count", str(sum(wide.values())))
    page.get_by_label("Tested model").select_option(label="Model-B [zh, non-thinking]")
    page.wait_for_url("**run=**")
    expect(count).to_have_attribute("data-count", str(wide["Model-B"]))
    page.get_by_label("Show").select_option("human")
    page.wait_for_url("**kind=human**")
    expect(count).to_have_attribute("data-count", "0")  # only Model-A was graded
    page.get_by_label("Tested model").select_option(label="Model-A [zh, non-thinking]")
    gaps = np.abs(np.vstack(list(scores.values())) - expert).max(0) >= 2
    expect(count).to_have_attribute("data-count", str(int(gaps.sum())))
    expect(page.locator("article.disagreement").first).to_contain_text("judge-a on")
    page.screenshot(path="/tmp/report_disagreements.png", full_page=True)
