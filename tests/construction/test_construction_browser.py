"""In chromium: a manager starts the quality stage (a real Celery worker asks the
stub), watches it finish, opens the funnel report and a rejected candidate; a
person works the dangling-reference queue of the demo by keyboard alone."""

import re

import pytest
from playwright.sync_api import expect

from construction.models import StageDecision, StageRun
from tests.annotation.test_browser import settled
from tests.construction.factories import make_candidate, make_source
from tests.construction.stage_fixtures import respond, stub_endpoint
from tests.openai_stub import OpenAIStub

SHOTS = "/tmp"


def candidates_for_quality(benchmark):
    """Twelve candidates past generation and dedup; three are vague (the stub's
    quality verdict rejects a question containing 模糊)."""
    standard = make_source(
        benchmark, "gbt_standard", "插座额定电压 250 V", "electrical"
    )
    product = make_source(benchmark, "product_record", "螺栓 A2-70", "machinery")
    for index in range(12):
        source = standard if index % 2 else product
        vague = "（模糊）" if index % 4 == 0 else ""
        make_candidate(
            source,
            f"问题 {index}：额定值是多少{vague}？",
            [("dedup", "pass", "")],
            label=source.fields["label"],
        )


@pytest.mark.browser
@pytest.mark.worker
def test_manager_runs_quality_and_reads_the_funnel(
    page, login, benchmark, running_worker, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    candidates_for_quality(benchmark)
    with OpenAIStub(latency=0.4, responder=respond) as stub:
        stub_endpoint(stub)
        # The worker starting beside the browser slows the first pages on a
        # shared 2-core machine.
        page.set_default_timeout(30_000)
        login("manager")
        page.get_by_role("link", name=f"Build {benchmark.name} from sources").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Construction")
        page.get_by_label("Stage").select_option(label="Quality check")
        page.get_by_label("Endpoint").select_option(label="stub-writer")
        page.get_by_role("button", name="Start").click()
        expect(page.locator(".messages")).to_contain_text("started")
        run = StageRun.objects.get(stage="quality")
        row = page.locator(f'tr[data-run="{run.pk}"]')
        expect(row.locator("[data-status]")).to_have_text("Complete", timeout=60_000)
        expect(row).to_contain_text("12 / 12")
        # Polling stopped once the run ended.
        expect(page.locator("#runs")).not_to_have_attribute("hx-get", re.compile(".*"))
        page.reload()
        funnel = page.locator('#funnel [data-stage="quality"]')
        expect(funnel).to_contain_text("25.0 %")
        page.screenshot(path=f"{SHOTS}/construction_quality_done.png", full_page=True)

        page.get_by_role("link", name="Funnel report").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("funnel")
        quality = page.locator('[data-table="funnel"] [data-stage="quality"]')
        expect(quality).to_contain_text("12")
        expect(quality).to_contain_text("25.0 %")
        expect(
            page.locator('[data-table="funnel"] [data-stage="deep"]')
        ).to_contain_text("not run")
        expect(page.locator("#reasons")).to_contain_text("Not enough constraints.")
        chart = page.get_by_role("img", name=re.compile("construction funnel"))
        expect(chart).to_be_visible()
        assert chart.evaluate("image => image.naturalWidth") > 100
        with page.expect_download() as download:
            page.get_by_role("link", name="Download CSV").click()
        body = open(download.value.path(), "rb").read()
        assert body.startswith(b"\xef\xbb\xbfstage,breakdown,group,in,out")
        assert b"quality,all,all,12,9,3,0,25.0,ran" in body
        page.screenshot(path=f"{SHOTS}/construction_funnel.png", full_page=True)

        page.get_by_role("link", name=re.compile("Construction")).first.click()
        rejected = StageDecision.objects.filter(stage="quality", outcome="reject")
        first = rejected.order_by("candidate_id").first()
        page.locator("#rejects").get_by_role(
            "link", name=str(first.candidate_id), exact=True
        ).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(
            f"Candidate {first.candidate_id}"
        )
        decisions = page.locator('[data-table="decisions"]')
        expect(decisions).to_contain_text("Quality check")
        expect(decisions).to_contain_text("Not enough constraints.")
        expect(decisions).to_contain_text("writer-model")
        page.screenshot(path=f"{SHOTS}/construction_candidate.png", full_page=True)
    assert StageRun.objects.get(stage="quality").status == StageRun.Status.COMPLETE


@pytest.mark.browser
def test_dangling_reference_queue_by_keyboard_alone(page, login, personas, benchmark):
    from tests.construction.factories import make_candidate, make_source
    from tests.construction.test_sample_checks import SAMPLED, run_check

    source = make_source(benchmark, "product_record", "某型号接触器 18 A")
    for question in (
        "该产品的额定电流是多少？",
        "本产品的线圈电压是多少？",
        "该型号的触点数量是多少？",
        "上述接触器的寿命是多少次？",
        "CJX2-1810 的额定电流是多少？",
    ):
        make_candidate(source, question, SAMPLED)
    run_check(benchmark, "exact_dedup")
    run_check(benchmark, "dangling")
    slug = benchmark.slug
    waiting = StageDecision.objects.filter(stage="dangling", outcome="pending")
    flags = list(waiting.order_by("id"))
    assert len(flags) == 4

    login("manager")
    page.goto(f"/construction/{slug}/review/")
    count = page.locator('[data-count="waiting"]')
    expect(count).to_have_text("4 waiting")
    expect(page.locator(f'[data-flag="{flags[0].pk}"] mark.hl').first).to_be_visible()
    page.screenshot(path=f"{SHOTS}/construction_review.png", full_page=True)

    settled(page)
    page.keyboard.press("?")
    expect(page.locator("#keys-dialog")).to_be_visible()
    expect(page.locator("#keys-dialog")).to_contain_text("Next flag")
    page.screenshot(path=f"{SHOTS}/construction_review_keys.png")
    page.keyboard.press("Escape")
    expect(page.locator("#keys-dialog")).to_be_hidden()

    page.keyboard.press("a")  # approve the first
    expect(count).to_have_text("3 waiting")
    expect(page.locator(f'[data-flag="{flags[1].pk}"]')).to_be_visible()
    settled(page)
    page.keyboard.press("n")  # pass over the second
    expect(page.locator(f'[data-flag="{flags[2].pk}"]')).to_be_visible()
    settled(page)
    page.keyboard.press("r")  # remove the third, with a reason
    reason = page.get_by_label("Why remove it?")
    expect(reason).to_be_focused()
    page.screenshot(path=f"{SHOTS}/construction_review_remove.png", full_page=True)
    page.keyboard.type("未说明是哪种产品")
    page.keyboard.press("Enter")
    expect(count).to_have_text("2 waiting")
    expect(page.locator(".messages")).to_contain_text(
        f"Candidate {flags[2].candidate_id} removed."
    )
    # Removing without a reason is refused and keeps the flag.
    settled(page)
    current = page.locator("[data-flag]").get_attribute("data-flag")
    page.keyboard.press("r")
    # Enter goes to the reason box once it is open, as a person sees it.
    expect(page.get_by_label("Why remove it?")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("Say why")
    expect(page.locator(f'[data-flag="{current}"]')).to_be_visible()

    outcomes = {
        flag.pk: (flag.outcome, flag.reason, flag.decided_by)
        for flag in StageDecision.objects.filter(pk__in=[f.pk for f in flags])
    }
    manager = personas["manager"]
    assert outcomes[flags[0].pk] == ("pass", "Approved", manager)
    assert outcomes[flags[1].pk][0] == "pending"
    assert outcomes[flags[2].pk] == ("reject", "未说明是哪种产品", manager)
    assert outcomes[flags[3].pk][0] == "pending"
