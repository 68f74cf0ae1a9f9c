"""A reviewer fixes option B of a Russian rendering by keyboard: `e` opens the
part-by-part editor, Tab walks to option B, an emptied option is refused with the
reason (nothing saved, the typing kept), and Ctrl+Enter saves and approves."""

import pytest
from playwright.sync_api import expect

from annotation.models import ReviewDecision
from benchmark.models import Rendering
from tests.annotation.review_parts_fixtures import flagged_russian_mc
from tests.annotation.test_browser import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reviewer_edits_option_b_by_keyboard_and_approves(benchmark, personas, login):
    item, campaign = flagged_russian_mc(benchmark, personas["reviewer"])
    page = login("reviewer")
    page.goto(f"/annotation/campaigns/{campaign.pk}/review/")
    parts = page.get_by_test_id("parts")
    expect(parts.get_by_test_id("target-option_B")).to_have_text("10 кВт")
    expect(parts.locator('[data-part="option C"]')).to_contain_text(
        "not preserved: 10.9 → 109"
    )
    settled(page)
    page.screenshot(path="/tmp/parts/review-parts.png", full_page=True)

    page.keyboard.press("?")
    keys = page.locator("#keys-dialog")
    expect(keys).to_contain_text("In the editor: the next / previous part")
    page.keyboard.press("Escape")
    expect(keys).not_to_be_visible()

    page.keyboard.press("e")
    expect(page.get_by_label("Question", exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    option_b = page.get_by_label("Option B", exact=True)
    expect(option_b).to_be_focused()
    # Emptied by mistake: refused, nothing saved, the editor still open there.
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.keyboard.press("Control+Enter")
    refusal = page.get_by_text("Empty: option B. Every part needs a text.")
    expect(refusal).to_be_visible()
    expect(option_b).to_be_focused()
    assert not ReviewDecision.objects.exists()

    page.keyboard.type("10 кВ")
    page.screenshot(path="/tmp/parts/review-parts-editor.png", full_page=True)
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    current = Rendering.objects.get(item=item, language="ru", is_current=True)
    assert current.options == ["6 кВ", "10 кВ", "109 кВ", "35 кВ"]
    assert (current.origin, current.review_status) == ("human_edited", "approved")
    assert ReviewDecision.objects.get().decision == "edited"
