"""A manager chooses the IndustryBench preset on the run-start page: it selects the
paper's answer prompt, the judge set and the SV prompt; the run page then names the
template of each language and the one that judged the run."""

import pytest
from playwright.sync_api import expect

from judging.evaluation.models import EvaluationRun
from tests.judging.evaluation_stub import preset_responder, role_endpoints
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub


@pytest.mark.browser
@pytest.mark.worker
def test_manager_starts_a_run_with_the_industrybench_preset(
    page, login, benchmark, running_worker
):
    make_items(benchmark, 4)
    with OpenAIStub(api_key="k", responder=preset_responder) as stub:
        role_endpoints(stub, concurrency=4)
        page.set_default_timeout(30_000)
        login("manager")
        page.get_by_role("link", name="Leaderboards").click()
        page.get_by_role("link", name="Test bench").click()
        page.get_by_role("link", name="Start a run").first.click()

        page.get_by_label("Tested model").select_option(label="tested")
        page.locator("#id_language").select_option("zh")
        page.get_by_label("Rubric judge").select_option(label="judge")
        page.get_by_label("Safety-violation judge").select_option(label="sv")
        answer = page.get_by_label("Answer prompt")
        judge_set = page.get_by_label("Judge set")
        sv_prompt = page.get_by_label("Safety-violation prompt")
        expect(judge_set).to_have_value("")
        page.get_by_label("Prompt preset").select_option(
            label="IndustryBench (paper protocol)"
        )
        # Choosing the preset selects its prompts at once, before submitting.
        expect(answer.locator("option:checked")).to_contain_text(
            "industrybench-answer-paper v1"
        )
        expect(judge_set).to_have_value("industrybench")
        expect(sv_prompt.locator("option:checked")).to_contain_text(
            "industrybench-sv v1"
        )
        expect(page.get_by_label("Rubric prompt")).to_have_value("")
        page.screenshot(path="/tmp/preset_start_run.png", full_page=True)
        page.get_by_role("button", name="Start run").click()

        expect(page.get_by_role("heading", level=1)).to_contain_text(
            "tested [zh, non-thinking]"
        )
        prompts = page.get_by_test_id("run-prompts")
        expect(prompts).to_contain_text("industrybench-answer-paper v1")
        expect(prompts.locator("li[data-language='zh']")).to_contain_text(
            "zh → industrybench-judge-zh v1 judges this run (zh)"
        )
        expect(prompts.locator("li[data-language='other languages']")).to_have_text(
            "other languages → industrybench-judge-en v1"
        )
        expect(prompts).to_contain_text("industrybench-sv v1")
        expect(page.locator("#stage-counts [data-status]")).to_have_text(
            "Complete", timeout=60_000
        )
        page.screenshot(path="/tmp/preset_run.png", full_page=True)
    run = EvaluationRun.objects.get()
    assert run.judge_set == "industrybench"
    assert run.rubric_template.name == "industrybench-judge-zh"
