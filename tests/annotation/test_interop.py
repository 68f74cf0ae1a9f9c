"""A grading campaign through Label Studio JSON and Argilla 2.x records: the shape
of each export, the round trip into a copy of the campaign, and the all-or-nothing
import with problems by task and field."""

import io
import json
import uuid
import zipfile

import pytest
from django.core.management import call_command

from annotation.actions import do_create_campaign, do_import_grading
from annotation.interop.annotators import synthetic_uuid
from annotation.interop.tools import ARGILLA, LABEL_STUDIO, export_files, import_file
from annotation.models import Campaign, GradingLabel
from benchmark.validation import ImportRejected
from tests.annotation.factories import make_items, make_run
from tests.benchmark.importing_helpers import table_counts

TOOLS = [LABEL_STUDIO, ARGILLA]
FILES = {LABEL_STUDIO: "tasks.json", ARGILLA: "records.json"}


def new_campaign(benchmark, responses, **options) -> Campaign:
    return do_create_campaign(
        benchmark,
        name="calibration",
        kind=Campaign.Kind.GRADING,
        tasks=[{"response_id": r.pk, "item_id": r.item_id} for r in responses],
        **options,
    )


@pytest.fixture
def graded(benchmark, personas):
    """A campaign asking score and safety, three of its four tasks graded."""
    items = make_items(benchmark, 4)
    run, responses = make_run(benchmark, items)
    run.judge_name, run.judge_prompt_version = "Model-A-judge", ""
    run.save(update_fields=["judge_name", "judge_prompt_version"])
    campaign = new_campaign(benchmark, responses, ask_safety=True)
    tasks = list(campaign.tasks.order_by("position"))
    do_import_grading(tasks[0], personas["expert"], score=3, safety_violation=False)
    do_import_grading(tasks[1], personas["expert"], score=1, safety_violation=True)
    do_import_grading(
        tasks[1], personas["manager"], score=2, safety_violation=False, seconds=42.5
    )
    return campaign, responses


def latest(campaign) -> list[tuple]:
    return sorted(
        GradingLabel.objects.filter(
            task__campaign=campaign, is_latest=True
        ).values_list(
            "task__response_id", "user__username", "score", "safety_violation"
        )
    )


@pytest.mark.parametrize("tool", TOOLS)
def test_round_trip_into_a_copy_gives_the_same_labels(graded, tool):
    campaign, responses = graded
    copy = new_campaign(campaign.benchmark, responses, ask_safety=True)
    data = export_files(campaign, tool)[FILES[tool]]

    summary = import_file(copy, tool, data)

    assert (summary.created, summary.corrected) == (3, 0)
    assert latest(copy) == latest(campaign)
    assert export_files(copy, tool)[FILES[tool]].count(b"submitted") == export_files(
        campaign, tool
    )[FILES[tool]].count(b"submitted")
    again = import_file(copy, tool, data)
    assert (again.created, again.unchanged) == (0, 3)


def test_label_studio_keeps_time_on_task(graded):
    campaign, responses = graded
    copy = new_campaign(campaign.benchmark, responses, ask_safety=True)
    import_file(copy, LABEL_STUDIO, export_files(campaign, LABEL_STUDIO)["tasks.json"])

    assert GradingLabel.objects.get(
        task__campaign=copy, user__username="manager"
    ).seconds_spent == pytest.approx(42.5)


def test_label_studio_shape(graded):
    campaign, responses = graded
    files = export_files(campaign, LABEL_STUDIO)
    tasks = json.loads(files["tasks.json"])

    second = tasks[1]
    assert second["data"]["assay_response_id"] == responses[1].pk
    assert second["data"]["question"].startswith("问题 1")
    assert second["data"]["reference"].startswith("参考答案 1")
    assert second["predictions"] == [
        {
            "model_version": "Model-A-judge",
            "result": [
                {
                    "id": "score",
                    "from_name": "score",
                    "to_name": "response",
                    "type": "choices",
                    "value": {"choices": ["1"]},
                }
            ],
        }
    ]
    by = {a["completed_by"]["username"]: a for a in second["annotations"]}
    assert by["manager"]["lead_time"] == 42.5
    assert [r["value"]["choices"] for r in by["expert"]["result"]] == [
        ["1"],
        ["violating"],
    ]
    assert tasks[3]["annotations"] == []
    config = files["label_config.xml"].decode()
    assert '<Choices name="score" toName="response"' in config
    assert '<Choice value="violating"/>' in config


def test_argilla_shape(graded):
    campaign, responses = graded
    files = export_files(campaign, ARGILLA)
    records = json.loads(files["records.json"])
    settings = json.loads(files[".argilla/settings.json"])

    second = records[1]
    assert set(second["fields"]) == {"question", "reference", "response"}
    assert second["metadata"]["assay_response_id"] == responses[1].pk
    assert second["suggestions"] == {
        "score": {"value": 1, "score": None, "agent": "Model-A-judge"}
    }
    assert {
        "value": "violating",
        "user_id": synthetic_uuid("expert"),
        "status": "submitted",
    } in second["responses"]["safety"]
    assert records[3]["status"] == "pending"
    assert [q["name"] for q in settings["questions"]] == ["score", "safety"]
    assert settings["questions"][0]["settings"]["options"] == [
        {"value": value} for value in (0, 1, 2, 3)
    ]


def test_a_label_studio_user_id_object_with_email_is_matched(graded, personas):
    campaign, responses = graded
    personas["reviewer"].email = "reviewer@example.org"
    personas["reviewer"].save(update_fields=["email"])
    copy = new_campaign(campaign.benchmark, responses, ask_safety=True)
    tasks = [
        {
            "data": {"assay_response_id": responses[2].pk},
            "annotations": [
                {
                    "completed_by": {"id": 7, "email": "reviewer@example.org"},
                    "result": [
                        {"from_name": "score", "value": {"choices": ["2"]}},
                        {"from_name": "safety", "value": {"choices": ["safe"]}},
                    ],
                    "lead_time": 10,
                },
                {"completed_by": 8, "was_cancelled": True, "result": []},
            ],
        }
    ]

    import_file(copy, LABEL_STUDIO, json.dumps(tasks).encode())

    assert latest(copy) == [(responses[2].pk, "reviewer", 2, False)]


@pytest.mark.parametrize("tool", TOOLS)
def test_unknown_user_and_task_reject_the_whole_file(graded, tool):
    campaign, responses = graded
    copy = new_campaign(campaign.benchmark, responses[:1], ask_safety=True)
    nobody = "nobody" if tool == LABEL_STUDIO else str(uuid.uuid4())
    manager = "manager" if tool == LABEL_STUDIO else synthetic_uuid("manager")
    data = export_files(campaign, tool)[FILES[tool]].replace(
        f'"{manager}"'.encode(), f'"{nobody}"'.encode()
    )
    before = table_counts(), GradingLabel.objects.count()

    with pytest.raises(ImportRejected) as caught:
        import_file(copy, tool, data)

    problems = [str(problem) for problem in caught.value.problems]
    assert any("line 2" in p and f"unknown annotator '{nobody}'" in p for p in problems)
    assert any(
        f"response {responses[1].pk} is not graded in this campaign" in p
        for p in problems
    )
    assert (table_counts(), GradingLabel.objects.count()) == before


def test_out_of_scale_score_is_a_problem(graded):
    campaign, responses = graded
    copy = new_campaign(campaign.benchmark, responses, ask_safety=True)
    records = json.loads(export_files(campaign, ARGILLA)["records.json"])
    records[0]["responses"]["score"][0]["value"] = 5

    with pytest.raises(ImportRejected) as caught:
        import_file(copy, ARGILLA, json.dumps(records).encode())

    assert "line 1, responses.score[0]: The score must be 0, 1, 2 or 3." in [
        str(p) for p in caught.value.problems
    ]


def test_not_json(graded):
    campaign, _responses = graded
    with pytest.raises(ImportRejected) as caught:
        import_file(campaign, LABEL_STUDIO, b"{not json")
    assert "malformed JSON" in str(caught.value.problems[0])


def test_a_key_given_twice_is_refused(graded):
    campaign, _responses = graded
    with pytest.raises(ImportRejected) as caught:
        import_file(campaign, LABEL_STUDIO, b'[{"id": 1, "id": 2}]')
    assert 'the key "id" appears twice in one object' in str(caught.value.problems[0])


def test_commands(graded, tmp_path):
    campaign, responses = graded
    copy = new_campaign(campaign.benchmark, responses, ask_safety=True)
    call_command(
        "export_campaign",
        campaign.pk,
        tool=LABEL_STUDIO,
        output=tmp_path,
        stdout=io.StringIO(),
    )
    assert (tmp_path / "label_config.xml").exists()

    out = io.StringIO()
    call_command(
        "import_campaign_labels",
        copy.pk,
        tmp_path / "tasks.json",
        tool=LABEL_STUDIO,
        stdout=out,
    )

    assert "3 grade(s) added" in out.getvalue()
    assert latest(copy) == latest(campaign)


def test_campaign_page_downloads(graded, client_for):
    campaign, _responses = graded
    response = client_for("manager").get(
        f"/annotation/campaigns/{campaign.pk}/export/argilla.zip"
    )

    assert response.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(response.getvalue())).namelist()
    assert sorted(names) == [
        ".argilla/dataset.json",
        ".argilla/settings.json",
        "records.json",
    ]
    assert (
        client_for("expert")
        .get(f"/annotation/campaigns/{campaign.pk}/export/argilla.zip")
        .status_code
        == 403
    )
    label_studio = f"/annotation/campaigns/{campaign.pk}/export/label-studio.zip"
    predictions = client_for("manager").get(label_studio, {"annotators": "predictions"})
    names = zipfile.ZipFile(io.BytesIO(predictions.getvalue())).namelist()
    assert sorted(names) == ["label_config.xml", "tasks.json"]
    unknown = client_for("manager").get(label_studio, {"annotators": "nobody"})
    assert unknown.status_code == 404
