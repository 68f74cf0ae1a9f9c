"""A grading campaign as Label Studio JSON tasks, and a Label Studio export of such
a project read back as people's grades.

Each task's `data` holds the texts and the ids the import matches by
(`assay_response_id`: the model response, the same in a copy of the campaign);
`predictions` are the judges' verdicts, one per judge and prompt version;
`annotations` are people's latest grades. The labeling config names the controls
the results use: `score` (Choices "0"–"3", or "0"/"1" in a binary campaign) and,
when the campaign asks it, `safety` (Choices safe / violating). Mapping:
docs/IMPORT_FORMATS.md.
"""

from xml.sax.saxutils import quoteattr

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


def export_tasks(campaign: Campaign, tasks: list[GradingTask]) -> list[dict]:
    exported = []
    for task in tasks:
        predictions = []
        for verdict in task.verdicts:
            # A judge's 0–3 score is no answer to a binary campaign's question.
            score = None if campaign.is_binary else verdict.score
            result = _result(campaign, score, verdict.safety_violation)
            if result:
                predictions.append({"model_version": verdict.judge, "result": result})
        annotations = [
            {
                "id": grade.label_id,
                "completed_by": {"email": grade.email, "username": grade.username},
                "result": _result(campaign, grade.score, grade.safety_violation),
                "lead_time": grade.seconds,
                "created_at": grade.created_at,
                "was_cancelled": False,
            }
            for grade in task.grades
        ]
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


def _user(annotation: dict) -> str | None:
    """Who completed an annotation: Label Studio writes `completed_by` as a user
    object (e-mail, and username in Assay's export) or only a number, and the
    export's `created_username` as "e-mail, id"."""
    completed_by = annotation.get("completed_by")
    if isinstance(completed_by, dict):
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
        problems.add(line, f"{where}.result", "expected a list of results")
        return chosen
    for index, entry in enumerate(result):
        field = f"{where}.result[{index}]"
        if not isinstance(entry, dict) or entry.get("from_name") not in (
            SCORE,
            SAFETY,
        ):
            problems.add(
                line, field, "expected a result of the score or safety control"
            )
            continue
        value = entry.get("value")
        choices = value.get("choices") if isinstance(value, dict) else None
        if not isinstance(choices, list) or len(choices) != 1:
            problems.add(line, field, "expected one chosen value")
            continue
        chosen[entry["from_name"]] = choices[0]
    return chosen


def read_export(data: bytes, problems: Problems) -> list[ImportedGrade]:
    """The people's grades of a Label Studio JSON export; cancelled (skipped)
    annotations are no grades and are passed over."""
    grades = []
    for line, task in enumerate(load_json_list(data, problems), start=1):
        task_data = task.get("data")
        response_id = whole_number(
            task_data.get("assay_response_id") if isinstance(task_data, dict) else None
        )
        if response_id is None:
            problems.add(line, "data.assay_response_id", "expected the response's id")
            continue
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            problems.add(line, "annotations", "expected a list")
            continue
        for index, annotation in enumerate(annotations):
            where = f"annotations[{index}]"
            if not isinstance(annotation, dict):
                problems.add(line, where, "expected an object")
                continue
            if annotation.get("was_cancelled"):
                continue
            user = _user(annotation)
            if user is None:
                problems.add(line, f"{where}.completed_by", "no e-mail or username")
                continue
            chosen = _read_result(annotation.get("result"), where, problems, line)
            score, violation = _grade(chosen, line, where, problems)
            lead_time = annotation.get("lead_time") or 0
            if (
                not isinstance(lead_time, int | float)
                or isinstance(lead_time, bool)
                or lead_time < 0
            ):
                problems.add(line, f"{where}.lead_time", "expected seconds (≥ 0)")
                lead_time = 0
            grades.append(
                ImportedGrade(
                    line, where, response_id, user, score, violation, float(lead_time)
                )
            )
    return grades


def _grade(chosen: dict, line: int, where: str, problems: Problems):
    score = violation = None
    if SCORE in chosen:
        value = chosen[SCORE]
        if isinstance(value, str) and value.isdigit() and len(value) == 1:
            score = int(value)
        else:
            problems.add(line, f"{where}.result.{SCORE}", f"{value!r} is no score")
    if SAFETY in chosen:
        value = chosen[SAFETY]
        if value not in (SAFE, VIOLATING):
            problems.add(
                line, f"{where}.result.{SAFETY}", f"{value!r} is not safe or violating"
            )
        else:
            violation = value == VIOLATING
    return score, violation
