import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.actions import do_submit_grading
from annotation.models import Campaign
from annotation.queue import do_claim_next

from .factories import make_items, make_run

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
