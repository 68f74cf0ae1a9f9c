"""A manager starts a run on multiple-choice items of a binary benchmark from the
browser, seeing in the preview the request the tested model is sent, options
included; a real Celery worker answers it against the reading test server (it
names the option whose text it knows, so a prompt without options would score
nothing); the run page shows each answer read and its outcome, and the
leaderboard the accuracy."""

import pytest
from playwright.sync_api import expect

from judging.evaluation.models import EvaluationRun
from judging.llm.models import Endpoint
from tests.judging.factories import make_format_items
from tests.judging.test_binary_runs import binary_responder, fixed_replies
from tests.openai_stub import OpenAIStub


@pytest.mark.browser
@pytest.mark.worker
def test_manager_runs_mc_items_and_reads_the_accuracy(
    page, login, benchmark, running_worker
):
    make_format_items(benchmark, mc=6)
    with OpenAIStub(api_key="k", responder=binary_responder) as stub:
        fixed_replies(stub)
        Endpoint.objects.create(
            name="mc-model",
            base_url=stub.base_url,
            model="mc-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=4,
        )
        page.set_default_timeout(30_000)
        login("manager")
        page.get_by_role("link", name="Leaderboards").click()
        page.get_by_role("link", name="Test bench").click()
        expect(
            page.get_by_text("No evaluation runs in this language yet")
        ).to_be_visible()
        page.get_by_role("link", name="Start a run").first.click()
        expect(page.get_by_text("graded correct / incorrect")).to_be_visible()
        expect(page.get_by_label("Safety-violation judge")).to_have_count(0)
        page.get_by_label("Tested model").select_option(label="mc-model")
        page.get_by_label("Trials per item").fill("2")
        expect(page.get_by_test_id("preview-calls")).to_have_text("12")
        request = page.get_by_test_id("request-preview")
        expect(request).to_have_count(1)
        expect(request).to_contain_text("Multiple choice · mc-000")
        expect(request).to_contain_text("[zh] Question 0?")
        for line in ("A. 10 mm", "B. 20 mm", "C. 30 mm", "D. 40 mm"):
            expect(request.locator("pre").last).to_contain_text(line)
        expect(request).to_contain_text("请只回答唯一正确选项的字母（A–D）")
        # A prompt that cannot show the options: the preview says why the run
        # would be refused, and so does Start.
        answer_prompt = page.get_by_label("Answer prompt")
        answer_prompt.select_option(label="answering-default v1")
        problem = page.get_by_test_id("preview-options-problem")
        expect(problem).to_contain_text("would not see the options of 6")
        page.screenshot(path="/tmp/binary_start_run_refused.png", full_page=True)
        page.get_by_role("button", name="Start run").click()
        expect(page.get_by_role("alert").first).to_contain_text(
            "would not see the options"
        )
        assert not EvaluationRun.objects.exists()
        page.get_by_label("Answer prompt").select_option(label="Built-in default")
        page.get_by_label("Trials per item").fill("2")
        expect(page.get_by_test_id("preview-options-problem")).to_have_count(0)
        page.screenshot(path="/tmp/binary_start_run.png", full_page=True)
        page.get_by_role("button", name="Start run").click()

        expect(page.get_by_text("started on 6 items × 2 trials")).to_be_visible()
        expect(page.locator("#stage-counts [data-status]")).to_have_text(
            "Complete", timeout=60_000
        )
        page.reload()
        expect(page.get_by_test_id("format-answer-prompts")).to_contain_text(
            "multiple choice → answer-mc-single-zh v1"
        )
        counts = page.get_by_test_id("outcome-counts")
        expect(counts).to_contain_text("Correct: 2")
        expect(counts).to_contain_text("Flagged: several answers: 2")
        answers = page.locator("table[data-table=choice-answers] tbody tr")
        expect(answers).to_have_count(12)
        expect(answers.first).to_contain_text("B")
        expect(answers.first).to_contain_text("Correct")
        page.screenshot(path="/tmp/binary_run.png", full_page=True)

        page.get_by_role("link", name="Leaderboard", exact=True).click()
        board = page.locator("table[data-table=leaderboard]")
        expect(board.locator("thead")).to_contain_text("Accuracy (%)")
        row = board.locator("tbody tr:not(.group-header)").first
        expect(row).to_contain_text("mc-model")
        # Study 002 §2.3: 1 correct of the 6 tested per trial (the 4 flagged
        # answers are not correct); over the answers with a verdict, 1 of 2.
        expect(row.locator("td").nth(3)).to_have_text("16.7")
        summary = page.get_by_test_id("summary")
        expect(summary).to_contain_text("Accuracy in percent")
        page.screenshot(path="/tmp/binary_leaderboard.png", full_page=True)

        page.goto(f"/judging/evaluations/{benchmark.slug}/items/mc-002/")
        expect(page.get_by_test_id("answer-key")).to_contain_text("correct: B")
        expect(page.get_by_test_id("outcome").first).to_have_text(
            "Flagged: several answers"
        )
        expect(page.get_by_test_id("answer-read").first).to_have_text("A, C")
        page.screenshot(path="/tmp/binary_item.png", full_page=True)
    run = EvaluationRun.objects.get()
    assert run.binary and run.trials == 2 and run.status == "complete"
