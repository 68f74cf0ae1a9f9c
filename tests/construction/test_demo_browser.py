"""On the construction demo, seeded as `load_demo` seeds it: a manager opens the
funnel, follows search verification's rejects to a candidate and reads its
evidence (queries, results) and reason; a reviewer opens the demo's stage audit
from the nav and answers what is left by keyboard; the manager then reads the
quality check's measures on its stage page."""

import pytest
from playwright.sync_api import expect

from benchmark.models import Benchmark
from construction.demo import industrial as demo
from construction.models import StageAudit, StageDecision
from tests.annotation.test_browser import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def construction_demo(personas):
    demo.seed()
    return Benchmark.objects.get(slug=demo.CONSTRUCTION_SLUG)


def test_manager_follows_the_funnel_to_a_search_reject(construction_demo, login, page):
    slug = construction_demo.slug
    rejected = StageDecision.objects.get(
        stage="search", reason__startswith="No source corroborates the 6 000 A"
    )
    login("manager")
    page.goto(f"/construction/{slug}/funnel/")
    funnel = page.locator("[data-table=funnel]")
    for stage in ("search", "deep"):
        expect(funnel.locator(f"tr[data-stage={stage}] [data-not-run]")).to_have_count(
            0
        )
    expect(funnel.locator("tr[data-stage=search]")).to_contain_text("4")
    expect(page.locator('[data-reasons="Search verification"]')).to_contain_text(
        demo.NO_RESULT
    )
    page.screenshot(path="/tmp/demo-funnel.png", full_page=True)

    page.locator("#reasons h3", has_text="Search verification").get_by_role(
        "link", name="each rejected candidate"
    ).click()
    expect(page).to_have_url(f"{page.url.split('#')[0]}#rejects-search")
    rejects = page.locator('[data-rejects="search"]')
    expect(rejects.locator("tbody tr")).to_have_count(4)
    rejects.get_by_role("row", name=rejected.reason).get_by_role(
        "link", name=str(rejected.candidate_id)
    ).click()

    expect(
        page.get_by_role("heading", name=f"Candidate {rejected.candidate_id}")
    ).to_be_visible()
    decisions = page.locator("[data-table=decisions]")
    expect(decisions).to_contain_text(rejected.reason)
    evidence = page.locator("[data-evidence=search]")
    expect(evidence).to_contain_text("Reject")
    expect(evidence).to_contain_text("searxng-demo")
    queries = evidence.locator("[data-list=queries] li")
    expect(queries).to_have_text(rejected.evidence["queries"])
    results = rejected.evidence["results"]
    rows = evidence.locator("[data-table=results] tbody tr")
    expect(rows).to_have_count(len(results))
    for row, result in zip(rows.all(), results, strict=True):
        expect(row).to_contain_text(result["title"])
        expect(row).to_contain_text(result["url"])
        expect(row).to_contain_text(result["snippet"])
        expect(row).to_contain_text(result["retrieved_at"][:10])
    page.screenshot(path="/tmp/demo-candidate-search-reject.png", full_page=True)


def test_reviewer_answers_the_demo_audit_by_keyboard(construction_demo, login, page):
    audit = StageAudit.objects.get(benchmark=construction_demo)

    login("reviewer")
    page.get_by_role("link", name="Stage audits").click()
    row = page.get_by_role("row", name=construction_demo.name)
    expect(row).to_contain_text(f"{demo.AUDIT_ANSWERED} / {demo.AUDIT_SIZE}")
    row.get_by_role("link", name="Work on it").click()
    expect(page.get_by_test_id("answered")).to_have_text(str(demo.AUDIT_ANSWERED))
    # The screen takes its first item after it has loaded: keys wait for it.
    expect(page.get_by_test_id("question")).to_be_visible()
    settled(page)
    page.screenshot(path="/tmp/demo-audit.png", full_page=True)
    # Agree with each verdict left, but disagree with the last one.
    for answered in range(demo.AUDIT_ANSWERED, demo.AUDIT_SIZE):
        expect(page.get_by_test_id("answered")).to_have_text(str(answered))
        page.keyboard.press("d" if answered == demo.AUDIT_SIZE - 1 else "a")
        settled(page)
    expect(page.get_by_text("Every item of this audit has an answer")).to_be_visible()
    mine = audit.items.filter(answers__reviewer__username="reviewer")
    assert mine.distinct().count() == demo.AUDIT_SIZE
    assert audit.items.filter(answers__isnull=True).count() == 0

    page.context.clear_cookies()
    login("manager")
    page.goto(f"/construction/{construction_demo.slug}/")
    page.locator("#stage-pages").get_by_role("link", name="Quality check").click()
    row = page.locator(f'tr[data-audit="{audit.pk}"]')
    expect(row.locator('[data-measure="agreement"]')).to_contain_text(
        f"n = {demo.AUDIT_SIZE}"
    )
    expect(page.locator('[data-table="disagreements"]')).to_contain_text(
        demo.AUDIT_NOTES["reject"]
    )
    page.screenshot(path="/tmp/demo-stage-quality.png", full_page=True)
