"""A manager starts an evaluation run from the browser form and lands on the run's
live page, which a real Celery worker fills in against the OpenAI-protocol stub."""

import pytest
from playwright.sync_api import expect

from judging.evaluation.models import EvaluationRun
from judging.llm.models import Endpoint
from tests.judging.evaluation_stub import evaluation_responder
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub


@pytest.mark.browser
@pytest.mark.worker
def test_manager_starts_a_run_from_the_form(page, login, benchmark, running_worker):
    make_items(benchmark, 10)
    with OpenAIStub(api_key="k", responder=evaluation_responder) as stub:
        for name in ("qwen-test", "judge", "sv"):
            Endpoint.objects.create(
                name=name,
                base_url=stub.base_url,
                model=f"{name}-model",
                api_key_env="STUB_API_KEY",
                max_concurrency=4,
                thinking_switch=Endpoint.ThinkingSwitch.PARAMETER,
                thinking_on={"enable_thinking": True},
            )
        # The worker starting beside the browser slows the first pages on a
        # shared 2-core machine.
        page.set_default_timeout(30_000)
        login("manager")
        page.get_by_role("link", name="Leaderboards").click()
        page.get_by_role("link", name="Test bench").click()
        page.get_by_role("link", name="Start a run").first.click()
        expect(page.get_by_role("heading", level=1)).to_contain_text(
            "Start an evaluation run"
        )
        # Submitting without a tested model shows the error and creates nothing.
        page.get_by_label("Rubric judge").select_option(label="judge")
        page.get_by_label("Safety-violation judge").select_option(label="sv")
        page.get_by_role("button", name="Start run").click()
        expect(page.get_by_role("alert")).to_contain_text("The run was not started.")
        assert not EvaluationRun.objects.exists()

        page.get_by_label("Tested model").select_option(label="qwen-test")
        page.locator("#id_language").select_option("zh")
        page.get_by_label("Thinking mode").check()
        page.get_by_label("Model category").fill("open dense")
        page.get_by_label("At most N items").fill("5")
        page.screenshot(path="/tmp/start_run.png", full_page=True)
        page.get_by_role("button", name="Start run").click()

        expect(page.get_by_role("heading", level=1)).to_contain_text(
            "qwen-test [zh, thinking]", timeout=30_000
        )
        expect(page.get_by_text("started on 5 items")).to_be_visible()
        # Items 3 and 4 stay pending (unparseable judge reply, failed SV check):
        # the run is not complete and the pending table says why.
        counts = page.locator(".stage-counts")
        expect(counts).to_contain_text("SV-checked3", timeout=60_000)
        expect(counts).to_contain_text("Judged4")  # item 1's empty answer: 0
        expect(counts).to_contain_text("Pending2")
        expect(page.locator("#stage-counts [data-status]")).to_have_text(
            "Needs attention"
        )
        page.reload()
        pending = page.locator("form[action$='/waive/'] tbody tr")
        expect(pending).to_have_count(2)
        expect(pending.nth(0)).to_contain_text("Judge unparseable")
        expect(pending.nth(1)).to_contain_text("SV check failed")
        expect(page.get_by_role("button", name="Retry pending items")).to_be_visible()
        page.screenshot(path="/tmp/start_run_result.png", full_page=True)
    run = EvaluationRun.objects.get()
    assert run.thinking and run.model_category == "open dense"
    assert run.status == EvaluationRun.Status.ATTENTION
