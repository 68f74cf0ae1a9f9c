import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.actions import do_submit_grading
from annotation.models import Assignment, Campaign
from annotation.queue import do_claim_next
from tests.annotation.factories import make_items, make_run

pytestmark = pytest.mark.django_db


def test_create_campaign_and_export_labels(benchmark, personas):
    make_run(benchmark, make_items(benchmark, 9))
    out = io.StringIO()
    call_command(
        "create_campaign",
        "grading",
        benchmark=benchmark.slug,
        name="CLI round",
        size=6,
        seed=4,
        assignees="expert",
        ask_safety=True,
        stdout=out,
    )
    campaign = Campaign.objects.get(name="CLI round")
    assert "6 tasks" in out.getvalue()
    assert (campaign.sample_seed, campaign.ask_safety) == (4, True)
    assignment = do_claim_next(campaign, personas["expert"])
    do_submit_grading(
        assignment.task, personas["expert"], score=2, safety_violation=False
    )
    jsonl = io.StringIO()
    call_command("export_labels", campaign.pk, format="jsonl", stdout=jsonl)
    (row,) = [json.loads(line) for line in jsonl.getvalue().splitlines()]
    assert (row["user"], row["score"], row["safety_violation"]) == ("expert", 2, False)
    table = io.StringIO()
    call_command("export_labels", campaign.pk, stdout=table)
    rows = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert [(r["user"], r["score"]) for r in rows] == [("expert", "2")]


def test_bad_arguments_fail_clearly(benchmark):
    with pytest.raises(CommandError, match="No benchmark"):
        call_command("create_campaign", "grading", benchmark="nope", name="x")
    with pytest.raises(CommandError, match="Unknown users: ghost"):
        call_command(
            "create_campaign",
            "grading",
            benchmark=benchmark.slug,
            name="x",
            assignees="ghost",
        )
    with pytest.raises(CommandError, match="no answered responses"):
        call_command("create_campaign", "grading", benchmark=benchmark.slug, name="x")


def test_a_lease_of_no_minutes_is_refused_not_made_the_default(benchmark):
    make_run(benchmark, make_items(benchmark, 3))
    with pytest.raises(CommandError, match="The lease must last at least one minute"):
        call_command(
            "create_campaign",
            "grading",
            benchmark=benchmark.slug,
            name="No lease",
            lease_minutes=0,
        )
    assert not Campaign.objects.filter(name="No lease").exists()


@pytest.mark.parametrize(
    ("kind", "option", "refusal"),
    [
        ("safety", {"ask_safety": True}, "--ask-safety is for grading campaigns."),
        ("safety", {"scale": "binary"}, "--scale is for grading campaigns."),
        (
            "grading",
            {"show_model_names": True},
            "--show-model-names is for adjudication campaigns.",
        ),
        (
            "adjudication",
            {"languages": "en"},
            "--languages is for translation_review campaigns.",
        ),
    ],
)
def test_an_option_the_kind_does_not_ask_for_is_refused(
    benchmark, kind, option, refusal
):
    """Given for another kind, the option would be dropped without a word."""
    make_run(benchmark, make_items(benchmark, 3))
    with pytest.raises(CommandError) as refused:
        call_command(
            "create_campaign", kind, benchmark=benchmark.slug, name="x", **option
        )
    assert str(refused.value) == refusal
    assert not Campaign.objects.exists()


@pytest.fixture
def campaign(benchmark, personas):
    make_run(benchmark, make_items(benchmark, 6))
    call_command(
        "create_campaign",
        "grading",
        benchmark=benchmark.slug,
        name="CLI moves",
        size=6,
        seed=2,
        assignees="expert,manager",
        stdout=io.StringIO(),
    )
    return Campaign.objects.get(name="CLI moves")


def test_release_leases_of_one_person_or_all(campaign, personas):
    held = do_claim_next(campaign, personas["expert"])
    other = do_claim_next(campaign, personas["manager"])
    out = io.StringIO()
    call_command("release_leases", campaign.pk, user="expert", stdout=out)
    assert f"Released task {held.task.position + 1} held by expert" in out.getvalue()
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.RELEASED
    assert Assignment.objects.get(pk=other.pk).status == Assignment.Status.ACTIVE
    call_command("release_leases", campaign.pk, all=True, stdout=io.StringIO())
    assert Assignment.objects.get(pk=other.pk).status == Assignment.Status.RELEASED
    with pytest.raises(CommandError, match="No active lease"):
        call_command("release_leases", campaign.pk, all=True)


def test_reassign_tasks_by_position_and_open_them_again(campaign, personas):
    bob_lease = do_claim_next(campaign, personas["manager"])
    position = bob_lease.task.position + 1
    call_command(
        "reassign_tasks",
        campaign.pk,
        f"{position},5-6",
        to="expert",
        stdout=io.StringIO(),
    )
    reserved = campaign.tasks.filter(assigned_to=personas["expert"])
    assert sorted(t.position + 1 for t in reserved) == sorted({position, 5, 6})
    # The other person's lease on a reassigned task ended; the expert gets it first.
    assert Assignment.objects.get(pk=bob_lease.pk).status == Assignment.Status.RELEASED
    assert do_claim_next(campaign, personas["expert"]).task.assigned_to_id == (
        personas["expert"].pk
    )
    call_command("reassign_tasks", campaign.pk, "5", open=True, stdout=io.StringIO())
    assert campaign.tasks.get(position=4).assigned_to is None
    with pytest.raises(CommandError, match="reviewer is not assigned"):
        call_command("reassign_tasks", campaign.pk, "1", to="reviewer")
    with pytest.raises(CommandError, match="No task at position 99"):
        call_command("reassign_tasks", campaign.pk, "99", open=True)
    with pytest.raises(CommandError, match="Not a task position"):
        call_command("reassign_tasks", campaign.pk, "3-1", open=True)


def test_close_and_reopen_a_campaign(campaign, personas):
    lease = do_claim_next(campaign, personas["expert"])
    out = io.StringIO()
    call_command("campaign_status", campaign.pk, "closed", stdout=out)
    assert "is closed" in out.getvalue()
    campaign.refresh_from_db()
    assert not campaign.is_open
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.RELEASED
    assert do_claim_next(campaign, personas["expert"]) is None
    call_command("campaign_status", campaign.pk, "open", stdout=io.StringIO())
    campaign.refresh_from_db()
    assert do_claim_next(campaign, personas["expert"]) is not None
    with pytest.raises(CommandError, match="No campaign 0"):
        call_command("campaign_status", 0, "closed")
