"""A manager adds an endpoint, tests its connection, starts a labelling run, watches
it finish and opens the consensus report — in chromium, with a real Celery worker
doing the LLM work against the stub."""

import re

import pytest
from playwright.sync_api import expect

from judging.labelling.models import LabellingRun
from judging.llm.models import Endpoint
from tests.judging.labelling_fixtures import (
    PLAN,
    add_items,
    annotate,
)
from tests.openai_stub import OpenAIStub


@pytest.mark.browser
@pytest.mark.worker
def test_manager_runs_labelling_from_the_browser(
    page, login, benchmark, running_worker, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    add_items(benchmark, PLAN)
    with OpenAIStub(latency=0.3, responder=annotate) as stub:
        for name in ("ann-b", "ann-c"):
            Endpoint.objects.create(
                name=name,
                base_url=stub.base_url,
                model=f"{name}-model",
                api_key_env="STUB_API_KEY",
                max_concurrency=2,
            )
        # The worker starting beside the browser makes the first pages slow on a
        # shared 2-core machine.
        page.set_default_timeout(30_000)
        login("manager")
        page.get_by_role("link", name="Endpoints").click()
        page.locator("#id_name").fill("ann-a")
        page.locator("#id_base_url").fill(stub.base_url)
        page.locator("#id_model").fill("ann-a-model")
        page.locator("#id_api_key_env").fill("STUB_API_KEY")
        page.locator("#id_max_concurrency").fill("2")
        page.get_by_role("button", name="Add endpoint").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("ann-a")

        page.get_by_role("button", name="Test connection").click()
        expect(page.locator("[data-test-message]")).to_contain_text(
            "ann-a-model replied 'OK'", timeout=30_000
        )
        page.screenshot(path="/tmp/endpoint.png", full_page=True)

        page.get_by_role("link", name="Labelling").click()
        page.get_by_label("Benchmark").select_option(label=str(benchmark))
        for name in ("ann-a", "ann-b", "ann-c"):
            page.get_by_label(name, exact=True).check()
        page.screenshot(path="/tmp/labelling_runs.png", full_page=True)
        page.get_by_role("button", name="Start labelling").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Labelling run")
        expect(page.locator("[data-status]")).to_have_text("Complete", timeout=30_000)
        expect(page.locator('[data-count="done"]')).to_have_text("11")
        expect(page.locator('[data-count="unparseable"]')).to_have_text("1")
        # Polling has stopped: the refreshed section carries no hx-get.
        expect(page.locator("#progress")).not_to_have_attribute(
            "hx-get", re.compile(".*")
        )
        page.reload()
        expect(page.get_by_text("I would rather not say.")).to_be_visible()
        page.screenshot(path="/tmp/labelling_run.png", full_page=True)

        page.get_by_role("link", name="Consensus report").click()
        table = page.locator("#consensus-table")
        expect(table.locator('[data-dimension="capability"]')).to_contain_text("25.0%")
        page.get_by_role("button", name="Confusion").first.click()
        expect(page.locator("table.confusion")).to_be_visible()
        page.screenshot(path="/tmp/consensus_report.png", full_page=True)
    assert LabellingRun.objects.get().status == LabellingRun.Status.COMPLETE
