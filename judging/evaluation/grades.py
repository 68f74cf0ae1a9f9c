"""A binary run's graded answers as runs × items × trials arrays, read in one query:
the MC/TF grade written with the answer and the key-point judge's 0/1. The binary
leaderboard, subsets and the run page read them here; flagged answers keep their
kind (several answers, refusal, none found), and a provider's refusal (its content
filter declined the request) is an outcome of its own.

Two score arrays: `score` holds 1 / 0 for answers with a verdict (NaN otherwise);
`tested_score()` also scores every other tested answer — flagged, provider-refused
— 0, not correct: the denominator study 002 §2.3 divides by (all tested
questions)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Count,
    ExpressionWrapper,
    F,
    FilteredRelation,
    IntegerField,
    Q,
    Value,
    When,
)

from benchmark.models import Item
from judging.evaluation.choices import CHOICE_FORMATS
from judging.evaluation.extraction import Grade
from judging.evaluation.models import AnswerGrade, EvaluationRun, Judgment, Response

FORMATS = [value for value, _ in Item.Format.choices]
FORMAT_NAMES = dict(Item.Format.choices)
FLAGGED = (Grade.MULTIPLE, Grade.REFUSAL, Grade.NONE)


@dataclass
class BinaryMatrix:
    """runs × items × trials. Items are the union of the runs' items, by id."""

    runs: list[EvaluationRun]
    item_ids: np.ndarray
    item_format: np.ndarray  # index into FORMATS, per item
    present: np.ndarray  # the run has a response for the item in this trial
    waived: np.ndarray
    score: np.ndarray  # 1 correct, 0 wrong, NaN: flagged, pending, waived, absent
    grade: np.ndarray  # extraction.Grade of an MC/TF answer; -1 otherwise
    refused: np.ndarray  # the provider refused the request (content filter)

    def restricted(self, item_ids) -> BinaryMatrix:
        keep = np.isin(self.item_ids, np.asarray(list(item_ids), dtype=np.int64))
        return replace(
            self,
            item_ids=self.item_ids[keep],
            item_format=self.item_format[keep],
            **{
                name: getattr(self, name)[:, keep]
                for name in ("present", "waived", "score", "grade", "refused")
            },
        )

    def flagged(self) -> np.ndarray:
        return np.isin(self.grade, FLAGGED) & ~self.waived

    def provider_refused(self) -> np.ndarray:
        return self.refused & ~self.waived

    def pending(self) -> np.ndarray:
        """Answers asked and not waived with neither a score nor a flag yet."""
        return (
            self.present
            & ~self.waived
            & np.isnan(self.score)
            & ~self.flagged()
            & ~self.refused
        )

    def tested_score(self) -> np.ndarray:
        """`score` with every tested answer that is not correct scored 0: flagged
        answers (several, a refusal, none found — an empty reply included) and
        provider refusals. NaN stays for pending, waived and unasked answers."""
        not_correct = self.flagged() | self.provider_refused()
        return np.where(not_correct, 0.0, self.score)


def _rows(runs: list[EvaluationRun]) -> np.ndarray:
    format_code = Case(
        *[When(item__format=name, then=Value(i)) for i, name in enumerate(FORMATS)],
        default=Value(0),
        output_field=IntegerField(),
    )
    query = (
        Response.objects.filter(run__in=[run.pk for run in runs])
        .annotate(
            verdict=FilteredRelation(
                "judgments",
                condition=Q(
                    judgments__kind=Judgment.Kind.KEYPOINT,
                    judgments__status=Judgment.Status.DONE,
                    judgments__judge_name=F("run__judge_name"),
                    judgments__prompt_version=F("run__judge_prompt_version"),
                ),
            ),
            format_code=format_code,
            is_waived=ExpressionWrapper(
                Q(waived_at__isnull=False), output_field=BooleanField()
            ),
            is_refused=ExpressionWrapper(
                Q(status=Response.Status.REFUSED), output_field=BooleanField()
            ),
        )
        .order_by()
        .values_list(
            "run_id",
            "item_id",
            "trial",
            "format_code",
            "is_waived",
            "grade__grade",
            "verdict__score",
            "is_refused",
        )
    )
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return np.array(rows, dtype=float).reshape(-1, 8)


def load_binary(runs: list[EvaluationRun]) -> BinaryMatrix:
    """One query: every response of `runs` with its grade or key-point verdict."""
    table = _rows(runs) if runs else np.zeros((0, 8))
    trials = max([run.trials for run in runs], default=1)
    run_ids = np.array([run.pk for run in runs], dtype=np.int64)
    order = np.argsort(run_ids)
    run_col = table[:, 0].astype(np.int64)
    item_col = table[:, 1].astype(np.int64)
    trial_col = np.minimum(table[:, 2].astype(np.int64), trials - 1)
    item_ids = np.unique(item_col)
    shape = (len(runs), item_ids.size, trials)
    rows = order[np.searchsorted(run_ids, run_col, sorter=order)] if runs else []
    cols = np.searchsorted(item_ids, item_col)
    at = (rows, cols, trial_col)
    present = np.zeros(shape, dtype=bool)
    present[at] = True
    waived = np.zeros(shape, dtype=bool)
    waived[at] = table[:, 4] == 1
    grade = np.full(shape, -1, dtype=np.int8)
    grade[at] = np.nan_to_num(table[:, 5], nan=-1).astype(np.int8)
    item_format = np.zeros(item_ids.size, dtype=np.int64)
    item_format[cols] = table[:, 3].astype(np.int64)
    choice = np.isin(np.array(FORMATS)[item_format], list(CHOICE_FORMATS))  # per item
    verdict = np.full(shape, np.nan)
    verdict[at] = table[:, 6]
    graded = np.where(
        grade == Grade.CORRECT, 1.0, np.where(grade == Grade.WRONG, 0.0, np.nan)
    )
    score = np.where(choice[None, :, None], graded, verdict)
    score[waived | ~present] = np.nan
    refused = np.zeros(shape, dtype=bool)
    refused[at] = table[:, 7] == 1
    return BinaryMatrix(
        runs=list(runs),
        item_ids=item_ids,
        item_format=item_format,
        present=present,
        waived=waived,
        score=score,
        grade=grade,
        refused=refused,
    )


# The run page ----------------------------------------------------------------------

CHOICE_ANSWERS_SHOWN = 200


@dataclass(frozen=True)
class ChoiceOutcomes:
    """A binary run's MC/TF answers by grade, and the first of them to show."""

    counts: list[tuple[str, int, int]]  # (label, grade code, answers)
    answers: list  # AnswerGrades with response and item, in item and trial order
    total: int
    provider_refused: int = 0  # answers the provider's filter declined (any format)

    @property
    def flagged(self) -> int:
        return sum(n for _, code, n in self.counts if code in FLAGGED)


def choice_outcomes(run: EvaluationRun) -> ChoiceOutcomes:
    graded = AnswerGrade.objects.filter(
        response__run=run, response__waived_at__isnull=True
    )
    found = dict(
        graded.order_by()
        .values("grade")
        .annotate(n=Count("pk"))
        .values_list("grade", "n")
    )
    # Correct first, then wrong, then the flagged kinds.
    codes = sorted(AnswerGrade.Grade.values, key=lambda code: (code != 1, code))
    labels = dict(AnswerGrade.Grade.choices)
    counts = [(labels[code], code, found.get(code, 0)) for code in codes]
    answers = list(
        graded.select_related("response__item").order_by(
            "response__item__external_id", "response__trial"
        )[:CHOICE_ANSWERS_SHOWN]
    )
    refused = Response.objects.filter(
        run=run, status=Response.Status.REFUSED, waived_at__isnull=True
    ).count()
    return ChoiceOutcomes(counts, answers, sum(found.values()), refused)
