"""The keyboard contract of every review screen (#26): after a refusal, the text a
person types lands in the reason box they were typing in — never on a shortcut.

Each screen is refused once (a reason left empty, a label not picked), then the
letters that are shortcuts elsewhere on the screen ("a", "e", "r"), spaces and
Enter are typed. Nothing but the box's own action may happen: no approval, no
editor, no other decision; the text stays in the box until its own Enter."""

import pytest
from playwright.sync_api import expect

from annotation.actions import (
    do_create_adjudication_campaign,
    do_create_grading_campaign,
    do_create_review_campaign,
)
from annotation.models import (
    AdjudicationLabel,
    Assignment,
    GradingLabel,
    ReviewDecision,
)
from benchmark.models import Benchmark, Rendering
from construction.audits.actions import do_open_audit
from construction.demo import forum as forum_demo
from construction.demo import industrial as construction_demo
from construction.models import AuditAnswer, StageDecision
from judging.robustness import demo as robustness_demo
from judging.robustness.models import VariantDraft
from tests.annotation.factories import (
    flag_translation,
    make_items,
    make_run,
    make_split_consensus,
)
from tests.annotation.test_browser import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Shortcut letters of the screens, with spaces, as a reason would contain them.
REASON_KEYS = ["a", "Space", "e", "Space", "r", "Space", "a"]
TYPED = "a e r a"


def type_reason(page):
    for key in REASON_KEYS:
        page.keyboard.press(key)


def refuse_then_type_reason(page, label):
    """Press "r" and Enter with no reason: refused, the reason box focused; then
    type the shortcut letters. Returns the box."""
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("Say why")
    settled(page)
    reason = page.get_by_label(label)
    expect(reason).to_be_focused()
    type_reason(page)
    return reason


def reject_in_decision_queue(page, url, marker, label, waiting):
    """A construction stage's review queue (`url`; the decision shown carries its
    pk in the `marker` attribute): refused once, the reason typed ("?" and "n"
    included) stays in the box and decides nothing until its own Enter rejects the
    decision shown with that reason."""
    before = waiting.count()
    page.goto(url)
    shown = page.locator(f"[{marker}]")
    expect(shown).to_be_visible()
    settled(page)
    decision = int(shown.get_attribute(marker))
    reason = refuse_then_type_reason(page, label)
    page.keyboard.type("? n")
    expect(reason).to_have_value(TYPED + "? n")
    assert waiting.count() == before
    expect(page.locator("#keys-dialog")).to_be_hidden()
    page.keyboard.press("Enter")
    expect(page.locator('[data-count="waiting"]')).to_have_text(f"{before - 1} waiting")
    decided = StageDecision.objects.get(pk=decision)
    assert (decided.outcome, decided.reason) == ("reject", TYPED + "? n")
    assert waiting.count() == before - 1


def test_translation_review_keeps_the_reason_after_a_refusal(
    benchmark, personas, login
):
    item = make_items(benchmark, 1)[0]
    flagged = flag_translation(item, "en")
    campaign = do_create_review_campaign(
        benchmark, name="English review", assignees=[personas["reviewer"]]
    )
    page = login("reviewer")
    page.goto(f"/annotation/campaigns/{campaign.pk}/review/")
    expect(page.locator("[data-testid=target-question]")).to_be_visible()
    settled(page)
    reason = refuse_then_type_reason(page, "Why reject?")
    expect(reason).to_have_value(TYPED)
    expect(page.locator("#approver")).to_be_hidden()
    expect(page.locator("#editor")).to_be_hidden()
    assert not ReviewDecision.objects.exists()
    assert Rendering.objects.get(pk=flagged.pk).review_status == "flagged"
    # Clicking elsewhere and typing on: still the reason box's keys.
    page.locator("[data-testid=target-question]").click()
    page.keyboard.press("Space")
    page.keyboard.press("e")
    expect(reason).to_have_value(TYPED + " e")
    assert not ReviewDecision.objects.exists()
    page.screenshot(path="/tmp/keyboard-review-refused.png", full_page=True)
    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    decision = ReviewDecision.objects.get()
    assert (decision.decision, decision.reason) == ("rejected", TYPED + " e")


def test_variant_review_keeps_the_reason_after_a_refusal(personas, login):
    benchmark = robustness_demo.seed(None)
    page = login("reviewer")
    page.goto(f"/judging/robustness/{benchmark.slug}/review/")
    shown = page.get_by_test_id("draft-text")
    expect(shown).to_be_visible()
    settled(page)
    draft = VariantDraft.objects.get(text=shown.inner_text())
    approved = VariantDraft.objects.filter(status="approved").count()
    reason = refuse_then_type_reason(page, "Why reject?")
    expect(reason).to_have_value(TYPED)
    expect(page.locator("#editor")).to_be_hidden()
    draft.refresh_from_db()
    assert draft.status == "awaiting"
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("awaiting")).to_contain_text("1 awaiting")
    draft.refresh_from_db()
    assert (draft.status, draft.reason) == ("rejected", TYPED)
    assert VariantDraft.objects.filter(status="approved").count() == approved


def test_dangling_reference_queue_keeps_the_reason_after_a_refusal(personas, login):
    construction_demo.seed()
    # The demo reviews its flags before it releases; two wait again here, so the
    # count is still on the page after one is removed.
    StageDecision.objects.filter(
        pk__in=StageDecision.objects.filter(stage="dangling", outcome="reject")
        .order_by("pk")
        .values("pk")[:2]
    ).update(outcome="pending", decided_by=None)
    reject_in_decision_queue(
        login("manager"),
        f"/construction/{construction_demo.CONSTRUCTION_SLUG}/review/",
        "data-flag",
        "Why remove it?",
        StageDecision.objects.filter(stage="dangling", outcome="pending"),
    )


def test_adjudication_note_keeps_its_text_after_a_refusal(benchmark, personas, login):
    item = make_items(benchmark, 1)[0]
    make_split_consensus(benchmark, item)
    campaign = do_create_adjudication_campaign(
        benchmark, name="Splits", assignees=[personas["adjudicator"]]
    )
    page = login("adjudicator")
    page.goto(f"/annotation/campaigns/{campaign.pk}/adjudicate/")
    note = page.locator("input[name=note]")
    expect(note).to_be_visible()
    settled(page)
    page.keyboard.press("/")
    page.keyboard.type("Rationale")
    page.keyboard.press("Enter")  # no label picked: refused
    expect(page.get_by_role("alert")).to_contain_text("Pick the final label")
    settled(page)
    expect(note).to_be_focused()
    for key in ["Space", "1", "Space", "l", "Space", "a"]:
        page.keyboard.press(key)
    expect(note).to_have_value("Rationale 1 l a")
    expect(page.locator("input[name=label]:checked")).to_have_count(0)
    assert not AdjudicationLabel.objects.exists()


def test_grading_skip_reason_and_audit_note_take_the_keys(benchmark, personas, login):
    items = make_items(benchmark, 2)
    make_run(benchmark, items)
    campaign = do_create_grading_campaign(
        benchmark, name="Round", size=2, seed=1, assignees=[personas["expert"]]
    )
    page = login("expert")
    page.goto(f"/annotation/campaigns/{campaign.pk}/grade/")
    expect(page.locator("input[name=score]").first).to_be_visible()
    settled(page)
    page.keyboard.press("k")
    page.keyboard.press("Enter")  # no reason: the browser refuses
    reason = page.locator("#skip-dialog input[name=reason]")
    expect(reason).to_be_focused()
    for key in ["1", "Space", "s", "Space", "Backspace", "a"]:
        page.keyboard.press(key)
    expect(reason).to_have_value("1 sa")
    assert not GradingLabel.objects.exists()
    assert not Assignment.objects.filter(status="skipped").exists()


def test_audit_note_takes_the_keys(personas, login):
    construction_demo.seed()
    benchmark = Benchmark.objects.get(slug=construction_demo.CONSTRUCTION_SLUG)
    run = benchmark.stage_runs.filter(stage="quality").first()
    audit = do_open_audit(benchmark, "quality", run.prompt_version, size=3, seed=4)
    page = login("reviewer")
    page.goto(f"/construction/audits/{audit.pk}/")
    note = page.locator("textarea[name=note]")
    expect(note).to_be_visible()
    settled(page)
    answers = AuditAnswer.objects.filter(item__audit=audit).count()
    page.keyboard.press("n")
    for key in ["a", "Space", "d", "Space", "Backspace", "r"]:
        page.keyboard.press(key)
    expect(note).to_have_value("a dr")
    assert AuditAnswer.objects.filter(item__audit=audit).count() == answers


def test_forum_expert_queue_keeps_the_reason_after_a_refusal(personas, login):
    forum_demo.seed()
    waiting = StageDecision.objects.filter(stage="expert", outcome="pending")
    assert waiting.count() >= 2  # the demo leaves two for an expert
    reject_in_decision_queue(
        login("expert"),
        f"/construction/{forum_demo.FORUM_SLUG}/forum/expert/",
        "data-item",
        "Why reject it?",
        waiting,
    )
