"""A manager of a benchmark scored by one rubric judge (the IndustryBench set-up)
reads the reports — the cross-judge page says why it is empty, the calibration page
shows Table 6's confusion matrix, the consensus page the adjudication count — and
downloads the paper tables."""

import json
import re
import zipfile

import pytest
from playwright.sync_api import expect

from tests.annotation.report_factories import one_judge_set_up


@pytest.mark.browser
def test_one_judge_reports_and_paper_tables(
    transactional_db, benchmark, personas, login, page
):
    judge, human = one_judge_set_up(benchmark, personas["expert"])
    # The archive computes every table and figure in the request: on a busy
    # machine that takes longer than a page's default 10 s.
    page.set_default_timeout(90_000)
    login("manager")
    page.get_by_role("link", name="Reports").click()
    row = page.get_by_role("row", name=benchmark.name)

    row.get_by_role("link", name="Cross-judge consistency (Table 5)").click()
    expect(page.locator("#table-models [data-testid=table-notes]")).to_contain_text(
        "One rubric judge scored these responses (judge-a)"
    )
    page.screenshot(path="/tmp/paper/cross_judge_one_judge.png", full_page=True)

    page.get_by_role("link", name="Human calibration (Tables 6 and 16)").click()
    matrix = page.locator('table[data-table="confusion"]')
    expect(matrix).to_be_visible()
    # The diagonal of the judge-a × expert matrix: the responses they agree on.
    cells = matrix.evaluate(
        """table => Array.from(table.tBodies[0].rows, row =>
            Array.from(row.cells, cell => cell.textContent.trim()))"""
    )
    diagonal = sum(int(cells[s][3 + s]) for s in range(4))
    assert diagonal == int((judge == human).sum())
    assert sum(int(line[-1]) for line in cells) == 30
    page.locator("#table-confusion").screenshot(path="/tmp/paper/confusion.png")
    page.screenshot(path="/tmp/paper/calibration.png", full_page=True)

    page.get_by_role("link", name="Label consensus (Table 3)").click()
    union = page.get_by_role("row", name="No majority in at least one dimension")
    expect(union.locator('[data-col="none_n"]')).to_have_text(re.compile(r"^\d+$"))
    page.screenshot(path="/tmp/paper/consensus.png", full_page=True)

    page.get_by_role("link", name="Reports").click()
    with page.expect_download() as download:
        page.get_by_role("row", name=benchmark.name).get_by_role(
            "link", name="Paper tables and figures (.zip)"
        ).click()
    with zipfile.ZipFile(download.value.path()) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert {"Table 5", "Table 11", "Table 12", "Table 6 (confusion matrix)"} <= set(
        manifest["tables"]
    )
