"""A flagged translation is not approved by one stray key (#18): `a` shows why it was
flagged and Enter confirms; the score says what it means."""

import pytest
from playwright.sync_api import expect

from annotation.actions import do_create_review_campaign
from annotation.models import ReviewDecision
from benchmark.models import Rendering
from judging.translation.pipeline import do_record_review
from tests.annotation.factories import flag_translation, make_items
from tests.annotation.test_browser import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_approving_a_flagged_translation_needs_a_confirmation(
    benchmark, personas, login
):
    item = make_items(benchmark, 1)[0]
    # The source says M1 and 8.8; the target lost the 8.8.
    flagged = flag_translation(
        item, "en", question="What class is an M1 bolt?", answer="The usual class."
    )
    do_record_review(
        flagged,
        item.renderings.get(language="zh", is_current=True),
        run=None,
        reviewer_name="simulated",
        prompt_version="",
        score=3,
        reason="The class was dropped.",
        status="done",
        threshold=5,
    )
    campaign = do_create_review_campaign(
        benchmark, name="English review", assignees=[personas["reviewer"]]
    )
    page = login("reviewer")
    page.goto(f"/annotation/campaigns/{campaign.pk}/review/")
    expect(page.get_by_test_id("faithfulness")).to_contain_text(
        "3 / 5 (1 = meaning lost … 5 = faithful; 5 or more passes, so this was flagged)"
    )
    expect(page.get_by_label("Legend")).to_contain_text(
        "in the source, missing from the target"
    )
    expect(page.get_by_role("button", name="Fix")).to_have_class("primary")
    settled(page)

    page.keyboard.press("a")
    confirm = page.locator("#approver")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("scored its faithfulness 3 / 5")
    expect(confirm).to_contain_text("Missing from the target")
    expect(confirm.get_by_role("button", name="Approve as it is")).to_be_focused()
    page.screenshot(path="/tmp/review-confirm.png", full_page=True)
    assert not ReviewDecision.objects.exists()

    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    assert ReviewDecision.objects.get().decision == "approved"
    assert Rendering.objects.get(pk=flagged.pk).review_status == "approved"
