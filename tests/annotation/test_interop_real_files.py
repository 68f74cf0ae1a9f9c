"""Files the real tools made (tests/fixtures/interop/, README there) imported into a
campaign, and Assay's Argilla export read back by the argilla SDK itself. Each
round trip lists what the format cannot hold."""

import io
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import argilla as rg
import pytest
from argilla.records._io import JsonIO
from django.contrib.auth import get_user_model
from django.core.validators import validate_email

from annotation.actions import do_create_campaign, do_import_grading
from annotation.interop.annotators import (
    label_studio_key,
    resolve,
    synthetic_email,
    synthetic_uuid,
)
from annotation.interop.label_studio import PREDICTIONS, REAL_EMAIL
from annotation.interop.tools import (
    ARGILLA,
    LABEL_STUDIO,
    annotators_to_map,
    export_files,
    import_file,
)
from annotation.models import Campaign, GradingLabel
from benchmark.validation import ImportRejected
from tests.annotation.interop_helpers import (
    FIXTURES,
    LABEL_STUDIO_GRADES,
    campaign_for_fixtures,
    fixture,
    latest,
)


@pytest.fixture
def campaign(benchmark, personas):
    return campaign_for_fixtures(benchmark, personas)


ARGILLA_A = "0b6f1c1e-4a8e-4d55-9a3e-5d6f1e2a7c01"
ARGILLA_B = "7d2c9f40-1b3a-4e6f-8c2d-93a4b5c6d702"


@pytest.mark.parametrize("name", ["export-JSON.json", "export-JSON_MIN.json"])
def test_label_studio_export_button_files_import_with_the_users_list(campaign, name):
    data = fixture(campaign, f"label-studio/{name}")
    users = (FIXTURES / "label-studio/users.json").read_bytes()

    summary = import_file(campaign, LABEL_STUDIO, data, users_file=users)

    assert summary.created == 5
    assert latest(campaign) == LABEL_STUDIO_GRADES


def test_label_studio_ids_without_users_list_ask_for_a_mapping(campaign):
    data = fixture(campaign, "label-studio/export-JSON.json")

    unmapped, known, problems = annotators_to_map(LABEL_STUDIO, data, None, {})

    assert not problems and known == {}
    assert unmapped == {label_studio_key(1): 3, label_studio_key(2): 2}
    with pytest.raises(ImportRejected) as caught:
        import_file(campaign, LABEL_STUDIO, data)
    assert "unknown annotator 'Label Studio user 1': map it to an Assay user" in str(
        caught.value.problems[0]
    )
    assert GradingLabel.objects.filter(task__campaign=campaign).count() == 0

    mapping = {label_studio_key(1): "expert", label_studio_key(2): "reviewer"}
    assert annotators_to_map(LABEL_STUDIO, data, None, mapping)[0] == {}
    import_file(campaign, LABEL_STUDIO, data, mapping=mapping)
    assert latest(campaign) == LABEL_STUDIO_GRADES


def test_a_mapping_wins_over_the_users_list(campaign):
    data = fixture(campaign, "label-studio/export-JSON_MIN.json")
    users = (FIXTURES / "label-studio/users.json").read_bytes()

    import_file(
        campaign,
        LABEL_STUDIO,
        data,
        users_file=users,
        mapping={label_studio_key(2): "manager"},
    )

    assert {row[1] for row in latest(campaign)} == {"expert", "manager"}


def test_a_broken_users_list_is_a_problem_and_writes_nothing(campaign):
    data = fixture(campaign, "label-studio/export-JSON.json")

    with pytest.raises(ImportRejected) as caught:
        import_file(campaign, LABEL_STUDIO, data, users_file=b'[{"id": "one"}]')

    assert "users file: id: expected Label Studio's user id" in str(
        caught.value.problems[0]
    )
    assert GradingLabel.objects.filter(task__campaign=campaign).count() == 0


def test_argilla_to_disk_records_import_with_uuids_mapped(campaign):
    data = fixture(campaign, "argilla/records.json")
    unmapped, _known, problems = annotators_to_map(ARGILLA, data, None, {})
    assert not problems
    assert unmapped == {ARGILLA_A: 2, ARGILLA_B: 3}

    summary = import_file(
        campaign,
        ARGILLA,
        data,
        mapping={ARGILLA_A: "expert", ARGILLA_B: "annotator.b@lab.example"},
    )

    # to_disk() writes no response status: B's draft on record 2 reads as a grade.
    assert summary.created == 5
    assert [row[:4] for row in latest(campaign)] == [
        (0, "expert", 3, False),
        (0, "reviewer", 2, False),
        (1, "expert", 0, True),
        (1, "reviewer", 1, False),
        (2, "reviewer", 0, False),
    ]


def test_argilla_folder_as_a_zip_imports(campaign):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:
        for path in (FIXTURES / "argilla").rglob("*.json"):
            inside = path.relative_to(FIXTURES / "argilla")
            out.writestr(f"dataset/{inside}", fixture(campaign, f"argilla/{inside}"))
    mapping = {ARGILLA_A: "expert", ARGILLA_B: "reviewer"}

    summary = import_file(campaign, ARGILLA, archive.getvalue(), mapping=mapping)

    assert summary.created == 5


@pytest.fixture
def graded(campaign, personas):
    tasks = list(campaign.tasks.order_by("position"))
    do_import_grading(tasks[0], personas["expert"], score=3, safety_violation=False)
    do_import_grading(
        tasks[1], personas["reviewer"], score=1, safety_violation=True, seconds=9.5
    )
    return campaign


def copy_of(campaign) -> Campaign:
    return do_create_campaign(
        campaign.benchmark,
        name="copy",
        kind=Campaign.Kind.GRADING,
        tasks=[
            {"response_id": t.response_id, "item_id": t.item_id}
            for t in campaign.tasks.order_by("position")
        ],
        ask_safety=True,
    )


class _ArgillaMe(BaseHTTPRequestHandler):
    """The one request the argilla SDK's client makes on creation: who is logged
    in. Anything else is refused, so the test shows the SDK parsed the files
    without a server."""

    def do_GET(self):
        if self.path != "/api/v1/me":
            self.send_error(404)
            return
        body = json.dumps(
            {
                "id": ARGILLA_A,
                "username": "owner",
                "role": "owner",
                "inserted_at": "2026-11-27T00:00:00",
                "updated_at": "2026-11-27T00:00:00",
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def argilla_client():
    """The SDK's default client, logged in to a real HTTP server on 127.0.0.1:
    `Settings.from_json` builds its questions through the default client."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ArgillaMe)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield rg.Argilla(
            api_url=f"http://127.0.0.1:{server.server_port}", api_key="test", retries=0
        )
    finally:
        rg.Argilla._default_client = None
        server.shutdown()
        server.server_close()


def test_argilla_sdk_reads_assays_export(graded, tmp_path, argilla_client):
    """What rg.Dataset.from_disk() parses before it talks to a server: the settings
    (`Settings.from_json`), the dataset model and every record (`Record.from_dict`)."""
    for name, content in export_files(graded, ARGILLA).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content)

    settings = rg.Settings.from_json(tmp_path / ".argilla/settings.json")
    records = JsonIO._records_from_json(tmp_path / "records.json")
    model = json.loads((tmp_path / ".argilla/dataset.json").read_text())

    assert [q.name for q in settings.questions] == ["score", "safety"]
    assert [f.name for f in settings.fields] == ["question", "reference", "response"]
    assert model["name"] == f"assay-campaign-{graded.pk}"
    second = records[1]
    answers = {(r.question_name, str(r.user_id), r.value) for r in second.responses}
    assert answers == {
        ("score", synthetic_uuid("reviewer"), 1),
        ("safety", synthetic_uuid("reviewer"), "violating"),
    }
    assert (
        second.metadata["assay_response_id"] == graded.tasks.get(position=1).response_id
    )


def test_argilla_round_trip_keeps_who_score_and_safety(graded):
    """Lost through Argilla: time on task (none in the format) and the judges'
    verdicts other than the run's own judge (one suggestion per question)."""
    copy = copy_of(graded)

    import_file(copy, ARGILLA, export_files(graded, ARGILLA)["records.json"])

    assert [row[:4] for row in latest(copy)] == [row[:4] for row in latest(graded)]
    assert latest(copy)[1][4] == 0.0  # the 9.5 s on task are lost


def test_label_studio_round_trip_by_synthetic_email(graded):
    """Lost through Label Studio: when a grade was made (Label Studio stamps its
    own time on import), and earlier grades a person corrected."""
    copy = copy_of(graded)
    files = export_files(graded, LABEL_STUDIO)
    tasks = json.loads(files["tasks.json"])
    emails = {a["completed_by"]["email"] for t in tasks for a in t["annotations"]}
    assert emails == {synthetic_email("expert"), synthetic_email("reviewer")}
    assert json.loads(files["users.json"]) == [
        {"email": synthetic_email("expert"), "username": "expert"},
        {"email": synthetic_email("reviewer"), "username": "reviewer"},
    ]
    # Label Studio's own export names the user by e-mail only.
    for task in tasks:
        for annotation in task["annotations"]:
            del annotation["completed_by"]["username"]

    import_file(copy, LABEL_STUDIO, json.dumps(tasks).encode())

    assert latest(copy) == latest(graded)


def test_label_studio_predictions_only_and_real_emails(graded):
    predictions = json.loads(
        export_files(graded, LABEL_STUDIO, PREDICTIONS)["tasks.json"]
    )
    assert all(task["annotations"] == [] for task in predictions)
    assert [p["model_version"] for p in predictions[1]["predictions"]] == [
        "Model-A-judge",
        "Assay grade · reviewer",
    ]
    assert "users.json" not in export_files(graded, LABEL_STUDIO, PREDICTIONS)

    real = json.loads(export_files(graded, LABEL_STUDIO, REAL_EMAIL)["tasks.json"])
    assert real[0]["annotations"][0]["completed_by"]["email"] == (
        "annotator.a@lab.example"
    )


def test_a_zip_without_records_or_expanding_too_far_is_refused(campaign, settings):
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as out:
        out.writestr("dataset/settings.json", "{}")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("dataset/records.json", "[" + " " * 3_000_000 + "]")
    settings.IMPORT_MAX_MEMBER_BYTES = 2**20

    for archive, message in (
        (empty, "file: expected a zip holding records.json once"),
        (bomb, "dataset/records.json: expands to more than 1,048,576 bytes"),
    ):
        with pytest.raises(ImportRejected) as caught:
            import_file(campaign, ARGILLA, archive.getvalue())
        assert message in str(caught.value.problems[0])
    assert GradingLabel.objects.filter(task__campaign=campaign).count() == 0


def test_a_json_min_row_of_a_task_nobody_annotated_is_passed_over(campaign):
    """JSON_MIN with "all tasks" writes such a row with null annotator fields, as
    Label Studio 1.23 does."""
    rows = json.loads(fixture(campaign, "label-studio/export-JSON_MIN.json"))
    unannotated = {
        key: value for key, value in rows[0].items() if key not in ("score", "safety")
    } | {"annotator": None, "annotation_id": None, "lead_time": None}
    users = (FIXTURES / "label-studio/users.json").read_bytes()

    summary = import_file(
        campaign,
        LABEL_STUDIO,
        json.dumps([*rows, unannotated]).encode(),
        users_file=users,
    )

    assert summary.created == 5


def test_synthetic_identities_name_their_user_whatever_the_username(db):
    """Usernames an address cannot hold get a hashed local part; every synthetic
    e-mail passes e-mail validation (Label Studio's sign-up) and resolves back."""
    users = [
        get_user_model().objects.create_user(name)
        for name in ("alice", "a..b", "bob@x", "张三")
    ]
    keys = {synthetic_email(u.username) for u in users}
    keys |= {synthetic_uuid(u.username) for u in users}
    for key in keys:
        if "@" in key:
            validate_email(key)

    found = resolve(keys, {})

    assert {user.username for user in found.values()} == {u.username for u in users}
    assert synthetic_email("alice") == "alice@assay.invalid"
    assert synthetic_email("a..b").startswith("user-")
