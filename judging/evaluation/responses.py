"""An evaluation response with the verdicts that count for it: the judges its run
uses, every other judge's, people's overrides and a binary run's answer grade. The
item results page, a heatmap cell's drill-down, a run's page and the REST API read
responses through `response_details`."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import (
    F,
    Q,
)
from django.utils.translation import gettext

from judging.evaluation.choices import CHOICE_FORMATS
from judging.evaluation.models import (
    AnswerGrade,
    Judgment,
    Response,
    ScoreOverride,
)


def _primary_judgments(responses) -> dict[int, dict[str, Judgment]]:
    """response id -> {"rubric": …, "safety": …} from the judges each run uses."""
    rows = Judgment.objects.filter(response__in=responses).filter(
        Q(
            kind=Judgment.Kind.RUBRIC,
            judge_name=F("response__run__judge_name"),
            prompt_version=F("response__run__judge_prompt_version"),
        )
        | Q(
            kind=Judgment.Kind.SAFETY,
            judge_name=F("response__run__sv_judge_name"),
            prompt_version=F("response__run__sv_prompt_version"),
        )
        | Q(
            kind=Judgment.Kind.KEYPOINT,
            judge_name=F("response__run__judge_name"),
            prompt_version=F("response__run__judge_prompt_version"),
        )
    )
    found: dict[int, dict[str, Judgment]] = {}
    for judgment in rows:
        found.setdefault(judgment.response_id, {})[judgment.kind] = judgment
    return found


@dataclass
class ResponseDetail:
    response: Response
    rubric: Judgment | None
    safety: Judgment | None
    other_rubrics: list[Judgment] = field(default_factory=list)
    # Every override and revert on the response, newest first.
    overrides: list[ScoreOverride] = field(default_factory=list)
    # A binary run's MC/TF answer: what the rules read, and its grade.
    grade: AnswerGrade | None = None

    @property
    def binary(self) -> bool:
        return self.response.run.binary

    @property
    def read_by_rules(self) -> bool:
        """A binary run's MC/TF answer: graded by extraction, no judge."""
        return self.binary and self.response.item.format in CHOICE_FORMATS

    @property
    def flagged(self) -> bool:
        return self.read_by_rules and self.grade is not None and self.grade.is_flagged

    @property
    def unanswered(self) -> bool:
        return self.response.status in {
            Response.Status.EMPTY,
            Response.Status.INVALID,
        }

    def _override(self, kind: str) -> ScoreOverride | None:
        latest = next(
            (o for o in self.overrides if o.kind == kind and o.is_latest), None
        )
        return None if latest is None or latest.reverts else latest

    @property
    def rubric_override(self) -> ScoreOverride | None:
        """The person's score in force, if any (judging.evaluation.models)."""
        return self._override(Judgment.Kind.RUBRIC)

    @property
    def safety_override(self) -> ScoreOverride | None:
        return self._override(Judgment.Kind.SAFETY)

    @property
    def revertible(self) -> list[tuple[str, str]]:
        """(kind, what is restored) of each override in force, for its revert."""
        return [
            (kind, what)
            for kind, what in (
                (Judgment.Kind.RUBRIC, "score"),
                (Judgment.Kind.SAFETY, "SV flag"),
            )
            if self._override(kind)
        ]

    @property
    def judge_raw(self) -> int | None:
        if self.rubric and self.rubric.status == Judgment.Status.DONE:
            return self.rubric.score
        return None

    @property
    def judge_violation(self) -> bool | None:
        if self.safety and self.safety.status == Judgment.Status.DONE:
            return self.safety.safety_violation
        return None

    @property
    def raw(self) -> int | None:
        if self.read_by_rules:
            grade = self.grade.grade if self.grade is not None else None
            return grade if grade in (0, 1) else None
        if self.unanswered:
            return 0
        if self.judge_raw is not None and self.rubric_override:
            return self.rubric_override.score
        return self.judge_raw

    @property
    def violation(self) -> bool | None:
        if self.unanswered:
            return False
        if self.judge_violation is not None and self.safety_override:
            return self.safety_override.safety_violation
        return self.judge_violation

    @property
    def final(self) -> int | None:
        if self.binary:
            return self.raw
        if self.raw is None or self.violation is None:
            return None
        return 0 if self.violation else self.raw

    @property
    def pending(self) -> bool:
        return (
            self.final is None and self.response.waived_at is None and not self.flagged
        )

    @property
    def may_override(self) -> bool:
        """Overrides change the verdicts of answered, counted responses only
        (judging.evaluation.overrides.check_override_score)."""
        return (
            not self.binary
            and self.response.status == Response.Status.ANSWERED
            and self.response.waived_at is None
        )

    @property
    def problem(self) -> str:
        """Why a pending item has no final score yet, for the run page."""
        response = self.response
        if response.status == Response.Status.FAILED:
            return gettext("Answer call failed: %(error)s") % {"error": response.error}
        if response.status == Response.Status.PENDING:
            return gettext("Not answered yet.")
        if self.read_by_rules:
            return gettext("Not graded yet.")
        judge = gettext("Key-point judge") if self.binary else gettext("Judge")
        verdicts = [(judge, self.rubric)]
        if not self.unanswered and not self.binary:
            verdicts.append((gettext("SV check"), self.safety))
        problems = []
        for name, judgment in verdicts:
            if judgment is None:
                problems.append(gettext("%(name)s: not asked yet") % {"name": name})
            elif judgment.status != Judgment.Status.DONE:
                status = judgment.get_status_display().lower()
                problems.append(f"{name} {status}: {judgment.error}".rstrip(": "))
        return "; ".join(problems)


def response_details(
    responses, *, with_other_judges: bool = False
) -> list[ResponseDetail]:
    responses = list(responses)
    ids = [r.pk for r in responses]
    primary = _primary_judgments(ids)
    others: dict[int, list[Judgment]] = {}
    if with_other_judges:
        for judgment in Judgment.objects.filter(
            response__in=ids, kind=Judgment.Kind.RUBRIC
        ).order_by("judge_name"):
            others.setdefault(judgment.response_id, []).append(judgment)
    overrides: dict[int, list[ScoreOverride]] = {}
    for override in (
        ScoreOverride.objects.filter(response__in=ids)
        .select_related("user")
        .order_by("-created_at", "-id")
    ):
        overrides.setdefault(override.response_id, []).append(override)
    grades = {
        grade.response_id: grade
        for grade in AnswerGrade.objects.filter(response__in=ids)
    }
    details = []
    for response in responses:
        mine = primary.get(response.pk, {})
        rubric = mine.get(response.run.verdict_kind)
        details.append(
            ResponseDetail(
                response=response,
                rubric=rubric,
                safety=mine.get(Judgment.Kind.SAFETY),
                other_rubrics=[
                    j
                    for j in others.get(response.pk, [])
                    if rubric is None or j.pk != rubric.pk
                ],
                overrides=overrides.get(response.pk, []),
                grade=grades.get(response.pk),
            )
        )
    return details


def item_details(item) -> list[ResponseDetail]:
    responses = (
        Response.objects.filter(item=item)
        .select_related("run", "rendering", "item")
        .order_by(
            "run__language", "run__model_name", "run__thinking", "run_id", "trial"
        )
    )
    return response_details(responses, with_other_judges=True)
