"""The leaderboard of a benchmark on the binary scale: accuracy over k trials.

Reads each run's graded answers in one query (runs × items × trials: the MC/TF
grade written with the answer, the key-point judge's 0/1), then
judging.evaluation.accuracy does the numbers: accuracy (mean over trials × 100)
with a paired item bootstrap CI, the trial spread, and the flagged answers counted
by kind — never folded into right or wrong. A second table gives accuracy per item
format. `build_report` (judging.evaluation.reports) calls `build_binary_report` for
such a benchmark; the 0–3 tables are not built.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

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
from judging.evaluation import accuracy, scoring
from judging.evaluation.choices import CHOICE_FORMATS
from judging.evaluation.extraction import Grade
from judging.evaluation.models import AnswerGrade, EvaluationRun, Judgment, Response
from judging.reporting.tables import Column, Table

FORMATS = [value for value, _ in Item.Format.choices]
FORMAT_NAMES = dict(Item.Format.choices)
BINARY_TABLE_ORDER = ("leaderboard", "formats")
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

    def restricted(self, item_ids) -> BinaryMatrix:
        keep = np.isin(self.item_ids, np.asarray(list(item_ids), dtype=np.int64))
        return replace(
            self,
            item_ids=self.item_ids[keep],
            item_format=self.item_format[keep],
            **{
                name: getattr(self, name)[:, keep]
                for name in ("present", "waived", "score", "grade")
            },
        )

    def flagged(self) -> np.ndarray:
        return np.isin(self.grade, FLAGGED) & ~self.waived

    def pending(self) -> np.ndarray:
        """Answers asked and not waived with neither a score nor a flag yet."""
        return self.present & ~self.waived & np.isnan(self.score) & ~self.flagged()


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
        )
    )
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return np.array(rows, dtype=float).reshape(-1, 7)


def load_binary(runs: list[EvaluationRun]) -> BinaryMatrix:
    """One query: every response of `runs` with its grade or key-point verdict."""
    table = _rows(runs) if runs else np.zeros((0, 7))
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
    return BinaryMatrix(
        runs=list(runs),
        item_ids=item_ids,
        item_format=item_format,
        present=present,
        waived=waived,
        score=score,
        grade=grade,
    )


@dataclass(frozen=True)
class BinaryRunMetrics:
    """One run's figures on the binary leaderboard (percentages)."""

    accuracy: float
    lowest_trial: float
    highest_trial: float
    trial_sd: float
    trials: int
    items: int
    correct: int
    wrong: int
    multiple: int
    refusal: int
    no_answer: int
    pending: int
    waived: int

    @property
    def flagged(self) -> int:
        return self.multiple + self.refusal + self.no_answer

    def as_dict(self) -> dict:
        return {**asdict(self), "flagged": self.flagged}


def run_metrics(matrix: BinaryMatrix, row: int) -> BinaryRunMetrics:
    summary = accuracy.trial_accuracy(matrix.score[row])
    grade = np.where(matrix.waived[row], -1, matrix.grade[row])
    score = matrix.score[row]
    return BinaryRunMetrics(
        accuracy=summary.accuracy,
        lowest_trial=summary.low,
        highest_trial=summary.high,
        trial_sd=summary.sd,
        trials=matrix.runs[row].trials,
        items=summary.items,
        correct=int(np.sum(score == 1)),
        wrong=int(np.sum(score == 0)),
        multiple=int(np.sum(grade == Grade.MULTIPLE)),
        refusal=int(np.sum(grade == Grade.REFUSAL)),
        no_answer=int(np.sum(grade == Grade.NONE)),
        pending=int(matrix.pending()[row].sum()),
        waived=int((matrix.waived[row] & matrix.present[row]).sum()),
    )


def build_binary_report(
    report, matrix: BinaryMatrix, rows: list[int], labels: list[str], subset_note=""
) -> None:
    """Fill `report` (a reports.Report of the language's runs, `rows` of the
    matrix, `labels` their names) with the accuracy leaderboard and the
    per-format table; `subset_note` says which saved subset they cover."""
    scores = matrix.score[rows]
    report.metrics = [run_metrics(matrix, row) for row in rows]
    interval = accuracy.bootstrap_accuracy(
        scores, resamples=report.resamples, seed=report.seed
    )
    scored_items = ~np.isnan(scores).all(axis=2)
    report.bootstrap_items = int(scored_items.all(axis=0).sum()) if rows else 0
    report.bootstrap_excluded = int(scored_items.shape[1] - report.bootstrap_items)
    metrics = report.metrics
    ranks = scoring.ranks_descending([m.accuracy for m in metrics])
    order = sorted(range(len(rows)), key=lambda i: (ranks[i], labels[i]))
    columns = [
        Column("rank", "Rank", "int"),
        Column("model", "Model"),
        Column("category", "Category"),
        Column("accuracy", "Accuracy (%)", "num", 1),
        Column("ci", "±95% CI", "num", 1),
        Column("trials", "Trials", "int"),
        Column("lowest", "Min trial", "num", 1),
        Column("highest", "Max trial", "num", 1),
        Column("trial_sd", "Trial SD", "num", 1),
        Column("items", "Items", "int"),
        Column("correct", "Correct", "int"),
        Column("wrong", "Wrong", "int"),
        Column("flagged", "Flagged", "int"),
        Column("refusal", "Refusals", "int"),
        Column("pending", "Pending", "int"),
    ]
    table_rows = [
        [
            int(ranks[i]),
            labels[i],
            report.runs[i].model_category or "uncategorised",
            metrics[i].accuracy,
            interval.half_widths[i],
            metrics[i].trials,
            metrics[i].lowest_trial,
            metrics[i].highest_trial,
            metrics[i].trial_sd,
            metrics[i].items,
            metrics[i].correct,
            metrics[i].wrong,
            metrics[i].flagged,
            metrics[i].refusal,
            metrics[i].pending,
        ]
        for i in order
    ]
    notes = [
        "Accuracy: the share of scored answers that are correct in each trial, "
        "averaged over the run's trials, in percent. Min / max trial and the "
        "trials' standard deviation show how much the trials differ.",
        "Multiple-choice and true/false answers are read by rules; an answer naming "
        "several options, a refusal or a reply with no answer found is flagged: "
        "counted (Flagged, of which Refusals; each run's page splits them by "
        "kind), neither right nor wrong, and left out of the accuracy. "
        "Short-answer and open items are graded 0/1 by the key-point judge.",
        f"±95% CI: percentile bootstrap of the accuracy over items (B = "
        f"{report.resamples:,}, seed {report.seed}; every trial and every run "
        "resampled with the same items).",
    ]
    if subset_note:
        notes.insert(0, subset_note)
    pending = sum(m.pending for m in metrics)
    if pending:
        notes.append(
            f"{pending} answers are pending (no grade or key-point verdict yet); "
            "each run's accuracy covers its scored answers only."
        )
    report.tables["leaderboard"] = Table(
        slug="leaderboard",
        title=f"Leaderboard ({report.language}): accuracy over trials",
        columns=columns,
        rows=table_rows,
        notes=notes,
        row_keys=[report.runs[i].pk for i in order],
        label_columns=2,
    )
    report.tables["formats"] = _formats_table(report, matrix, rows, labels, order)


def _formats_table(report, matrix, rows, labels, order) -> Table:
    present = [f for f in range(len(FORMATS)) if np.any(matrix.item_format == f)]
    columns = [Column("model", "Model")]
    for f in present:
        columns.append(Column(FORMATS[f], f"{FORMAT_NAMES[FORMATS[f]]} (%)", "num", 1))
    table_rows = []
    for i in order:
        cells = [labels[i]]
        for f in present:
            scores = matrix.score[rows[i]][matrix.item_format == f]
            cells.append(accuracy.trial_accuracy(scores).accuracy)
        table_rows.append(cells)
    sizes = ", ".join(
        f"{FORMAT_NAMES[FORMATS[f]]} {int(np.sum(matrix.item_format == f))}"
        for f in present
    )
    return Table(
        slug="formats",
        title="Accuracy by item format",
        columns=columns,
        rows=table_rows,
        notes=[
            f"Accuracy (mean over trials, %) on each format's items; items: {sizes}."
        ],
        row_keys=[report.runs[i].pk for i in order],
    )


# The run page ----------------------------------------------------------------------

CHOICE_ANSWERS_SHOWN = 200


@dataclass(frozen=True)
class ChoiceOutcomes:
    """A binary run's MC/TF answers by grade, and the first of them to show."""

    counts: list[tuple[str, int, int]]  # (label, grade code, answers)
    answers: list  # AnswerGrades with response and item, in item and trial order
    total: int

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
    return ChoiceOutcomes(counts, answers, sum(found.values()))
