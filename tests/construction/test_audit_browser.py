"""A reviewer works a stage audit by keyboard; the manager then sees the
stage's precision and recall against people on the stage page; the version
comparison and the dedup sweep render."""

import pytest
from playwright.sync_api import expect

from construction.audits.actions import do_open_audit
from construction.models import StageDecision, StageRun
from judging.llm.models import PromptTemplate
from tests.annotation.test_browser import settled
from tests.construction.factories import make_candidate, make_source

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VERSION = "quality-check-default v1"


def make_ledger(benchmark):
    """Two rejects and two passes of the quality check, a second prompt version
    on the same four candidates, and a dedup run's sweep."""
    source = make_source(
        benchmark, text="GB/T 2099.1-2021 5.2 插座的额定电压不应超过 250 V。"
    )
    plan = [
        ("插座的额定电压最高是多少伏？", "pass", "All four hold."),
        ("这种插座怎么样？", "reject", "Not enough constraints."),
        ("插座的额定电流最高是多少安？", "pass", "All four hold."),
        ("插座好不好？", "reject", "Vague question."),
    ]
    candidates = []
    for question, outcome, reason in plan:
        candidate = make_candidate(source, question, [("dedup", "pass", "")])
        StageDecision.objects.create(
            candidate=candidate,
            stage="quality",
            outcome=outcome,
            reason=reason,
            prompt_version=VERSION,
            model="writer-model",
        )
        StageDecision.objects.create(
            candidate=candidate,
            stage="quality",
            outcome="reject" if outcome == "reject" or "电流" in question else "pass",
            reason="Strict: no tolerance given." if "电流" in question else reason,
            prompt_version="quality-strict v1",
            model="writer-model",
        )
        candidates.append(candidate)
    StageRun.objects.create(
        benchmark=benchmark,
        stage="quality",
        status="complete",
        template=PromptTemplate.objects.create(
            name="quality-strict", purpose="quality_check", text="Strictly {{question}}"
        ),
        trial_size=2,
        trial_seed=7,
    )
    first, second = candidates[0].pk, candidates[2].pk
    StageRun.objects.create(
        benchmark=benchmark,
        stage="dedup",
        status="complete",
        threshold=0.9,
        sweep=[
            {
                "threshold": t,
                "clusters": 4 if t > 0.6 else 3,
                "near_duplicates": 0 if t > 0.6 else 1,
                "exact_duplicates": 0,
                "pairs": [] if t > 0.6 else [[first, second, 0.61]],
            }
            for t in (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5)
        ],
    )
    return candidates


def test_a_reviewer_audits_by_keyboard_and_the_manager_sees_the_measures(
    benchmark, personas, login, page, live_server
):
    make_ledger(benchmark)
    audit = do_open_audit(benchmark, "quality", VERSION, size=4, seed=0)
    order = [
        item.decision.candidate.question for item in audit.items.order_by("position")
    ]

    login("reviewer")
    page.get_by_role("link", name="Stage audits").click()
    page.screenshot(path="/tmp/audit-list.png", full_page=True)
    page.get_by_role("link", name="Work on it").click()
    expect(page.get_by_test_id("question")).to_have_text(order[0])
    expect(page.get_by_test_id("source")).to_contain_text("GB/T 2099.1-2021 5.2")
    expect(page.get_by_test_id("verdict")).to_contain_text("The quality check said")
    settled(page)
    page.screenshot(path="/tmp/audit-screen.png", full_page=True)

    page.keyboard.press("?")
    expect(page.locator("#keys-dialog")).to_be_visible()
    expect(page.locator("#keys-dialog")).to_contain_text("Agree with the automated")
    page.keyboard.press("Escape")
    expect(page.locator("#keys-dialog")).to_be_hidden()

    # Agree on every item but the "current" pass (电流), which people would
    # reject: disagree with a note, typed after pressing n.
    for position, question in enumerate(order):
        expect(page.get_by_test_id("question")).to_have_text(question)
        expect(page.get_by_test_id("answered")).to_have_text(str(position))
        if "电流" in question:
            page.keyboard.press("n")
            expect(page.get_by_label("Note (optional)")).to_be_focused()
            page.keyboard.type("No tolerance is given.")
            page.keyboard.press("Escape")
            page.keyboard.press("d")
        else:
            page.keyboard.press("a")
        settled(page)
    expect(page.get_by_text("Every item of this audit has an answer")).to_be_visible()
    page.screenshot(path="/tmp/audit-done.png", full_page=True)

    # Back to the last answer: it is shown, and answering again adds a row.
    page.keyboard.press("Backspace")
    expect(page.get_by_test_id("question")).to_have_text(order[-1])
    expect(page.get_by_test_id("earlier")).to_contain_text("Your earlier answer")
    settled(page)
    page.screenshot(path="/tmp/audit-revisit.png", full_page=True)
    page.keyboard.press("d" if "电流" in order[-1] else "a")
    expect(page.get_by_text("Every item of this audit has an answer")).to_be_visible()
    last = audit.items.get(position=len(order) - 1)
    assert last.answers.count() == 2
    noted = audit.items.get(decision__candidate__question__contains="电流")
    answer = noted.answers.get()
    assert (answer.agrees, answer.note) == (False, "No tolerance is given.")
    assert answer.reviewer == personas["reviewer"]

    page.context.clear_cookies()
    login("manager")
    page.goto(f"/construction/{benchmark.slug}/")
    expect(page.locator("#stage-pages")).to_contain_text("Deduplication")
    page.screenshot(path="/tmp/construction-page.png")
    page.get_by_role("link", name="Quality check").click()
    expect(page.get_by_text("reject is the positive class")).to_be_visible()
    row = page.locator(f'tr[data-audit="{audit.pk}"]')
    # Precision 2/2 (both rejects right), recall 2/3 (one bad pass missed),
    # agreement 3/4.
    expect(row.locator('[data-measure="precision"]')).to_contain_text("1.00")
    expect(row.locator('[data-measure="precision"]')).to_contain_text("n = 2")
    expect(row.locator('[data-measure="recall"]')).to_contain_text("0.67")
    expect(row.locator('[data-measure="recall"]')).to_contain_text("n = 3")
    expect(row.locator('[data-measure="agreement"]')).to_contain_text("0.75")
    expect(row.locator('[data-measure="agreement"]')).to_contain_text("n = 4")
    expect(page.locator('[data-table="disagreements"]')).to_contain_text(
        "No tolerance is given."
    )
    trials = page.locator('[data-table="trials"]')
    expect(trials).to_contain_text("quality-strict v1")
    page.screenshot(path="/tmp/stage-quality.png", full_page=True)

    page.get_by_label("Compare").select_option(VERSION)
    page.get_by_label("with").select_option("quality-strict v1")
    page.get_by_role("button", name="Compare versions").click()
    expect(page.locator("#differences")).to_contain_text("Strict: no tolerance given.")
    expect(page.locator("#differences")).to_contain_text("All four hold.")
    expect(page.locator("#table")).to_contain_text("0.75")
    page.screenshot(path="/tmp/stage-compare.png", full_page=True)

    page.goto(f"/construction/{benchmark.slug}/stages/dedup/")
    expect(page.locator("#sweep")).to_contain_text("0.61")
    expect(page.locator('[data-table="sweep"] tbody tr')).to_have_count(10)
    page.screenshot(path="/tmp/stage-dedup.png", full_page=True)
