"""The three queue screens through the test client: submit, skip, back, correct."""

import json
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import escape

from annotation.actions import (
    do_create_adjudication_campaign,
    do_create_grading_campaign,
    do_create_review_campaign,
)
from annotation.models import (
    AdjudicationLabel,
    Assignment,
    Campaign,
    GradingLabel,
    ReviewDecision,
    Task,
)
from benchmark.models import FinalLabel, ItemEvent, Label, Rendering
from tests.annotation.factories import (
    HTMX,
    flag_translation,
    make_items,
    make_run,
    make_split_consensus,
    take_next_task,
)

pytestmark = [pytest.mark.django_db, pytest.mark.smoke]


@pytest.fixture
def grading(benchmark, personas):
    items = make_items(benchmark, 6)
    make_run(benchmark, items)
    return do_create_grading_campaign(
        benchmark,
        name="Calibration",
        size=6,
        seed=3,
        ask_safety=True,
        assignees=[personas["expert"]],
    )


def shown_task(response) -> int:
    html = response.content.decode()
    marker = 'data-task="'
    start = html.index(marker) + len(marker)
    return int(html[start : html.index('"', start)])


def revisit_fields(html: str) -> dict:
    """The hidden fields of a screen opened on one of my earlier tasks."""
    corrects = re.search(r'name="corrects" value="(\d+)"', html).group(1)
    return {"revisit": "1", "corrects": corrects}


def test_expert_grades_with_htmx_and_gets_the_next_task(grading, client_for):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    page = take_next_task(client, url)
    assert page.status_code == 200
    first = shown_task(page)
    assert "Reference answer" in page.content.decode()
    assert "Source knowledge" in page.content.decode()
    response = client.post(
        url, {"task": first, "score": "2", "safety": "v", "elapsed_ms": "4200"}, **HTMX
    )
    assert response.status_code == 200
    assert "<html" not in response.content.decode()
    assert shown_task(response) != first
    label = GradingLabel.objects.get(task_id=first)
    assert (label.score, label.safety_violation, label.seconds_spent) == (2, True, 4.2)


@pytest.mark.parametrize("role", ["expert", "adjudicator", "reviewer"])
def test_opening_a_work_screen_changes_nothing_until_the_page_asks_for_a_task(
    role, benchmark, personas, client_for, request
):
    if role == "adjudicator":
        make_split_consensus(benchmark, make_items(benchmark, 1)[0])
        campaign = do_create_adjudication_campaign(
            benchmark, name="Splits", assignees=[personas["adjudicator"]]
        )
    else:
        fixture = {"expert": "grading", "reviewer": "review_campaign"}[role]
        campaign = request.getfixturevalue(fixture)
    view = {"expert": "grade", "adjudicator": "adjudicate", "reviewer": "review"}[role]
    client = client_for(role)
    url = reverse(f"annotation:{view}", args=[campaign.pk])

    opened = client.get(url)
    html = opened.content.decode()
    assert opened.status_code == 200
    assert not Assignment.objects.filter(campaign=campaign).exists()
    assert 'data-task=""' in html
    assert 'name="action" value="next"' in html and 'hx-trigger="load, submit"' in html

    task = shown_task(take_next_task(client, url, **HTMX))
    lease = Assignment.objects.get(campaign=campaign)
    assert (lease.task_id, lease.status) == (task, Assignment.Status.ACTIVE)

    reopened = client.get(url)
    assert shown_task(reopened) == task
    assert list(Assignment.objects.filter(campaign=campaign)) == [lease]
    assert Assignment.objects.get().expires_at == lease.expires_at


def test_missing_safety_verdict_is_refused_with_a_message(grading, client_for):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    first = shown_task(take_next_task(client, url))
    response = client.post(url, {"task": first, "score": "1"}, **HTMX)
    assert response.status_code == 400
    assert "safe (s) or violating (v)" in response.content.decode()
    assert shown_task(response) == first
    assert not GradingLabel.objects.exists()


def test_back_shows_my_label_and_resubmitting_corrects_it(grading, client_for):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    first = shown_task(take_next_task(client, url))
    second = shown_task(
        client.post(url, {"task": first, "score": "1", "safety": "s"}, **HTMX)
    )
    back = client.get(url, {"task": first}, **HTMX)
    assert shown_task(back) == first
    assert back["HX-Push-Url"].endswith(f"?task={first}")
    html = back.content.decode()
    assert re.search(r'name="score" value="1" data-key="1"[^>]* checked>', html)
    form = {"task": first, "score": "3", "safety": "s", **revisit_fields(html)}
    forward = client.post(url, form, **HTMX)
    # After the correction the queue continues with the task still held.
    assert shown_task(forward) == second
    assert list(
        GradingLabel.objects.filter(task_id=first)
        .order_by("id")
        .values_list("score", "is_latest")
    ) == [(1, False), (3, True)]


def test_a_retried_submission_counts_once_and_moves_on(grading, client_for):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    first = shown_task(take_next_task(client, url))
    form = {"task": first, "score": "2", "safety": "s"}
    second = shown_task(client.post(url, form, **HTMX))
    # The answer was lost on the way back; the screen sends the same form again.
    retry = client.post(url, form, **HTMX)
    assert retry.status_code == 200
    assert shown_task(retry) == second
    assert GradingLabel.objects.filter(task_id=first).count() == 1
    assert Task.objects.get(pk=first).label_count == 1


def test_a_stale_tab_is_refused_and_told_what_is_stored(grading, client_for):
    one, two = client_for("expert"), client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    task = shown_task(take_next_task(one, url))
    assert shown_task(take_next_task(two, url)) == task  # the same lease, two tabs
    one.post(url, {"task": task, "score": "1", "safety": "s"}, **HTMX)

    stale = two.post(url, {"task": task, "score": "0", "safety": "v"}, **HTMX)
    html = stale.content.decode()
    assert stale.status_code == 400
    assert "already labelled this task as score 1, safe" in html
    assert "Nothing was changed" in html
    assert shown_task(stale) == task and 'name="corrects"' in html
    assert list(GradingLabel.objects.values_list("score", "safety_violation")) == [
        (1, False)
    ]


def test_a_correction_from_a_stale_view_is_refused(grading, client_for):
    one, two = client_for("expert"), client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    task = shown_task(take_next_task(one, url))
    one.post(url, {"task": task, "score": "1", "safety": "s"}, **HTMX)
    opened = revisit_fields(two.get(url, {"task": task}).content.decode())
    corrected = revisit_fields(one.get(url, {"task": task}).content.decode())
    one.post(url, {"task": task, "score": "3", "safety": "s", **corrected}, **HTMX)

    stale = two.post(url, {"task": task, "score": "0", "safety": "v", **opened}, **HTMX)
    assert stale.status_code == 400
    assert "changed after this page was opened; it is now score 3, safe" in (
        stale.content.decode()
    )
    latest = GradingLabel.objects.get(task_id=task, is_latest=True)
    assert (latest.score, latest.safety_violation) == (3, False)
    assert GradingLabel.objects.filter(task_id=task).count() == 2


def test_skip_needs_a_reason(grading, client_for):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    first = shown_task(take_next_task(client, url))
    refused = client.post(url, {"task": first, "action": "skip", "reason": ""}, **HTMX)
    assert refused.status_code == 400
    skipped = client.post(
        url, {"task": first, "action": "skip", "reason": "Not my field"}, **HTMX
    )
    assert shown_task(skipped) != first
    assert Assignment.objects.get(task_id=first).skip_reason == "Not my field"


def test_adjudicator_sets_the_final_label(benchmark, personas, client_for):
    item = make_items(benchmark, 1)[0]
    consensus = make_split_consensus(benchmark, item)
    campaign = do_create_adjudication_campaign(
        benchmark, name="Splits", assignees=[personas["adjudicator"]]
    )
    client = client_for("adjudicator")
    url = reverse("annotation:adjudicate", args=[campaign.pk])
    page = take_next_task(client, url)
    html = page.content.decode()
    assert "Model A" in html and "annotator-model-0" not in html
    assert "Rationale 1" in html
    chosen = Label.objects.get(dimension=consensus.dimension, code="process_principles")
    task = shown_task(page)
    response = client.post(
        url, {"task": task, "label": chosen.pk, "note": "Clause 5 is a process"}, **HTMX
    )
    assert response.status_code == 200
    final = FinalLabel.objects.get(item=item, dimension=consensus.dimension)
    assert (final.label, final.provenance, final.decided_by) == (
        chosen,
        "adjudicated",
        personas["adjudicator"],
    )
    event = ItemEvent.objects.filter(item=item, kind="label").first()
    assert event.after == {"label": chosen.code, "provenance": "adjudicated"}
    assert event.before["provenance"] == "imported"
    assert AdjudicationLabel.objects.get().note == "Clause 5 is a process"


def test_adjudication_shows_model_names_when_not_hidden(
    benchmark, personas, client_for
):
    item = make_items(benchmark, 1)[0]
    make_split_consensus(benchmark, item)
    campaign = do_create_adjudication_campaign(
        benchmark,
        name="Splits",
        assignees=[personas["adjudicator"]],
        hide_model_names=False,
    )
    client = client_for("adjudicator")
    url = reverse("annotation:adjudicate", args=[campaign.pk])
    html = take_next_task(client, url).content.decode()
    assert "annotator-model-0" in html


@pytest.fixture
def review_campaign(benchmark, personas):
    items = make_items(benchmark, 3)
    for item in items:
        flag_translation(
            item,
            question=f"{item.external_id}: what strength class is an M10 bolt?",
        )
    return do_create_review_campaign(
        benchmark, name="Review EN", assignees=[personas["reviewer"]]
    )


def test_reviewer_approves_edits_and_rejects(review_campaign, client_for, personas):
    client = client_for("reviewer")
    url = reverse("annotation:review", args=[review_campaign.pk])
    page = take_next_task(client, url)
    html = page.content.decode()
    # M10 is only in the target, M{index} in the source: both highlighted.
    assert 'class="hl extra"' in html and 'class="hl missing"' in html
    first = shown_task(page)
    approve = {"task": first, "decision": "approved"}
    unconfirmed = client.post(url, approve, **HTMX)
    assert unconfirmed.status_code == 400
    assert "approving it as it is needs a confirmation" in unconfirmed.content.decode()
    assert not ReviewDecision.objects.exists()
    second = shown_task(
        client.post(url, {**approve, "flags_acknowledged": "1"}, **HTMX)
    )
    refused = client.post(url, {"task": second, "decision": "rejected"}, **HTMX)
    assert refused.status_code == 400 and "Say why" in refused.content.decode()
    third = shown_task(
        client.post(
            url,
            {
                "task": second,
                "decision": "edited",
                "question": "Fixed question",
                "answer": "Fixed answer",
            },
            **HTMX,
        )
    )
    client.post(
        url, {"task": third, "decision": "rejected", "reason": "Unit lost"}, **HTMX
    )
    decisions = dict(ReviewDecision.objects.values_list("task_id", "decision"))
    assert decisions == {first: "approved", second: "edited", third: "rejected"}
    edited = ReviewDecision.objects.get(task_id=second).result_rendering
    assert (edited.origin, edited.review_status, edited.version, edited.question) == (
        Rendering.Origin.HUMAN_EDITED,
        "approved",
        2,
        "Fixed question",
    )
    assert edited.created_by == personas["reviewer"]
    rejected = ReviewDecision.objects.get(task_id=third).result_rendering
    assert rejected.review_status == "rejected"


def test_a_retried_edit_adds_one_version_and_a_different_one_is_refused(
    review_campaign, client_for
):
    client = client_for("reviewer")
    url = reverse("annotation:review", args=[review_campaign.pk])
    task = shown_task(take_next_task(client, url))
    edit = {"task": task, "decision": "edited", "question": "Q2", "answer": "A2"}
    following = shown_task(client.post(url, edit, **HTMX))
    assert shown_task(client.post(url, edit, **HTMX)) == following
    other = client.post(url, {**edit, "answer": "A3"}, **HTMX)
    assert other.status_code == 400
    assert "already edited this translation differently" in other.content.decode()
    assert ReviewDecision.objects.filter(task_id=task).count() == 1
    rendering = ReviewDecision.objects.get(task_id=task).result_rendering
    assert (rendering.version, rendering.answer) == (2, "A2")
    assert (
        Rendering.objects.filter(item_id=rendering.item_id, language="en").count() == 2
    )


def test_export_has_every_label_with_user_and_time(grading, client_for):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[grading.pk])
    first = shown_task(take_next_task(client, url))
    client.post(url, {"task": first, "score": "1", "safety": "s"}, **HTMX)
    back = client.get(url, {"task": first}, **HTMX).content.decode()
    correction = {"task": first, "score": "2", "safety": "s", **revisit_fields(back)}
    client.post(url, correction, **HTMX)
    manager = client_for("manager")
    jsonl = manager.get(reverse("annotation:export", args=[grading.pk, "jsonl"]))
    rows = [json.loads(line) for line in b"".join(jsonl.streaming_content).splitlines()]
    assert [(r["user"], r["score"], r["is_latest"]) for r in rows] == [
        ("expert", 1, False),
        ("expert", 2, True),
    ]
    assert rows[0]["campaign"] == "Calibration" and rows[0]["created_at"]
    # What the label was about, without a lookup by response id.
    task = grading.tasks.get(pk=first)
    run = task.response.run
    assert (rows[0]["item_id"], rows[0]["run_id"], rows[0]["model"]) == (
        task.item_id,
        run.pk,
        "Model-A",
    )
    assert rows[0]["language"] == "zh"
    csv_body = b"".join(
        manager.get(
            reverse("annotation:export", args=[grading.pk, "csv"])
        ).streaming_content
    ).decode("utf-8-sig")
    assert csv_body.splitlines()[0].startswith("campaign_id,campaign,kind")
    assert len(csv_body.splitlines()) == 3


def test_dashboard_lists_people_and_leases(grading, client_for):
    take_next_task(client_for("expert"), reverse("annotation:grade", args=[grading.pk]))
    page = client_for("manager").get(reverse("annotation:campaign", args=[grading.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "Release" in html and "expert" in html


def test_a_flagged_rendering_is_in_one_open_review_campaign_only(
    review_campaign, benchmark, personas
):
    from django.core.exceptions import ValidationError

    assert review_campaign.tasks.count() == 3
    with pytest.raises(ValidationError):
        do_create_review_campaign(benchmark, name="Review EN again")
    review_campaign.status = Campaign.Status.CLOSED
    review_campaign.save(update_fields=["status"])
    reopened = do_create_review_campaign(benchmark, name="Review EN, round 2")
    assert reopened.tasks.count() == 3


def test_an_item_is_never_adjudicated_in_two_open_campaigns(benchmark, personas):
    items = make_items(benchmark, 2)
    for item in items:
        make_split_consensus(benchmark, item)
    first = do_create_adjudication_campaign(
        benchmark, name="First", assignees=[personas["adjudicator"]]
    )
    assert first.tasks.count() == 2
    with pytest.raises(ValidationError):
        do_create_adjudication_campaign(
            benchmark, name="Second", assignees=[personas["adjudicator"]]
        )
    first.status = Campaign.Status.CLOSED
    first.save(update_fields=["status"])
    # Once the first is closed, what it left undecided may be adjudicated again.
    again = do_create_adjudication_campaign(
        benchmark, name="Again", assignees=[personas["adjudicator"]]
    )
    assert again.tasks.count() == 2


def test_disagreeing_adjudicators_never_overwrite_each_other(
    benchmark, personas, client_for
):
    from benchmark.actions import do_create_user
    from tests.conftest import PASSWORD

    second = do_create_user("adjudicator-2", PASSWORD, "adjudicator")
    item = make_items(benchmark, 1)[0]
    consensus = make_split_consensus(benchmark, item)
    campaign = do_create_adjudication_campaign(
        benchmark,
        name="Double",
        overlap=2,
        assignees=[personas["adjudicator"], second],
    )
    url = reverse("annotation:adjudicate", args=[campaign.pk])
    labels = Label.objects.filter(dimension=consensus.dimension).order_by("position")
    first_choice, second_choice = labels[0], labels[1]
    one = client_for("adjudicator")
    one.post(
        url,
        {"task": shown_task(take_next_task(one, url)), "label": first_choice.pk},
        **HTMX,
    )
    final = FinalLabel.objects.get(item=item, dimension=consensus.dimension)
    assert (final.label, final.provenance) == (first_choice, "adjudicated")

    two = client_for("adjudicator")
    two.force_login(second)
    two.post(
        url,
        {"task": shown_task(take_next_task(two, url)), "label": second_choice.pk},
        **HTMX,
    )
    final.refresh_from_db()
    assert final.label == first_choice, "the later decision overwrote the first"
    assert AdjudicationLabel.objects.filter(is_latest=True).count() == 2

    page = client_for("manager").get(reverse("annotation:campaign", args=[campaign.pk]))
    conflicts = page.content.decode().split('id="conflicts"')[1].split("</table>")[0]
    assert item.external_id in conflicts
    assert escape(first_choice.name) in conflicts
    assert escape(second_choice.name) in conflicts


def test_a_refused_submission_keeps_what_was_entered(benchmark, personas, client_for):
    for item in make_items(benchmark, 2):
        make_split_consensus(benchmark, item)
        make_split_consensus(benchmark, item, dimension_code="industry")
    campaign = do_create_adjudication_campaign(
        benchmark, name="Splits", assignees=[personas["adjudicator"]]
    )
    dimensions = list(
        campaign.tasks.order_by("position").values_list(
            "consensus__dimension__code", flat=True
        )
    )
    # Grouped by dimension, so a number key means the same label task after task.
    assert dimensions == ["capability", "capability", "industry", "industry"]
    client = client_for("adjudicator")
    url = reverse("annotation:adjudicate", args=[campaign.pk])
    task = shown_task(take_next_task(client, url))
    refused = client.post(url, {"task": task, "note": "Clause 4.2 decides it"}, **HTMX)
    html = refused.content.decode()
    assert refused.status_code == 400 and "Pick the final label" in html
    assert 'value="Clause 4.2 decides it"' in html
    assert 'data-testid="dimension">Final <strong>Capability</strong> label' in html
