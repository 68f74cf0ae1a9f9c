"""Browser flow: a manager imports a real Inspect log (tests/fixtures/interop), chooses
the scorer and what its letters mean, sees the mapped distribution, and finds the
scores on the run's items."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from judging.evaluation.models import EvaluationRun, Judgment
from tests.judging.factories import make_items

LOG = Path(__file__).resolve().parents[1] / "fixtures/interop/inspect/open_answers.eval"


@pytest.mark.browser
def test_manager_maps_an_inspect_scorer_and_imports_the_log(
    transactional_db, benchmark, personas, login, page, live_server
):
    make_items(benchmark, 4, languages=("zh", "en"))
    login("manager")
    page.goto(f"{live_server.url}/judging/evaluations/{benchmark.slug}/runs/import/")
    page.get_by_label("Language").select_option("en")
    page.get_by_label("Run file").set_input_files(str(LOG))
    mapping = page.get_by_test_id("mapping")
    expect(mapping).to_contain_text("The file names the model mockllm/model")
    # Five scorers and no `rubric`: the person chooses; `match` writes C / I.
    page.get_by_label("Scorer").select_option("match")
    expect(page.get_by_test_id("score-map")).to_contain_text("correct")
    expect(page.get_by_test_id("distribution")).to_contain_text("3 × 3")
    # A match is worth a 2 here, not full marks.
    page.get_by_label("C becomes").select_option("2")
    expect(page.get_by_test_id("distribution")).to_contain_text("2 × 3")
    expect(page.get_by_test_id("distribution")).to_contain_text("0 × 1")
    page.get_by_label("The source had no safety check").check()
    page.screenshot(path="/tmp/import-inspect-mapping.png", full_page=True)
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_text("Imported 4 answers as run")).to_be_visible()
    expect(page.get_by_test_id("imported-from")).to_contain_text(
        "Inspect task open_answers, scorer match · score map C → 2, I → 0"
    )
    page.screenshot(path="/tmp/import-inspect-run.png", full_page=True)
    run = EvaluationRun.objects.get()
    assert run.model_name == "mockllm/model" and run.language == "en"
    scores = dict(
        Judgment.objects.filter(
            response__run=run, kind=Judgment.Kind.RUBRIC
        ).values_list("response__item__external_id", "score")
    )
    assert scores == {"item-000": 2, "item-001": 2, "item-002": 0, "item-003": 2}
    page.goto(f"{live_server.url}/judging/evaluations/{benchmark.slug}/items/item-002/")
    expect(page.locator("main")).to_contain_text("Default output from mockllm/model")
