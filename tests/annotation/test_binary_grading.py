"""Binary grading campaigns (#15): experts answer correct (1) / incorrect (0) on the
blind screen, and the campaign is created from the form or the command."""

import csv
import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from annotation.actions import do_create_grading_campaign, do_skip, do_submit_grading
from annotation.agreement.loading import human_values
from annotation.dashboard import choice_counts
from annotation.models import Campaign, GradingLabel, Task
from annotation.queue import do_claim_next
from benchmark.actions import do_create_user
from judging.demo import lpfqa as lpfqa_demo
from judging.evaluation.models import AnswerGrade, EvaluationRun
from judging.reporting.definitions import footnote
from tests.annotation.factories import HTMX, make_items, make_run, take_next_task
from tests.annotation.test_screens import shown_task
from tests.conftest import PASSWORD

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


def test_the_binary_screen_is_blind_and_asks_correct_or_incorrect(binary, client_for):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[binary.pk])
    page = take_next_task(client, url)
    html = page.content.decode()
    assert "Reference answer" in html and "Model response" in html
    assert 'data-testid="correct-means"' in html
    # The source the question refers to ("according to this standard…").
    assert "Source knowledge" in html and ": knowledge text." in html
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


# Each response's votes, by expert in turn; an expert without a vote skips it.
VOTES = {
    ("Model-A", "Q0000"): [1, 1, 0],  # 2–1: correct
    ("Model-A", "Q0001"): [1, 1, 1],
    ("Model-A", "Q0002"): [0, 0, 1],
    ("Model-B", "Q0000"): [1, 0],  # 1–1 and the third expert skipped: a tie
    ("Model-B", "Q0001"): [0, 0, 0],
    ("Model-B", "Q0002"): [1],  # short of votes
}


@pytest.fixture
def voted(benchmark, personas):
    """A binary campaign over two models' responses, voted as in VOTES."""
    items = make_items(benchmark, 3)
    make_run(benchmark, items)
    make_run(benchmark, items, model_name="Model-B")
    experts = [personas["expert"]] + [
        do_create_user(f"expert-{n}", PASSWORD, "expert") for n in (2, 3)
    ]
    campaign = do_create_grading_campaign(
        benchmark,
        name="Study",
        size=6,
        seed=1,
        scale=Campaign.Scale.BINARY,
        overlap=3,
        assignees=experts,
    )
    for index, expert in enumerate(experts):
        while (lease := do_claim_next(campaign, expert)) is not None:
            task = Task.objects.select_related("response__run", "item").get(
                pk=lease.task_id
            )
            votes = VOTES[(task.response.run.model_name, task.item.external_id)]
            if index < len(votes):
                do_submit_grading(task, expert, score=votes[index])
            else:
                do_skip(task, expert, reason="Outside my field.")
    return campaign


def test_the_campaign_page_shows_the_majority_per_model_and_the_ties(voted, client_for):
    url = reverse("annotation:campaign", args=[voted.pk])
    with CaptureQueriesContext(connection) as queries:
        page = client_for("manager").get(url)
    assert page.status_code == 200
    majority = page.context["majority"]
    overall = majority["overall"]
    assert [overall[k] for k in ("correct", "incorrect", "tie", "short")] == [
        2,
        2,
        1,
        1,
    ]
    models = {
        m["run"].model_name: (m["correct"], m["decided"], m["percent"], m["tie"])
        for m in majority["models"]
    }
    assert models == {"Model-A": (2, 3, 66.7, 0), "Model-B": (0, 1, 0.0, 1)}
    (tie,) = majority["ties"]
    assert (tie["item__external_id"], tie["correct"], tie["incorrect"]) == (
        "Q0000",
        1,
        1,
    )
    html = page.content.decode()
    assert "66.7 %" in html and "Short of 3 votes" in html
    ties = html.split('id="ties"')[1].split("</table>")[0]
    assert "Q0000" in ties and "1 correct · 1 incorrect of 3" in ties
    every_label = [
        q["sql"]
        for q in queries
        if 'FROM "annotation_gradinglabel"' in q["sql"] and "LIMIT" not in q["sql"]
    ]
    assert len(every_label) == 1, "the majority reads the dashboard's label rows"


def test_votes_per_response_export_as_csv(voted, client_for):
    manager = client_for("manager")
    url = reverse("annotation:export", args=[voted.pk, "csv"])
    download = manager.get(url, {"per": "response"})
    assert download["Content-Disposition"].endswith('-votes.csv"')
    body = b"".join(download.streaming_content).decode("utf-8-sig")
    rows = {
        (row["model"], row["item"]): row for row in csv.DictReader(io.StringIO(body))
    }
    assert len(rows) == 6
    assert {key: row["decision"] for key, row in rows.items()} == {
        ("Model-A", "Q0000"): "correct",
        ("Model-A", "Q0001"): "correct",
        ("Model-A", "Q0002"): "incorrect",
        ("Model-B", "Q0000"): "tie",
        ("Model-B", "Q0001"): "incorrect",
        ("Model-B", "Q0002"): "short",
    }
    tie = rows[("Model-B", "Q0000")]
    assert tie["votes"] == "expert=1; expert-2=0"
    assert (tie["votes_given"], tie["correct_votes"], tie["panel"]) == ("2", "1", "3")
    # The label export is unchanged: one row per label.
    labels = b"".join(manager.get(url).streaming_content).decode("utf-8-sig")
    assert len(labels.splitlines()) == 1 + sum(len(v) for v in VOTES.values())

    out = io.StringIO()
    call_command(
        "export_labels", voted.pk, format="jsonl", per_response=True, stdout=out
    )
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["model"], r["item"], r["decision"]) for r in lines] == [
        (row["model"], row["item"], row["decision"]) for row in rows.values()
    ]


def test_votes_per_response_are_only_for_binary_campaigns(benchmark, client_for):
    make_run(benchmark, make_items(benchmark, 2))
    rubric = do_create_grading_campaign(benchmark, name="Rubric", size=2, seed=1)
    url = reverse("annotation:export", args=[rubric.pk, "csv"])
    assert client_for("manager").get(url, {"per": "response"}).status_code == 404
    with pytest.raises(CommandError, match="binary"):
        call_command("export_labels", rubric.pk, per_response=True)
    page = client_for("manager").get(reverse("annotation:campaign", args=[rubric.pk]))
    assert page.context["majority"] is None
    assert "Majority vote" not in page.content.decode()


def test_binary_votes_stay_out_of_the_rubric_reports(voted, benchmark, personas):
    assert human_values(benchmark, "score")[0] == []
    rubric = do_create_grading_campaign(benchmark, name="Rubric", size=1, seed=1)
    task = do_claim_next(rubric, personas["expert"]).task
    do_submit_grading(task, personas["expert"], score=1)
    humans, response_ids, scores = human_values(benchmark, "score")
    assert (humans, response_ids.tolist(), scores.tolist()) == (
        ["expert"],
        [task.response_id],
        [[1.0]],
    )


def test_the_campaign_page_names_study_002s_overall_accuracy(voted, client_for):
    page = client_for("manager").get(reverse("annotation:campaign", args=[voted.pk]))
    html = page.content.decode()
    assert escape(footnote("combined-accuracy")) in html
    models = {m["run"].model_name: m for m in page.context["majority"]["models"]}
    # 0–3 runs have no graded MC/TF answers: the open answers alone, 2 of 3.
    assert models["Model-A"]["overall"] == 66.7


def test_a_binary_runs_choice_counts_are_its_graded_answers():
    """The MC part of study 002's overall accuracy counts every tested answer of
    the run: flagged answers are tested and not correct (§2.3)."""
    benchmark = lpfqa_demo.seed()
    for run in EvaluationRun.objects.filter(benchmark=benchmark):
        graded = AnswerGrade.objects.filter(response__run=run)
        correct = graded.filter(grade=AnswerGrade.Grade.CORRECT).count()
        assert choice_counts(run) == {"mc": (correct, graded.count()), "tf": (0, 0)}
