"""Writing people's grades read from another tool into a campaign, all or nothing:
every grade is checked first and each problem named by task and field; only a file
without problems is written, through `annotation.actions.do_import_grading`."""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.actions import check_grading, do_import_grading
from annotation.interop.annotators import describe, resolve
from annotation.interop.grades import GRADING_KINDS, ImportedGrade
from annotation.models import Campaign, GradingLabel
from benchmark.validation import Problems


@dataclass
class GradeImportSummary:
    created: int = 0
    corrected: int = 0
    unchanged: int = 0

    def lines(self) -> list[str]:
        return [
            f"{self.created} grade(s) added, {self.corrected} corrected, "
            f"{self.unchanged} unchanged."
        ]


def unmapped_annotators(grades: list[ImportedGrade], mapping: dict[str, str]):
    """{annotator key: number of grades} for the keys that name no Assay user: what
    the mapping step asks about."""
    keys = {grade.user for grade in grades}
    known = resolve(keys, mapping)
    counts: dict[str, int] = {}
    for grade in grades:
        if grade.user not in known:
            counts[grade.user] = counts.get(grade.user, 0) + 1
    return counts


def check_imported_grades(
    campaign: Campaign,
    grades: list[ImportedGrade],
    problems: Problems,
    mapping: dict[str, str] | None = None,
) -> list[tuple]:
    """(task, user, grade) for each grade that can be written; a problem for each
    that cannot."""
    if campaign.kind not in GRADING_KINDS:
        problems.add(0, "", _("only grading and SV campaigns take imported grades"))
        return []
    if not campaign.is_open:
        problems.add(0, "", _("the campaign is closed; labels can no longer change"))
        return []
    tasks = {task.response_id: task for task in campaign.tasks.all()}
    users = resolve({grade.user for grade in grades}, mapping or {})
    resolved, seen = [], set()
    for grade in grades:
        task = tasks.get(grade.response_id)
        user = users.get(grade.user)
        if task is None:
            problems.add(
                grade.line,
                grade.field,
                _("response %(id)s is not graded in this campaign")
                % {"id": grade.response_id},
            )
        if user is None:
            problems.add(
                grade.line,
                grade.field,
                _("unknown annotator %(name)r: map it to an Assay user")
                % {"name": describe(grade.user)},
            )
        try:
            check_grading(campaign, grade.score, grade.safety_violation)
        except ValidationError as error:
            problems.add(grade.line, grade.field, error.messages[0])
            continue
        if task is None or user is None:
            continue
        if (task.pk, user.pk) in seen:
            problems.add(
                grade.line,
                grade.field,
                _("a second grade by %(user)s on this task") % {"user": grade.user},
            )
            continue
        seen.add((task.pk, user.pk))
        task.campaign = campaign
        resolved.append((task, user, grade))
    return resolved


@transaction.atomic
def do_import_grades(
    campaign: Campaign,
    grades: list[ImportedGrade],
    problems: Problems,
    mapping: dict[str, str] | None = None,
) -> GradeImportSummary:
    """Write every grade, or raise the problems' rejection with nothing written
    (`problems` may already hold those of reading the file). `mapping` names the
    Assay user (username or e-mail) of annotator keys the file names otherwise."""
    resolved = check_imported_grades(campaign, grades, problems, mapping)
    if not grades and not problems:
        problems.add(0, "", _("the file holds no grades"))
    if problems:
        raise problems.rejection()
    before = {
        (task_id, user_id): (score, violation)
        for task_id, user_id, score, violation in GradingLabel.objects.filter(
            task__campaign=campaign, is_latest=True
        ).values_list("task_id", "user_id", "score", "safety_violation")
    }
    summary = GradeImportSummary()
    for task, user, grade in resolved:
        previous = before.get((task.pk, user.pk))
        if previous == (grade.score, grade.safety_violation):
            summary.unchanged += 1
            continue
        do_import_grading(
            task,
            user,
            score=grade.score,
            safety_violation=grade.safety_violation,
            seconds=grade.seconds,
        )
        if previous is None:
            summary.created += 1
        else:
            summary.corrected += 1
    return summary
