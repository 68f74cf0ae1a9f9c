"""Browser flow: a manager cancels a running evaluation run from its page."""

import pytest
from playwright.sync_api import expect

from judging.evaluation.models import EvaluationRun
from tests.judging.factories import make_items, make_run


@pytest.mark.browser
def test_manager_cancels_a_running_evaluation(
    transactional_db, benchmark, personas, login, page, live_server
):
    items = make_items(benchmark, 6)
    run = make_run(benchmark, items, [3] * 6, [False] * 6, model="alpha")
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING)
    login("manager")
    page.goto(f"{live_server.url}/judging/evaluation-runs/{run.pk}/")
    expect(page.locator("#stage-counts")).to_contain_text("Running")
    page.screenshot(path="/tmp/evaluation_run_running.png", full_page=True)
    page.get_by_role("button", name="Cancel run").click()
    expect(
        page.get_by_text(f"Run {run.pk} cancelled; what it recorded is kept.")
    ).to_be_visible()
    expect(page.locator("#stage-counts")).to_contain_text("Cancelled")
    expect(page.get_by_role("button", name="Cancel run")).to_have_count(0)
    page.screenshot(path="/tmp/evaluation_run_cancelled.png", full_page=True)
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.CANCELLED
