"""A labelling run's consensus never silently replaces an imported label: the manager
sees it as a suggestion beside the final label, applies the chosen ones, and undoes
the whole application in one step (#19)."""

import pytest
from playwright.sync_api import expect

from benchmark.actions import do_set_final_label
from benchmark.models import FinalLabel
from judging.labelling.actions import do_apply_consensus
from judging.llm.actions import do_save_endpoint
from tests.judging.labelling_fixtures import FULL, OTHER, label, labelled_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def capability_of(item) -> FinalLabel:
    return FinalLabel.objects.get(item=item, dimension__code="capability")


def test_a_manager_applies_a_suggestion_and_undoes_it(benchmark, login):
    annotators = [
        do_save_endpoint(
            name,
            base_url="http://127.0.0.1:9/v1",
            model=name,
            api_key_env="STUB_API_KEY",
        )
        for name in ("ann-a", "ann-b", "ann-c")
    ]
    run, items = labelled_run(
        benchmark,
        annotators,
        {"A-1": (OTHER, OTHER, FULL), "A-2": (OTHER, OTHER, OTHER)},
    )
    imported = label("capability", "fault_diagnosis")
    for item in items.values():
        do_set_final_label(item, imported, provenance="imported")
    do_apply_consensus(run)
    assert capability_of(items["A-1"]).provenance == "imported"

    page = login("manager")
    page.goto(f"/judging/labelling/{run.pk}/")
    table = page.locator("table[data-table=suggestions]")
    expect(page.locator("h2#suggestions")).to_contain_text("(2)")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table).to_contain_text("Imported")
    page.get_by_label("Apply to A-1 Capability").check()
    page.screenshot(path="/tmp/suggestions.png", full_page=True)
    page.get_by_role("button", name="Apply the chosen suggestions").click()
    expect(page.get_by_text("1 final label(s) now follow")).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(1)
    applied = capability_of(items["A-1"])
    assert (applied.label.code, applied.provenance) == ("quality_metrology", "majority")
    assert capability_of(items["A-2"]).provenance == "imported"

    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_text("1 final label(s) put back.")).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(2)
    restored = capability_of(items["A-1"])
    assert (restored.label, restored.provenance) == (imported, "imported")
    expect(page.get_by_text("undone by manager")).to_be_visible()
