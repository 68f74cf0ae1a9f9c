"""The leaderboard of a benchmark on the binary scale: accuracy over k trials.

judging.reporting.accuracy does the numbers on the graded answers
(judging.evaluation.grades): accuracy (mean over trials × 100) with a paired item
bootstrap CI, the trial spread, and the flagged answers counted by kind — never
folded into right or wrong. A second table gives accuracy per item format.
`building.build_report` calls `build_binary_report` for such a benchmark; the 0–3
tables are not built."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from judging.evaluation.extraction import Grade
from judging.evaluation.grades import FORMAT_NAMES, FORMATS, BinaryMatrix
from judging.reporting import accuracy, scoring
from judging.reporting.tables import Column, Table

BINARY_TABLE_ORDER = ("leaderboard", "formats")


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
