"""A manager generates variants by clicking, a reviewer approves an LLM-written
variant by keyboard, and the manager reads the robustness report (tables and
heatmaps)."""

import pytest
from playwright.sync_api import expect

from benchmark.models import ItemVariant
from judging.robustness import demo
from judging.robustness.models import VariantDraft
from tests.judging.robustness_fixtures import MC_OPTIONS, make_seed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_generates_variants_by_clicking(benchmark, login):
    make_seed(
        benchmark,
        "MC-1",
        "插座的额定电压？长100 cm。",
        options=MC_OPTIONS,
        correct_options=["A"],
    )
    make_seed(benchmark, "TF-1", "插座额定电流为16 A。", correct_answer=True)
    page = login("manager")
    page.get_by_role("link", name="Robustness of Test bench").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Robustness")
    page.get_by_label("synonym").uncheck()  # no glossary yet: nothing to replace
    page.get_by_label("Sector from").select_option(label="Item domain")
    page.get_by_role("button", name="Generate variants").click()
    expect(page.get_by_text("new variants")).to_be_visible()
    expect(page.locator("[data-count=variants]")).not_to_have_text("0")
    page.screenshot(path="/tmp/robustness-page.png", full_page=True)
    relations = set(ItemVariant.objects.values_list("relation", flat=True))
    assert relations == {
        "magnitude",
        "precision",
        "order",
        "general_context",
        "irrelevant_content",
    }
    expect(page.locator("td[data-relation=order]")).to_have_text("1")


def test_a_reviewer_approves_by_keyboard_and_the_manager_reads_the_report(
    personas, login, signed_in_page
):
    benchmark = demo.seed(None)
    first = VariantDraft.objects.filter(status="awaiting").order_by("id").first()
    page = login("reviewer")
    page.goto(f"/judging/robustness/{benchmark.slug}/review/")
    expect(page.get_by_test_id("draft-text")).to_have_text(first.text)
    expect(page.get_by_test_id("awaiting")).to_contain_text("2 awaiting")
    page.screenshot(path="/tmp/robustness-review.png", full_page=True)
    page.keyboard.press("a")
    expect(page.get_by_test_id("awaiting")).to_contain_text("1 awaiting")
    first.refresh_from_db()
    assert (first.status, first.reviewed_by.username) == ("approved", "reviewer")
    assert first.variant.variant_of.relation == "logic"
    # The next one is rejected, by keyboard too: r, the reason, Enter.
    page.keyboard.press("r")
    page.keyboard.type("changes the unit, not the claim")
    page.screenshot(path="/tmp/robustness-review-reject.png", full_page=True)
    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing awaits review.")).to_be_visible()
    second = VariantDraft.objects.get(
        reviewed_by__username="reviewer", status="rejected"
    )
    assert second.reason == "changes the unit, not the claim"

    manager = signed_in_page("manager")
    manager.goto(f"/judging/robustness/{benchmark.slug}/")
    manager.get_by_role("link", name="robustness report").click()
    summary = manager.locator("table[data-table=robustness]")
    expect(summary.locator("tbody tr")).to_have_count(len(demo.MODELS))
    expect(summary).to_contain_text("atlas-pro (zh)")
    # Read one language at a time: the source language's runs here.
    expect(
        manager.get_by_test_id("report-languages").locator("[aria-current=page]")
    ).to_have_text("中文")
    expect(manager.locator("table[data-table=correct-by-relation]")).to_contain_text(
        "logic"
    )
    expect(manager.locator("#heatmap-relation svg")).to_be_visible()
    expect(manager.locator("#heatmap-sector svg")).to_be_visible()
    manager.screenshot(path="/tmp/parts/robustness-report.png", full_page=True)
    manager.goto(f"/judging/variant-runs/{first.run_id}/")
    expect(manager.locator("[data-status]")).to_have_text("Complete")
    manager.screenshot(path="/tmp/robustness-run.png", full_page=True)
