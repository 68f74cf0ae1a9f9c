"""Binary grading campaigns (#15): experts answer correct (1) / incorrect (0) on the
blind screen, and the campaign is created from the form or the command."""

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.actions import do_create_grading_campaign, do_submit_grading
from annotation.models import Campaign, GradingLabel
from annotation.queue import do_claim_next
from tests.annotation.factories import HTMX, make_items, make_run, take_next_task
from tests.annotation.test_screens import shown_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def binary(benchmark, personas):
    make_run(benchmark, make_items(benchmark, 4))
    return do_create_grading_campaign(
        benchmark,
        name="Blind questionnaire",
        size=4,
        seed=1,
        scale=Campaign.Scale.BINARY,
        assignees=[personas["expert"]],
    )


def test_a_binary_campaign_takes_1_or_0_and_refuses_2_and_3(binary, personas):
    expert = personas["expert"]
    task = do_claim_next(binary, expert).task
    for score in (2, 3):
        with pytest.raises(ValidationError, match=r"1 \(correct\) or 0 \(incorrect\)"):
            do_submit_grading(task, expert, score=score)
    with pytest.raises(ValidationError, match=r"Choose correct \(1\) or incorrect"):
        do_submit_grading(task, expert, score=None)
    assert not GradingLabel.objects.exists()
    assert do_submit_grading(task, expert, score=1).in_words == "correct"


def test_existing_and_new_grading_campaigns_keep_the_rubric(benchmark, personas):
    make_run(benchmark, make_items(benchmark, 2))
    campaign = do_create_grading_campaign(benchmark, name="Rubric", size=2, seed=1)
    assert (campaign.scale, campaign.is_binary) == ("rubric", False)
    task = do_claim_next(campaign, personas["expert"]).task
    assert do_submit_grading(task, personas["expert"], score=3).score == 3


def test_only_expert_grading_has_a_binary_scale(benchmark):
    make_run(benchmark, make_items(benchmark, 2))
    with pytest.raises(ValidationError, match="Only expert grading"):
        do_create_grading_campaign(
            benchmark,
            name="SV",
            size=2,
            seed=1,
            kind=Campaign.Kind.SAFETY,
            scale=Campaign.Scale.BINARY,
        )


def test_the_binary_screen_is_blind_and_asks_correct_or_incorrect(
    binary, client_for
):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[binary.pk])
    page = take_next_task(client, url)
    html = page.content.decode()
    assert "Reference answer" in html and "Model response" in html
    assert 'data-testid="correct-means"' in html
    assert 'data-key="1"' in html and 'data-key="0"' in html
    assert 'data-key="2"' not in html and 'data-key="3"' not in html
    assert "Right but incomplete" not in html, "the rubric is not shown"
    # Blind: neither the tested model nor the judge's verdict.
    assert "Model-A" not in html and "judge says" not in html
    keys = html.split('id="keys-dialog"')[1]
    assert "Correct" in keys and "Incorrect" in keys
    assert "Score by the rubric" not in keys

    task = shown_task(page)
    refused = client.post(url, {"task": task, "score": "2"}, **HTMX)
    assert refused.status_code == 400
    assert "1 (correct) or 0 (incorrect)" in refused.content.decode()
    assert shown_task(refused) == task
    answered = client.post(url, {"task": task, "score": "0"}, **HTMX)
    assert answered.status_code == 200 and shown_task(answered) != task
    assert GradingLabel.objects.get(task_id=task).score == 0


def test_the_form_offers_the_binary_scale_with_overlap_3(benchmark, client_for):
    make_run(benchmark, make_items(benchmark, 5))
    manager = client_for("manager")
    url = reverse("annotation:campaign_new")
    rubric = manager.get(url, {"kind": "grading"}).content.decode()
    assert 'name="overlap" value="1"' in rubric
    assert 'name="scale" value="rubric"' in rubric
    assert "?kind=grading&amp;scale=binary" in rubric
    binary = manager.get(url, {"kind": "grading", "scale": "binary"}).content.decode()
    assert 'name="overlap" value="3"' in binary
    assert 'name="scale" value="binary"' in binary
    assert 'name="scale"' not in manager.get(url, {"kind": "safety"}).content.decode()

    fields = {"kind": "grading", "benchmark": benchmark.pk, "lease_minutes": 30}
    fields |= {"size": 5, "seed": 9, "scale": "binary"}
    manager.post(url, {**fields, "name": "Study", "overlap": 3})
    manager.post(url, {**fields, "name": "Pairs", "overlap": 2})
    created = Campaign.objects.filter(scale="binary").order_by("name")
    assert [(c.name, c.overlap) for c in created] == [("Pairs", 2), ("Study", 3)]


def test_the_command_creates_a_binary_campaign(benchmark, personas):
    make_run(benchmark, make_items(benchmark, 5))
    out = io.StringIO()
    call_command(
        "create_campaign",
        "grading",
        benchmark=benchmark.slug,
        name="CLI study",
        size=5,
        scale="binary",
        stdout=out,
    )
    campaign = Campaign.objects.get(name="CLI study")
    assert (campaign.scale, campaign.overlap) == ("binary", 3)
    call_command(
        "create_campaign",
        "grading",
        benchmark=benchmark.slug,
        name="CLI rubric",
        size=5,
        stdout=out,
    )
    assert Campaign.objects.get(name="CLI rubric").overlap == 1
    with pytest.raises(CommandError, match="--scale is for grading"):
        call_command(
            "create_campaign",
            "safety",
            benchmark=benchmark.slug,
            name="x",
            scale="binary",
        )
