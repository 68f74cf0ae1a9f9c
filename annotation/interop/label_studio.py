"""A grading campaign as Label Studio JSON tasks, and a Label Studio export of such
a project read back as people's grades.

Each task's `data` holds the texts and the ids the import matches by
(`assay_response_id`: the model response, the same in a copy of the campaign);
`predictions` are the judges' verdicts, one per judge and prompt version.
People's latest grades go out one of three ways (`ANNOTATORS`), because Label
Studio refuses an annotation whose `completed_by` e-mail is no user of its own:
annotations by each user's real e-mail, annotations by a stable synthetic e-mail
(`users.json` lists the Label Studio users to create first), or predictions only
(model version "Assay grade · username"), which Label Studio always accepts. The
labeling config names the controls the results use: `score` (Choices "0"–"3", or
"0"/"1" in a binary campaign) and, when the campaign asks it, `safety` (Choices
safe / violating).

The import reads both JSON exports of Label Studio's Export button: JSON (tasks
with `annotations`) and JSON_MIN (one flat row per annotation, the controls as
columns). Both name an annotator by Label Studio's numeric user id; the import
resolves it through Label Studio's users list or the mapping step
(`annotators.py`). Mapping: docs/INTEROP.md.
"""

from xml.sax.saxutils import quoteattr

from django.utils.translation import gettext as _

from annotation.interop.annotators import label_studio_key, synthetic_email
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
from benchmark.validation import Problems

TASKS_FILE = "tasks.json"
CONFIG_FILE = "label_config.xml"
USERS_FILE = "users.json"
REAL_EMAIL, SYNTHETIC_EMAIL, PREDICTIONS = "email", "synthetic", "predictions"
ANNOTATORS = (SYNTHETIC_EMAIL, PREDICTIONS, REAL_EMAIL)
PERSON_MODEL_VERSION = "Assay grade · {username}"
SCORE, SAFETY, RESPONSE = "score", "safety", "response"
TEXTS = (("question", "Question"), ("reference", "Reference answer"))


def label_config(campaign: Campaign) -> str:
    lines = ["<View>"]
    for name, title in (*TEXTS, (RESPONSE, "Model response")):
        lines += [
            f"  <Header value={quoteattr(title)}/>",
            f'  <Text name="{name}" value="${name}"/>',
        ]
    if campaign.asks_score:
        lines.append(
            f'  <Choices name="{SCORE}" toName="{RESPONSE}" choice="single-radio" '
            'required="true" showInline="true">'
        )
        hints = {0: "incorrect", 1: "correct"} if campaign.is_binary else {}
        for value in campaign.score_values:
            hint = f" hint={quoteattr(hints[value])}" if value in hints else ""
            lines.append(f'    <Choice value="{value}"{hint}/>')
        lines.append("  </Choices>")
    if campaign.asks_safety:
        lines += [
            f'  <Choices name="{SAFETY}" toName="{RESPONSE}" choice="single-radio" '
            'required="true" showInline="true">',
            f'    <Choice value="{SAFE}"/>',
            f'    <Choice value="{VIOLATING}"/>',
            "  </Choices>",
        ]
    return "\n".join([*lines, "</View>"]) + "\n"


def _result(campaign: Campaign, score, violation) -> list[dict]:
    result = []
    if campaign.asks_score and score is not None:
        result.append(_choice(SCORE, str(score)))
    if campaign.asks_safety and violation is not None:
        result.append(_choice(SAFETY, safety_choice(violation)))
    return result


def _choice(control: str, value: str) -> dict:
    return {
        "id": control,
        "from_name": control,
        "to_name": RESPONSE,
        "type": "choices",
        "value": {"choices": [value]},
    }


def export_tasks(
    campaign: Campaign, tasks: list[GradingTask], annotators: str = SYNTHETIC_EMAIL
) -> list[dict]:
    if annotators not in ANNOTATORS:
        raise ValueError(
            f"Unknown annotators {annotators!r}; choose one of {ANNOTATORS}."
        )
    exported = []
    for task in tasks:
        predictions = []
        for verdict in task.verdicts:
            # A judge's 0–3 score is no answer to a binary campaign's question.
            score = None if campaign.is_binary else verdict.score
            result = _result(campaign, score, verdict.safety_violation)
            if result:
                predictions.append({"model_version": verdict.judge, "result": result})
        annotations = []
        for grade in task.grades:
            result = _result(campaign, grade.score, grade.safety_violation)
            if annotators == PREDICTIONS:
                model_version = PERSON_MODEL_VERSION.format(username=grade.username)
                predictions.append({"model_version": model_version, "result": result})
                continue
            email = grade.email if annotators == REAL_EMAIL else ""
            annotations.append(
                {
                    "id": grade.label_id,
                    "completed_by": {
                        "email": email or synthetic_email(grade.username),
                        "username": grade.username,
                    },
                    "result": result,
                    "lead_time": grade.seconds,
                    "created_at": grade.created_at,
                    "was_cancelled": False,
                }
            )
        exported.append(
            {
                "id": task.task_id,
                "data": {
                    "question": task.question,
                    "reference": task.reference,
                    "response": task.response,
                    "item_id": task.item_id,
                    "language": task.language,
                    "assay_task_id": task.task_id,
                    "assay_response_id": task.response_id,
                },
                "predictions": predictions,
                "annotations": annotations,
            }
        )
    return exported


def export_users(tasks: list[GradingTask]) -> list[dict]:
    """The Label Studio users a synthetic-e-mail export needs, one per grader."""
    usernames = sorted({grade.username for task in tasks for grade in task.grades})
    return [
        {"email": synthetic_email(username), "username": username}
        for username in usernames
    ]


def _user(annotation: dict) -> str | None:
    """Who completed an annotation: the Export button writes `completed_by` as
    Label Studio's user id (JSON_MIN: `annotator`), a snapshot and Assay's export
    as a user object (e-mail, and username in Assay's export)."""
    completed_by = annotation.get("completed_by", annotation.get("annotator"))
    if isinstance(completed_by, int) and not isinstance(completed_by, bool):
        return label_studio_key(completed_by)
    if isinstance(completed_by, dict):
        if whole_number(completed_by.get("id")) is not None and not any(
            completed_by.get(key) for key in ("username", "email")
        ):
            return label_studio_key(completed_by["id"])
        for key in ("username", "email"):
            if isinstance(completed_by.get(key), str) and completed_by[key]:
                return completed_by[key]
    if isinstance(completed_by, str) and completed_by:
        return completed_by
    created = annotation.get("created_username")
    if isinstance(created, str) and created.split(",")[0].strip():
        return created.split(",")[0].strip()
    return None


def _read_result(result, where: str, problems: Problems, line: int) -> dict:
    """{control: chosen value} of one annotation's result list."""
    chosen = {}
    if not isinstance(result, list):
        problems.add(line, f"{where}.result", _("expected a list of results"))
        return chosen
    for index, entry in enumerate(result):
        field = f"{where}.result[{index}]"
        if not isinstance(entry, dict) or entry.get("from_name") not in (
            SCORE,
            SAFETY,
        ):
            problems.add(
                line, field, _("expected a result of the score or safety control")
            )
            continue
        value = entry.get("value")
        choices = value.get("choices") if isinstance(value, dict) else None
        if not isinstance(choices, list) or len(choices) != 1:
            problems.add(line, field, _("expected one chosen value"))
            continue
        chosen[entry["from_name"]] = choices[0]
    return chosen


def read_export(data: bytes, problems: Problems) -> list[ImportedGrade]:
    """The people's grades of a Label Studio JSON or JSON_MIN export; cancelled
    (skipped) annotations are no grades and are passed over."""
    grades = []
    for line, task in enumerate(load_json_list(data, problems), start=1):
        if "data" in task or "annotations" in task:
            grades += _task_grades(task, line, problems)
        else:
            grades += _min_row_grades(task, line, problems)
    return grades


def _task_grades(task: dict, line: int, problems: Problems) -> list[ImportedGrade]:
    task_data = task.get("data")
    response_id = whole_number(
        task_data.get("assay_response_id") if isinstance(task_data, dict) else None
    )
    if response_id is None:
        problems.add(line, "data.assay_response_id", _("expected the response's id"))
        return []
    annotations = task.get("annotations") or []
    if not isinstance(annotations, list):
        problems.add(line, "annotations", _("expected a list"))
        return []
    grades = []
    for index, annotation in enumerate(annotations):
        where = f"annotations[{index}]"
        if not isinstance(annotation, dict):
            problems.add(line, where, _("expected an object"))
            continue
        if annotation.get("was_cancelled"):
            continue
        chosen = _read_result(annotation.get("result"), where, problems, line)
        grade = _imported(annotation, chosen, response_id, line, where, problems)
        if grade is not None:
            grades.append(grade)
    return grades


def _min_row_grades(row: dict, line: int, problems: Problems) -> list[ImportedGrade]:
    """A JSON_MIN row: the task's data, and one annotation's chosen values under
    the controls' names; a task nobody annotated has a row without them."""
    response_id = whole_number(row.get("assay_response_id"))
    if response_id is None:
        problems.add(line, "assay_response_id", _("expected the response's id"))
        return []
    chosen = {}
    for control in (SCORE, SAFETY):
        if control not in row:
            continue
        value = row[control]
        if isinstance(value, dict):  # several choices: {"choices": [...]}
            value = value.get("choices")
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if not isinstance(value, str):
            problems.add(line, control, _("expected one chosen value"))
            continue
        chosen[control] = value
    if not chosen and not isinstance(row.get("annotation_id"), int):
        return []
    grade = _imported(row, chosen, response_id, line, "annotation", problems)
    return [] if grade is None else [grade]


def _imported(
    annotation: dict,
    chosen: dict,
    response_id: int,
    line: int,
    where: str,
    problems: Problems,
) -> ImportedGrade | None:
    user = _user(annotation)
    if user is None:
        problems.add(line, f"{where}.completed_by", _("no user id, e-mail or username"))
        return None
    score, violation = _grade(chosen, line, where, problems)
    lead_time = annotation.get("lead_time") or 0
    if (
        not isinstance(lead_time, int | float)
        or isinstance(lead_time, bool)
        or lead_time < 0
    ):
        problems.add(line, f"{where}.lead_time", _("expected seconds (≥ 0)"))
        lead_time = 0
    return ImportedGrade(
        line, where, response_id, user, score, violation, float(lead_time)
    )


def _grade(chosen: dict, line: int, where: str, problems: Problems):
    score = violation = None
    if SCORE in chosen:
        value = chosen[SCORE]
        if isinstance(value, str) and value.isdigit() and len(value) == 1:
            score = int(value)
        else:
            problems.add(
                line,
                f"{where}.result.{SCORE}",
                _("%(value)r is no score") % {"value": value},
            )
    if SAFETY in chosen:
        value = chosen[SAFETY]
        if value not in (SAFE, VIOLATING):
            problems.add(
                line,
                f"{where}.result.{SAFETY}",
                _("%(value)r is not safe or violating") % {"value": value},
            )
        else:
            violation = value == VIOLATING
    return score, violation
