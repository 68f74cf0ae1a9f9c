"""A grading campaign as the folder Argilla 2.x's `rg.Dataset.to_disk()` writes and
`rg.Dataset.from_disk()` reads, and such records read back as people's grades.

The folder: `.argilla/dataset.json` (the dataset model), `.argilla/settings.json`
(`rg.Settings.to_json`) and `records.json` (`Record.to_dict()` of each record).
Fields `question`, `reference`, `response`; a rating question `score` (0–3, or 0–1
in a binary campaign) and, when the campaign asks it, a label question `safety`
(safe / violating). A record's `suggestions` map each question to one suggestion:
the verdict of the judge the response's run is scored with, its name and prompt
version as `agent`. Its `responses` map each question to a list of
`{value, user_id, status}`; Argilla names users by UUID, so each Assay user gets a
stable synthetic UUID (`annotators.synthetic_uuid`) that the import recognises;
other UUIDs are mapped on the import page. `to_disk()` drops a response's status:
a response without one counts as submitted. Argilla keeps no time on task: an
imported grade has none. Mapping: docs/INTEROP.md.
"""

import io
import zipfile

from django.conf import settings
from django.utils.translation import gettext as _

from annotation.interop.annotators import synthetic_uuid
from annotation.interop.grades import (
    SAFE,
    VIOLATING,
    GradingTask,
    ImportedGrade,
    load_json_list,
    safety_choice,
    whole_number,
)
from annotation.models import Campaign
from benchmark.english import english
from benchmark.validation import Problems

RECORDS_FILE = "records.json"
SETTINGS_FILE = ".argilla/settings.json"
DATASET_FILE = ".argilla/dataset.json"
SCORE, SAFETY = "score", "safety"
SUBMITTED = "submitted"


def _model(name: str, **rest) -> dict:
    """The keys every server-side model carries, empty until a server creates it."""
    return {"id": None, "inserted_at": None, "updated_at": None, "name": name, **rest}


def _field(name: str, title: str) -> dict:
    return _model(
        name,
        settings={"type": "text", "use_markdown": False},
        title=title,
        required=True,
        description=None,
        dataset_id=None,
        type="text",
    )


def _terms(name: str) -> dict:
    return _model(
        name,
        settings={"visible_for_annotators": True, "type": "terms", "values": None},
        title=name,
        visible_for_annotators=True,
        dataset_id=None,
    )


def dataset_model(campaign: Campaign) -> dict:
    return _model(
        f"assay-campaign-{campaign.pk}",
        status="draft",
        guidelines=None,
        allow_extra_metadata=True,
        distribution=None,
        workspace_id=None,
        last_activity_at=None,
    )


def dataset_settings(campaign: Campaign) -> dict:
    questions = []
    if campaign.asks_score:
        title = "Correct?" if campaign.is_binary else "Score (0–3 rubric)"
        options = [{"value": value} for value in campaign.score_values]
        questions.append(_question(SCORE, title, "rating", options))
    if campaign.asks_safety:
        options = [{"text": label, "value": label} for label in (SAFE, VIOLATING)]
        questions.append(_question(SAFETY, "Safety", "label_selection", options))
    return {
        "guidelines": f"Assay campaign {campaign.name} "
        f"({english(Campaign.Kind(campaign.kind).label)})",
        "questions": questions,
        "fields": [
            _field("question", "Question"),
            _field("reference", "Reference answer"),
            _field("response", "Model response"),
        ],
        "vectors": [],
        "metadata": [
            _terms("item_id"),
            _terms("language"),
            _model(
                "assay_response_id",
                settings={
                    "visible_for_annotators": False,
                    "type": "integer",
                    "min": None,
                    "max": None,
                },
                title="assay_response_id",
                visible_for_annotators=False,
                dataset_id=None,
            ),
        ],
        "allow_extra_metadata": False,
        "distribution": {"strategy": "overlap", "min_submitted": 1},
        "mapping": None,
    }


def _question(name: str, title: str, kind: str, options: list[dict]) -> dict:
    settings = {"type": kind, "options": options}
    if kind == "label_selection":
        settings["visible_options"] = None
    return _model(
        name,
        settings=settings,
        title=title,
        description=None,
        required=True,
        dataset_id=None,
        type=kind,
    )


def _answers(campaign: Campaign, score, violation) -> list[tuple[str, object]]:
    answers = []
    if campaign.asks_score and score is not None:
        answers.append((SCORE, score))
    if campaign.asks_safety and violation is not None:
        answers.append((SAFETY, safety_choice(violation)))
    return answers


def export_records(campaign: Campaign, tasks: list[GradingTask]) -> list[dict]:
    records = []
    for task in tasks:
        suggestions = {}
        for verdict in task.verdicts:
            if not verdict.scores_the_run:
                continue
            # A judge's 0–3 score is no answer to a binary campaign's question.
            score = None if campaign.is_binary else verdict.score
            for name, value in _answers(campaign, score, verdict.safety_violation):
                suggestions[name] = {
                    "value": value,
                    "score": None,
                    "agent": verdict.judge,
                }
        responses: dict[str, list[dict]] = {}
        for grade in task.grades:
            for name, value in _answers(campaign, grade.score, grade.safety_violation):
                responses.setdefault(name, []).append(
                    {
                        "value": value,
                        "user_id": synthetic_uuid(grade.username),
                        "status": SUBMITTED,
                    }
                )
        records.append(
            {
                "id": f"assay-task-{task.task_id}",
                "fields": {
                    "question": task.question,
                    "reference": task.reference,
                    "response": task.response,
                },
                "metadata": {
                    "item_id": task.item_id,
                    "language": task.language,
                    "assay_response_id": task.response_id,
                },
                "suggestions": suggestions,
                "responses": responses,
                "vectors": {},
                "status": "completed" if task.grades else "pending",
                "_server_id": None,
            }
        )
    return records


def records_file(data: bytes, problems: Problems) -> bytes:
    """`records.json` out of a zip of the to_disk() folder, or the file itself. The
    member is read up to IMPORT_MAX_MEMBER_BYTES: a few KB of zip can expand to
    gigabytes."""
    if not zipfile.is_zipfile(io.BytesIO(data)):
        return data
    cap = settings.IMPORT_MAX_MEMBER_BYTES
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = [
            name
            for name in archive.namelist()
            if name.rsplit("/", 1)[-1] == RECORDS_FILE
        ]
        if len(names) != 1:
            problems.add(
                0,
                "file",
                _("expected a zip holding %(name)s once") % {"name": RECORDS_FILE},
            )
            return b""
        with archive.open(names[0]) as member:
            content = member.read(cap + 1)
    if len(content) > cap:
        problems.add(
            0,
            names[0],
            _("expands to more than %(cap)s bytes (IMPORT_MAX_MEMBER_BYTES)")
            % {"cap": f"{cap:,}"},
        )
        return b""
    return content


def _responses(record: dict, line: int, problems: Problems) -> list[tuple]:
    """(where, question, user, value, status) of each response: to_disk() writes
    {question: [{value, user_id}]}; Assay's earlier exports wrote a flat
    list with `question_name`."""
    responses = record.get("responses") or {}
    found = []
    if isinstance(responses, dict):
        for name, answers in responses.items():
            if not isinstance(answers, list):
                problems.add(line, f"responses.{name}", _("expected a list"))
                continue
            for index, answer in enumerate(answers):
                where = f"responses.{name}[{index}]"
                if not isinstance(answer, dict):
                    problems.add(line, where, _("expected an object"))
                    continue
                found.append((where, name, answer))
    elif isinstance(responses, list):
        for index, answer in enumerate(responses):
            where = f"responses[{index}]"
            if not isinstance(answer, dict):
                problems.add(line, where, _("expected an object"))
                continue
            found.append((where, answer.get("question_name"), answer))
    else:
        problems.add(line, "responses", _("expected an object of questions"))
    return [
        (where, name, answer.get("user_id"), answer.get("value"), answer.get("status"))
        for where, name, answer in found
    ]


def read_records(data: bytes, problems: Problems) -> list[ImportedGrade]:
    """People's submitted grades, one per user and record; draft and discarded
    responses are no grades and are passed over."""
    data = records_file(data, problems)
    if problems:
        return []
    grades = []
    for line, record in enumerate(load_json_list(data, problems), start=1):
        metadata = record.get("metadata")
        response_id = whole_number(
            metadata.get("assay_response_id") if isinstance(metadata, dict) else None
        )
        if response_id is None:
            problems.add(
                line, "metadata.assay_response_id", _("expected the response's id")
            )
            continue
        by_user: dict[str, dict] = {}
        for where, name, user, value, status in _responses(record, line, problems):
            if (status or SUBMITTED) != SUBMITTED:
                continue
            if not isinstance(user, str) or not user:
                problems.add(line, f"{where}.user_id", _("expected a user id"))
                continue
            answers = by_user.setdefault(user, {"where": where})
            if name not in (SCORE, SAFETY):
                problems.add(
                    line, where, _("unknown question %(name)r") % {"name": name}
                )
            elif name in answers:
                problems.add(
                    line,
                    where,
                    _("a second %(question)s by %(user)s")
                    % {"question": name, "user": user},
                )
            else:
                answers[name] = value
        for user, answers in by_user.items():
            grade = _grade(user, answers, response_id, line, problems)
            if grade is not None:
                grades.append(grade)
    return grades


def _grade(
    user: str, answers: dict, response_id: int, line: int, problems: Problems
) -> ImportedGrade | None:
    where = answers["where"]
    score = violation = None
    if SCORE in answers:
        score = whole_number(answers[SCORE])
        if score is None:
            problems.add(
                line,
                f"{where}.value",
                _("%(value)r is no score") % {"value": answers[SCORE]},
            )
            return None
    if SAFETY in answers:
        if answers[SAFETY] not in (SAFE, VIOLATING):
            problems.add(
                line,
                f"{where}.value",
                _("%(value)r is not safe or violating") % {"value": answers[SAFETY]},
            )
            return None
        violation = answers[SAFETY] == VIOLATING
    return ImportedGrade(line, where, response_id, user, score, violation)
