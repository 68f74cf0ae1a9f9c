"""The leaderboard of a benchmark on the binary scale: accuracy over k trials.

judging.reporting.accuracy does the numbers on the graded answers
(judging.evaluation.grades): accuracy as study 002 §2.3 defines it — correct over
all tested questions, flagged answers and provider refusals counted as not correct
and shown beside it — with a paired item bootstrap CI and the trial spread; the
older accuracy of scored answers (flagged ones left out) only as a named secondary
column. Further tables: accuracy per item format, and per field (the item's
domain) with the best and worst model per field (LPFQA Figures 3–4).
`building.build_report` calls `build_binary_report` for such a benchmark; the 0–3
tables are not built."""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np
from django.utils.translation import gettext_noop

from benchmark.notes import Note
from judging.evaluation.extraction import Grade
from judging.evaluation.grades import FORMAT_NAMES, FORMATS, BinaryMatrix
from judging.leaderboard.diagnostics import MIN_SUPPORT
from judging.reporting import accuracy, scoring
from judging.reporting.definitions import footnote
from judging.reporting.tables import Column, Table

BINARY_TABLE_ORDER = ("leaderboard", "formats", "fields", "field_extremes")
NO_FIELD = "(no field)"
# The column the old definition survives in, named for what it is.
SCORED_ACCURACY_LABEL = "Scored-answer accuracy (%)"


@dataclass(frozen=True)
class BinaryRunMetrics:
    """One run's figures on the binary leaderboard (percentages)."""

    accuracy: float  # correct / all tested (study 002 §2.3)
    scored_accuracy: float  # correct / answers with a verdict (flagged left out)
    lowest_trial: float
    highest_trial: float
    trial_sd: float
    trials: int
    items: int
    tested: int  # tested answers over all trials: the accuracy's denominator
    correct: int
    wrong: int
    multiple: int
    refusal: int
    no_answer: int
    pending: int
    waived: int
    provider_refused: int

    @property
    def flagged(self) -> int:
        return self.multiple + self.refusal + self.no_answer

    def as_dict(self) -> dict:
        return {**asdict(self), "flagged": self.flagged}


def run_metrics(matrix: BinaryMatrix, row: int) -> BinaryRunMetrics:
    tested = matrix.tested_score()[row]
    summary = accuracy.trial_accuracy(tested)
    grade = np.where(matrix.waived[row], -1, matrix.grade[row])
    score = matrix.score[row]
    return BinaryRunMetrics(
        accuracy=summary.accuracy,
        scored_accuracy=accuracy.trial_accuracy(score).accuracy,
        lowest_trial=summary.low,
        highest_trial=summary.high,
        trial_sd=summary.sd,
        trials=matrix.runs[row].trials,
        items=summary.items,
        tested=summary.scored,
        correct=int(np.sum(score == 1)),
        wrong=int(np.sum(score == 0)),
        multiple=int(np.sum(grade == Grade.MULTIPLE)),
        refusal=int(np.sum(grade == Grade.REFUSAL)),
        no_answer=int(np.sum(grade == Grade.NONE)),
        pending=int(matrix.pending()[row].sum()),
        waived=int((matrix.waived[row] & matrix.present[row]).sum()),
        provider_refused=int(matrix.provider_refused()[row].sum()),
    )


def build_binary_report(
    report,
    matrix: BinaryMatrix,
    rows: list[int],
    labels: list[str],
    subset_note="",
    fields: np.ndarray | None = None,
) -> None:
    """Fill `report` (a reports.Report of the language's runs, `rows` of the
    matrix, `labels` their names) with the accuracy leaderboard and the
    per-format and per-field tables; `subset_note` says which saved subset they
    cover, `fields` is each matrix item's field (its domain; "" for none)."""
    scores = matrix.tested_score()[rows]
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
        Column("rank", gettext_noop("Rank"), "int"),
        Column("model", gettext_noop("Model")),
        Column("category", gettext_noop("Category")),
        Column("accuracy", gettext_noop("Accuracy (%)"), "num", 1),
        Column("ci", gettext_noop("±95% CI"), "num", 1),
        Column("trials", gettext_noop("Trials"), "int"),
        Column("lowest", gettext_noop("Min trial"), "num", 1),
        Column("highest", gettext_noop("Max trial"), "num", 1),
        Column("trial_sd", gettext_noop("Trial SD"), "num", 1),
        Column("items", gettext_noop("Items"), "int"),
        Column("tested", gettext_noop("Tested answers"), "int"),
        Column("correct", gettext_noop("Correct"), "int"),
        Column("wrong", gettext_noop("Wrong"), "int"),
        Column("flagged", gettext_noop("Flagged"), "int"),
        Column("refusal", gettext_noop("Refusals"), "int"),
        Column("provider_refused", gettext_noop("Provider refusals"), "int"),
        Column("pending", gettext_noop("Pending"), "int"),
        Column("scored_accuracy", SCORED_ACCURACY_LABEL, "num", 1),
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
            metrics[i].tested,
            metrics[i].correct,
            metrics[i].wrong,
            metrics[i].flagged,
            metrics[i].refusal,
            metrics[i].provider_refused,
            metrics[i].pending,
            metrics[i].scored_accuracy,
        ]
        for i in order
    ]
    notes = [
        footnote("accuracy"),
        Note(
            gettext_noop(
                "Min / max trial and the trials' standard deviation show how much the "
                "trials differ."
            )
        ),
        Note(
            gettext_noop(
                "Multiple-choice and true/false answers are read by rules; an answer "
                "naming several options, a refusal or a reply with no answer found is "
                "flagged (Flagged, of which Refusals; each run's page splits them by "
                "kind) and is not correct. Short-answer and open items are graded 0/1 "
                "by the key-point judge."
            )
        ),
        footnote("provider-refusal"),
        Note(
            gettext_noop(
                "%(SCORED_ACCURACY_LABEL)s: Assay's earlier figure, correct over the "
                "answers with a verdict (flagged answers and provider refusals left "
                "out); not a published definition, shown for comparison only."
            ),
            SCORED_ACCURACY_LABEL=SCORED_ACCURACY_LABEL,
        ),
        Note(
            gettext_noop(
                "±95%% CI: percentile bootstrap of the accuracy over items (B = "
                "%(resamples)s, seed %(seed)s; every trial and every run resampled "
                "with the same items)."
            ),
            resamples=format(report.resamples, ","),
            seed=report.seed,
        ),
    ]
    if subset_note:
        notes.insert(0, subset_note)
    pending = sum(m.pending for m in metrics)
    if pending:
        notes.append(
            Note(
                gettext_noop(
                    "%(pending)s answers are pending (no grade or key-point verdict "
                    "yet); they are not yet tested and each run's accuracy leaves "
                    "them out."
                ),
                pending=pending,
            )
        )
    report.tables["leaderboard"] = Table(
        slug="leaderboard",
        title=Note(
            gettext_noop("Leaderboard (%(language)s): accuracy over trials"),
            language=report.language,
        ),
        columns=columns,
        rows=table_rows,
        notes=notes,
        row_keys=[report.runs[i].pk for i in order],
        label_columns=2,
    )
    report.tables["formats"] = _formats_table(report, matrix, rows, labels, order)
    field_names = fields if fields is not None else np.full(len(matrix.item_ids), "")
    report.tables["fields"], report.tables["field_extremes"] = _field_tables(
        report, matrix, rows, labels, order, field_names
    )


def _formats_table(report, matrix, rows, labels, order) -> Table:
    present = [f for f in range(len(FORMATS)) if np.any(matrix.item_format == f)]
    tested = matrix.tested_score()
    columns = [Column("model", gettext_noop("Model"))]
    for f in present:
        label = Note(gettext_noop("%(format)s (%%)"), format=FORMAT_NAMES[FORMATS[f]])
        columns.append(Column(FORMATS[f], label, "num", 1))
    table_rows = []
    for i in order:
        cells = [labels[i]]
        for f in present:
            scores = tested[rows[i]][matrix.item_format == f]
            cells.append(accuracy.trial_accuracy(scores).accuracy)
        table_rows.append(cells)
    sizes = [
        Note(
            gettext_noop("%(format)s: %(count)s"),
            format=FORMAT_NAMES[FORMATS[f]],
            count=int(np.sum(matrix.item_format == f)),
        )
        for f in present
    ]
    return Table(
        slug="formats",
        title=gettext_noop("Accuracy by item format"),
        columns=columns,
        rows=table_rows,
        notes=[
            Note(
                gettext_noop(
                    "Accuracy (mean over trials, %%) on each format's items; items "
                    "per format: %(sizes)s."
                ),
                sizes=sizes,
            ),
            footnote("accuracy"),
        ],
        row_keys=[report.runs[i].pk for i in order],
    )


def field_accuracy(tested: np.ndarray, field_of: np.ndarray, n_fields: int):
    """(runs × fields) accuracy as a share (0–1) and (runs × fields) tested items:
    each run's mean over trials of correct / tested on each field's items. Pure:
    `tested` is runs × items × trials (1, 0, NaN), `field_of` each item's field."""
    n_runs = tested.shape[0]
    share = np.full((n_runs, n_fields), np.nan)
    support = np.zeros((n_runs, n_fields), dtype=np.int64)
    for f in range(n_fields):
        on_field = tested[:, field_of == f]
        support[:, f] = (~np.isnan(on_field)).any(axis=2).sum(axis=1)
        for r in range(n_runs):
            share[r, f] = accuracy.trial_accuracy(on_field[r]).accuracy / 100
    return share, support


def _field_tables(report, matrix, rows, labels, order, fields) -> tuple[Table, Table]:
    names = sorted({name or NO_FIELD for name in fields})
    field_of = np.array([names.index(name or NO_FIELD) for name in fields])
    share, support = field_accuracy(matrix.tested_score()[rows], field_of, len(names))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(share, axis=0) if len(rows) else np.full(len(names), np.nan)
    items = [int(np.sum(field_of == f)) for f in range(len(names))]
    fields_table = Table(
        slug="fields",
        title=gettext_noop("Accuracy by field (LPFQA Figures 3–4a)"),
        columns=[
            Column("model", gettext_noop("Model")),
            *(Column(name, name, "rate") for name in names),
        ],
        rows=[
            *([labels[i], *(float(v) for v in share[i])] for i in order),
            ["Mean over models", *(float(v) for v in mean)],
        ],
        notes=[
            footnote("field-accuracy"),
            footnote("accuracy"),
            Note(
                gettext_noop(
                    "Items per field: %(fields)s. n = the items the model was tested "
                    "on in the field."
                ),
                fields=", ".join(f"{n} {c}" for n, c in zip(names, items, strict=True)),
            ),
        ],
        support=[*(support[i].tolist() for i in order), items],
        min_support=MIN_SUPPORT,
        row_keys=[None] * (len(order) + 1),
        column_keys=names,
    )
    extremes = []
    for f, name in enumerate(names):
        column = share[:, f]
        if np.isnan(column).all():
            extremes.append([name, items[f], "–", None, "–", None])
            continue
        best = _extreme(column, labels, np.nanmax)
        worst = _extreme(column, labels, np.nanmin)
        extremes.append(
            [
                name,
                items[f],
                best,
                float(np.nanmax(column)),
                worst,
                float(np.nanmin(column)),
            ]
        )
    extremes_table = Table(
        slug="field_extremes",
        title=gettext_noop("Best and worst model per field (LPFQA Figures 4b–c)"),
        columns=[
            Column("field", gettext_noop("Professional field")),
            Column("items", gettext_noop("Items"), "int"),
            Column("best", gettext_noop("Best model")),
            Column("best_accuracy", gettext_noop("Best"), "rate"),
            Column("worst", gettext_noop("Worst model")),
            Column("worst_accuracy", gettext_noop("Worst"), "rate"),
        ],
        rows=extremes,
        notes=[
            footnote("field-accuracy"),
            Note(gettext_noop("Ties name every model that shares it.")),
        ],
    )
    return fields_table, extremes_table


def _extreme(column: np.ndarray, labels, reduce) -> str:
    value = reduce(column)
    return ", ".join(labels[i] for i in np.flatnonzero(column == value).tolist())
