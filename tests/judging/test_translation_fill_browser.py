"""A manager re-runs a translation in chromium: the first run translates only what
is missing (a machine translation already there and a person's edit are kept and
counted), the second, with *Also re-translate machine translations already there*
ticked, translates the machine work again and still keeps the person's."""

import pytest
from playwright.sync_api import expect

from benchmark.actions import do_add_rendering_version
from benchmark.models import Rendering
from judging.translation.models import TranslationRun
from tests.judging.test_translation_views import queued, run_queued, stub
from tests.judging.translation_fixtures import add_items, make_endpoints, make_responder

__all__ = ["queued", "stub"]  # fixtures used by name


def _start(page, benchmark, *, overwrite: bool):
    page.goto("/judging/translation/")
    page.locator("#id_benchmark").select_option(label=str(benchmark))
    page.get_by_label("English").check()
    page.locator("#id_translator").select_option(label="translator")
    page.locator("#id_reviewer").select_option(label="reviewer")
    if overwrite:
        page.get_by_label(
            "Also re-translate machine translations already there"
        ).check()
    page.get_by_role("button", name="Start translation").click()
    page.wait_for_url("**/judging/translation/*/")


@pytest.mark.browser
def test_a_rerun_fills_what_is_missing_and_overwrites_machine_work_when_asked(
    transactional_db, login, benchmark, stub, queued, personas
):
    items = add_items(benchmark)
    do_add_rendering_version(
        items["ip"],
        "en",
        question="How deep can an IP67 enclosure be immersed?",
        answer="1 m, for 30 min.",
        origin=Rendering.Origin.MACHINE,
        review_status=Rendering.ReviewStatus.FLAGGED,
    )
    edited = do_add_rendering_version(
        items["bolt"],
        "en",
        question="A reviewer's question about the M12 bolt (GB/T 3098.1-2010)?",
        answer="800 MPa.",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.APPROVED,
        user=personas["reviewer"],
    )
    stub.responder = make_responder()
    make_endpoints(stub)
    page = login("manager")

    _start(page, benchmark, overwrite=False)
    run_queued(queued)
    counts = page.locator("#run-counts")
    expect(page.locator("#progress")).to_contain_text("Complete")
    expect(counts.locator("[data-count=translated]")).to_have_text("2")
    expect(counts.locator("[data-count=kept]")).to_have_text("1")
    expect(counts.locator("[data-count=present]")).to_have_text("1")

    _start(page, benchmark, overwrite=True)
    expect(page.get_by_text("overwrites machine translations")).to_be_visible()
    run_queued(queued)
    expect(page.locator("#progress")).to_contain_text("Complete")
    expect(counts.locator("[data-count=translated]")).to_have_text("3")
    expect(counts.locator("[data-count=kept]")).to_have_text("1")
    expect(counts.locator("[data-count=present]")).to_have_text("0")
    page.screenshot(path="/tmp/parts/translation-overwrite.png", full_page=True)
    assert [run.overwrite_machine for run in TranslationRun.objects.order_by("pk")] == [
        False,
        True,
    ]
    assert Rendering.objects.get(
        item=items["bolt"], language="en", is_current=True
    ) == (edited)
