"""Browser flow: a manager follows a running evaluation run — progress bar, items
finished, calls per second, cost and ETA, refreshed by polling until it ends."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from judging.evaluation.models import EvaluationRun
from tests.judging.factories import make_asking_run


@pytest.mark.browser
def test_manager_follows_a_running_evaluation(
    transactional_db, benchmark, personas, login, page, live_server
):
    run = make_asking_run(benchmark)
    EvaluationRun.objects.filter(pk=run.pk).update(
        scored_count=4,
        failed_count=2,
        made_calls=16,
        input_tokens=5_200,
        output_tokens=1_300,
        cost=Decimal("0.0042"),
        started_at=timezone.now() - timedelta(seconds=40),
    )
    login("manager")
    page.goto(f"{live_server.url}/judging/evaluation-runs/{run.pk}/")
    progress = page.locator("#stage-counts")
    expect(progress.locator("[data-status]")).to_have_text("Running")
    expect(progress).to_contain_text("6 of 10 items finished")
    expect(progress.locator("progress")).to_have_attribute("value", "6")
    expect(progress.locator('[data-count="open"]')).to_have_text("4")
    expect(progress.locator('[data-count="calls"]')).to_have_text("16")
    expect(progress.locator('[data-count="rate"]')).to_have_text(re.compile(r"0\.\d+"))
    expect(progress.locator('[data-count="cost"]')).to_have_text("0.0042")
    expect(progress.locator('[data-count="eta"]')).to_have_text(re.compile(r"\d+ s"))
    expect(page.get_by_role("button", name="Retry pending items")).to_have_count(0)
    expect(page.get_by_text("Retry these once it has finished.")).to_be_visible()
    page.screenshot(path="/tmp/evalrun.png", full_page=True)

    # The workers move on; the polled section follows, and stops once it has ended.
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=EvaluationRun.Status.ATTENTION,
        scored_count=8,
        failed_count=2,
        made_calls=28,
        finished_at=None,
        heartbeat_at=timezone.now(),
    )
    expect(progress).to_contain_text("10 of 10 items finished")
    expect(progress.locator("[data-status]")).to_have_text("Needs attention")
    expect(progress.locator('[data-count="eta"]')).to_have_text("—")
    expect(progress).not_to_have_attribute("hx-get", re.compile(".*"))
