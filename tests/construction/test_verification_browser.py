"""A manager runs search verification and then deep verification from the
construction page (a real worker asks the OpenAI-protocol and SearxNG-protocol
test servers), watches the runs finish, and reads a refined candidate's
evidence and answer diff on its page."""

import pytest
from playwright.sync_api import expect

from construction.actions import do_save_search_service
from construction.models import Candidate
from tests.construction.factories import make_candidate, make_source
from tests.construction.stage_fixtures import stub_endpoint
from tests.construction.verification_fixtures import PLAN, respond, search_results
from tests.openai_stub import OpenAIStub
from tests.search_stub import SearchStub

PASSED = [("dedup", "pass", ""), ("quality", "pass", "")]
QUESTIONS = [
    "6205-2RS 深沟球轴承的内径是多少？",  # corroborated, kept
    "CJX2-1810 交流接触器的 AC-3 额定工作电流是多少？",  # refined: 9 A → 18 A
    "6205-2RS 深沟球轴承的基本额定动载荷是多少？",  # not corroborated
]


@pytest.mark.browser
@pytest.mark.worker
def test_manager_runs_search_and_deep_verification(
    page, login, benchmark, running_worker, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    source = make_source(benchmark, kind="product_record", text="CJX2-1810 18 A")
    for question in QUESTIONS:
        candidate = make_candidate(source, question, PASSED)
        candidate.reference_answer = PLAN[question][1]
        candidate.save(update_fields=["reference_answer"])
    with (
        OpenAIStub(responder=respond) as llm,
        SearchStub(responder=search_results) as search,
    ):
        stub_endpoint(llm)
        do_save_search_service("searx-lab", adapter="searxng", base_url=search.base_url)
        page.set_default_timeout(30_000)
        login("manager")
        page.goto(f"/construction/{benchmark.slug}/")

        form = page.locator("#start-stage")
        form.get_by_label("Stage").select_option(label="Search verification")
        form.get_by_label("Endpoint").select_option(label="stub-writer")
        form.get_by_label("Search service").select_option(label="searx-lab")
        form.get_by_role("button", name="Start").click()
        expect(page.get_by_text("Search verification run")).to_be_visible()
        runs = page.locator("#runs")
        expect(runs.locator("tr[data-run] [data-status]").first).to_have_text(
            "Complete", timeout=60_000
        )
        page.reload()
        funnel = page.locator("[data-table=funnel]")
        expect(funnel).to_contain_text("Search verification")
        expect(page.locator("#rejects")).to_contain_text("No result states it.")

        form.get_by_label("Stage").select_option(label="Deep verification")
        form.get_by_label("Endpoint").select_option(label="stub-writer")
        form.get_by_label("Search service").select_option(label="searx-lab")
        expect(form.get_by_label("Thinking mode")).to_be_checked()
        form.get_by_role("button", name="Start").click()
        expect(runs.locator("tr[data-run]")).to_have_count(2)
        expect(runs.locator("tr[data-run] [data-status]").first).to_have_text(
            "Complete", timeout=60_000
        )
        page.reload()
        page.screenshot(path="/tmp/construction_verification.png", full_page=True)

        refined = Candidate.objects.get(question=QUESTIONS[1])
        page.locator("#refined").get_by_role("link", name=str(refined.pk)).click()
        expect(page.locator("[data-field=answer]")).to_have_text("18 A")
        versions = page.locator("#answer-versions")
        expect(versions.locator("del")).to_have_text("9")
        expect(versions.locator("ins")).to_have_text("18")
        evidence = page.locator("[data-evidence=search]")
        expect(evidence.locator("[data-list=queries] li")).to_have_count(3)
        results = evidence.locator("[data-table=results] tbody tr")
        expect(results).to_have_count(13)
        expect(results.first).to_contain_text("contactors CJX2-1810 全文")
        expect(results.first).to_contain_text("https://std.example.cn/")
        expect(results.first).to_contain_text("contactors CJX2-1810：9 A")
        deep = page.locator("[data-evidence=deep]")
        expect(deep.locator("[data-table=claims]")).to_contain_text("contradicted")
        # Stage 5's own search for the claim, beside Stage 4's evidence.
        expect(deep.locator("[data-claim]")).to_have_count(1)
        expect(deep.locator("[data-claim]")).to_contain_text("事实：18 A")
        expect(deep).to_contain_text("thinking")
        page.screenshot(path="/tmp/candidate_evidence.png", full_page=True)
    refined.refresh_from_db()
    assert (refined.reference_answer, refined.version) == ("18 A", 2)
