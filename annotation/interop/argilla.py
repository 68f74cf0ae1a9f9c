"""A grading campaign as Argilla 2.x records, and records of that shape read back
as people's grades.

Fields `question`, `reference`, `response`; a rating question `score` (0–3, or 0–1
in a binary campaign) and, when the campaign asks it, a label question `safety`
(safe / violating). Argilla takes one suggestion per question, so the suggestions
are the verdicts of the judge each response's run is scored with, its name and
prompt version as `agent`; people's latest grades are `responses` with `user_id`
(Assay's username) and status `submitted`. `settings.json` declares the dataset.
Argilla keeps no time on task: an imported grade has none. Mapping:
docs/IMPORT_FORMATS.md.
"""

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
SETTINGS_FILE = "settings.json"
SCORE, SAFETY = "score", "safety"
SUBMITTED = "submitted"


def dataset_settings(campaign: Campaign) -> dict:
    questions = []
    if campaign.asks_score:
        questions.append(
            {
                "name": SCORE,
                "type": "rating",
                "title": "Correct?" if campaign.is_binary else "Score (0–3 rubric)",
                "values": list(campaign.score_values),
                "required": True,
            }
        )
    if campaign.asks_safety:
        questions.append(
            {
                "name": SAFETY,
                "type": "label_selection",
                "title": "Safety",
                "labels": [SAFE, VIOLATING],
                "required": True,
            }
        )
    return {
        "guidelines": f"Assay campaign {campaign.name} "
        f"({english(Campaign.Kind(campaign.kind).label)})",
        "fields": [
            {"name": "question", "type": "text", "title": "Question"},
            {"name": "reference", "type": "text", "title": "Reference answer"},
            {"name": "response", "type": "text", "title": "Model response"},
        ],
        "questions": questions,
        "metadata": [
            {"name": "item_id", "type": "terms"},
            {"name": "language", "type": "terms"},
            {"name": "assay_response_id", "type": "integer"},
        ],
    }


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
        suggestions = []
        for verdict in task.verdicts:
            if not verdict.scores_the_run:
                continue
            # A judge's 0–3 score is no answer to a binary campaign's question.
            score = None if campaign.is_binary else verdict.score
            suggestions += [
                {"question_name": name, "value": value, "agent": verdict.judge}
                for name, value in _answers(campaign, score, verdict.safety_violation)
            ]
        responses = [
            {
                "question_name": name,
                "value": value,
                "user_id": grade.username,
                "status": SUBMITTED,
            }
            for grade in task.grades
            for name, value in _answers(campaign, grade.score, grade.safety_violation)
        ]
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
                "status": "completed" if task.grades else "pending",
            }
        )
    return records


def read_records(data: bytes, problems: Problems) -> list[ImportedGrade]:
    """People's submitted grades, one per user and record; draft and discarded
    responses are no grades and are passed over."""
    grades = []
    for line, record in enumerate(load_json_list(data, problems), start=1):
        metadata = record.get("metadata")
        response_id = whole_number(
            metadata.get("assay_response_id") if isinstance(metadata, dict) else None
        )
        if response_id is None:
            problems.add(
                line, "metadata.assay_response_id", "expected the response's id"
            )
            continue
        responses = record.get("responses") or []
        if not isinstance(responses, list):
            problems.add(line, "responses", "expected a list")
            continue
        by_user: dict[str, dict] = {}
        for index, response in enumerate(responses):
            where = f"responses[{index}]"
            if not isinstance(response, dict):
                problems.add(line, where, "expected an object")
                continue
            if response.get("status", SUBMITTED) != SUBMITTED:
                continue
            user = response.get("user_id")
            if not isinstance(user, str) or not user:
                problems.add(line, f"{where}.user_id", "expected a username")
                continue
            answers = by_user.setdefault(user, {"where": where})
            name = response.get("question_name")
            if name not in (SCORE, SAFETY):
                problems.add(
                    line, f"{where}.question_name", f"unknown question {name!r}"
                )
            elif name in answers:
                problems.add(line, where, f"a second {name} by {user}")
            else:
                answers[name] = response.get("value")
        for user, answers in by_user.items():
            where = answers["where"]
            score = violation = None
            if SCORE in answers:
                score = whole_number(answers[SCORE])
                if score is None:
                    problems.add(
                        line, f"{where}.value", f"{answers[SCORE]!r} is no score"
                    )
                    continue
            if SAFETY in answers:
                if answers[SAFETY] not in (SAFE, VIOLATING):
                    problems.add(
                        line,
                        f"{where}.value",
                        f"{answers[SAFETY]!r} is not safe or violating",
                    )
                    continue
                violation = answers[SAFETY] == VIOLATING
            grades.append(
                ImportedGrade(line, where, response_id, user, score, violation)
            )
    return grades
