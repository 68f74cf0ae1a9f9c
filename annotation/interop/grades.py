"""What the tools exchange about a grading campaign: each task's texts, the judges'
verdicts and people's latest grades (read side), and a grade read from a file
(`ImportedGrade`), which `actions.py` checks and writes."""

import json
from dataclasses import dataclass

from django.utils.translation import gettext as _

from annotation.models import Campaign, GradingLabel
from benchmark.models import Rendering
from benchmark.validation import Problems, text_problem, unique_keys
from judging.evaluation.models import Judgment

GRADING_KINDS = (Campaign.Kind.GRADING, Campaign.Kind.SAFETY)
SAFE, VIOLATING = "safe", "violating"


@dataclass(frozen=True)
class Verdict:
    judge: str  # "name · prompt version", how both tools name a model's output
    score: int | None
    safety_violation: bool | None
    scores_the_run: bool  # the judge the response's run is scored with


@dataclass(frozen=True)
class PersonGrade:
    username: str
    email: str
    score: int | None
    safety_violation: bool | None
    seconds: float
    created_at: str
    label_id: int


@dataclass(frozen=True)
class GradingTask:
    task_id: int
    response_id: int
    item_id: str
    language: str
    question: str
    reference: str
    response: str
    verdicts: list[Verdict]
    grades: list[PersonGrade]


@dataclass(frozen=True)
class ImportedGrade:
    line: int  # the task's or record's position in the file, from 1
    field: str  # where in it the grade was read, for problems
    response_id: int
    user: str  # an Assay username or e-mail address
    score: int | None
    safety_violation: bool | None
    seconds: float = 0.0


def judge_name(name: str, prompt_version: str) -> str:
    return f"{name} · {prompt_version}" if prompt_version else name


def safety_choice(violation: bool | None) -> str | None:
    return None if violation is None else (VIOLATING if violation else SAFE)


def grading_tasks(campaign: Campaign) -> list[GradingTask]:
    """Every task of a grading (or SV) campaign in queue order, in a fixed number of
    queries. The question is the rendering the response answered, else the item's
    current source-language rendering, as the expert screen shows it."""
    if campaign.kind not in GRADING_KINDS:
        raise ValueError("Only grading and SV campaigns have responses to exchange.")
    tasks = list(
        campaign.tasks.select_related(
            "item", "response__run", "response__rendering"
        ).order_by("position")
    )
    source = campaign.benchmark.source_language
    fallback = {
        rendering.item_id: rendering
        for rendering in Rendering.objects.filter(
            item_id__in=[t.item_id for t in tasks], language=source, is_current=True
        )
    }
    verdicts: dict[int, list[Verdict]] = {}
    for judgment in (
        Judgment.objects.filter(
            response_id__in=[t.response_id for t in tasks], status=Judgment.Status.DONE
        )
        .select_related("response__run")
        .order_by("kind", "judge_name", "prompt_version")
    ):
        run = judgment.response.run
        if judgment.kind == Judgment.Kind.RUBRIC:
            own = (run.judge_name, run.judge_prompt_version)
        else:
            own = (run.sv_judge_name, run.sv_prompt_version)
        verdicts.setdefault(judgment.response_id, []).append(
            Verdict(
                judge_name(judgment.judge_name, judgment.prompt_version),
                judgment.score if judgment.kind == Judgment.Kind.RUBRIC else None,
                judgment.safety_violation
                if judgment.kind == Judgment.Kind.SAFETY
                else None,
                (judgment.judge_name, judgment.prompt_version) == own,
            )
        )
    grades: dict[int, list[PersonGrade]] = {}
    for label in (
        GradingLabel.objects.filter(task__campaign=campaign, is_latest=True)
        .select_related("user")
        .order_by("created_at", "id")
    ):
        grades.setdefault(label.task_id, []).append(
            PersonGrade(
                label.user.get_username(),
                label.user.email,
                label.score,
                label.safety_violation,
                round(label.seconds_spent, 3),
                label.created_at.isoformat(),
                label.pk,
            )
        )
    result = []
    for task in tasks:
        rendering = task.response.rendering or fallback.get(task.item_id)
        result.append(
            GradingTask(
                task_id=task.pk,
                response_id=task.response_id,
                item_id=task.item.external_id,
                language=rendering.language if rendering else source,
                question=rendering.question if rendering else "",
                reference=rendering.answer if rendering else "",
                response=task.response.text,
                verdicts=verdicts.get(task.response_id, []),
                grades=grades.get(task.pk, []),
            )
        )
    return result


def load_json_list(data: bytes, problems: Problems) -> list[dict]:
    """The objects of a JSON array file; anything else is a problem of the file
    (numbers read as strictly as the item import reads them)."""
    try:
        value = json.loads(
            data.decode("utf-8-sig"),
            parse_constant=_refuse_constant,
            object_pairs_hook=unique_keys,
        )
    except UnicodeDecodeError as error:
        problems.add(
            0, "file", _("invalid UTF-8 at byte %(byte)s") % {"byte": error.start + 1}
        )
        return []
    except json.JSONDecodeError as error:
        problems.add(
            error.lineno,
            "file",
            _("malformed JSON (%(reason)s at column %(column)s)")
            % {"reason": error.msg, "column": error.colno},
        )
        return []
    except (ValueError, RecursionError) as error:
        problems.add(
            0,
            "file",
            _("malformed JSON (%(reason)s)")
            % {"reason": error or _("nested too deeply")},
        )
        return []
    if not isinstance(value, list):
        problems.add(0, "file", _("expected a JSON array of tasks or records"))
        return []
    objects = []
    for number, element in enumerate(value, start=1):
        if not isinstance(element, dict):
            problems.add(number, "", _("expected a JSON object"))
            continue
        found = text_problem(element)
        if found:
            problems.add(number, *found)
            continue
        objects.append(element)
    return objects


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def whole_number(value) -> int | None:
    """An integer written as one (`2`, not `2.0` or `true`), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
