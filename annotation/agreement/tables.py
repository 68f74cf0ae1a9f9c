"""Judge-reliability reports as pure table builders (label consensus, Table 3, is in
`consensus`, on the same `Report`).

Arrays in, a `Report` of `judging.reporting.tables.Table`s out; no ORM (the loaders in
`annotation/agreement/loading.py` read the database). Every report's footnotes state the
statistic variants, what n counts and how missing values were treated. The output
formats are `judging.reporting.tables`' (one place for text, CSV and LaTeX); a
report only puts its tables in order and adds the footnotes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from django.utils.translation import gettext_noop

from annotation.agreement.footnotes import (
    JUDGES_NOTES,
    SV_NOTES,
    calibration_notes,
    cross_judge_notes,
    judge_pairs_notes,
    model_changed_warning,
    never_calibrated_warning,
    one_judge_note,
)
from benchmark.notes import Note
from judging.reporting import agreement as ag
from judging.reporting.agreement_intervals import paired_agreement, panel_agreement
from judging.reporting.tables import Column, Table, latex_escape, latex_file

SCORE_SCALE = [0, 1, 2, 3]
DEFAULT_RESAMPLES = 10_000
WEIGHT_FORMULAS = {"linear": "|i − j|", "quadratic": "(i − j)²"}
WEIGHT_NAMES = {
    "linear": gettext_noop("linear"),
    "quadratic": gettext_noop("quadratic"),
}


def table(slug: str, title: str, columns: list[Column], rows: list[dict]) -> Table:
    """A `judging.reporting.tables.Table` from rows given as dicts keyed by column."""
    return Table(
        slug, title, columns, [[row.get(c.key) for c in columns] for row in rows]
    )


def records(table: Table) -> list[dict]:
    """The rows of `table` as dicts keyed by column key."""
    keys = [c.key for c in table.columns]
    return [dict(zip(keys, row, strict=True)) for row in table.rows]


@dataclass
class Report:
    name: str
    title: str
    tables: list[Table]
    footnotes: list[str] = field(default_factory=list)
    # Cross-judge: every judge with scores, as (name, chosen, responses scored).
    judge_choices: list[tuple[str, bool, int]] = field(default_factory=list)
    # Calibration: what the report page must say before any table (stale judges).
    warnings: list[Note] = field(default_factory=list)

    def table(self, slug: str) -> Table:
        for candidate in self.tables:
            if candidate.slug == slug:
                return candidate
        raise KeyError(slug)

    def to_text(self) -> str:
        parts = [t.to_text() for t in self.tables]
        notes = [f"[{i}] {note}" for i, note in enumerate(self.footnotes, 1)]
        return "\n".join(parts) + "\n" + "\n".join(notes) + "\n"

    def to_csv(self, slug: str | None = None) -> str:
        """One table (the first unless `slug`) as CSV."""
        return (self.table(slug) if slug else self.tables[0]).to_csv()

    def to_latex(self) -> str:
        bodies = [t.latex_body() for t in self.tables]
        if self.footnotes:
            notes = "".join(
                # \par, not \\: "\\" followed by "[2]" reads as a length.
                f"[{i}] {latex_escape(note)}\\par\n"
                for i, note in enumerate(self.footnotes, 1)
            )
            bodies.append(
                "\\begin{flushleft}\\footnotesize\n" + notes + "\\end{flushleft}\n"
            )
        return latex_file(*bodies)

    def as_dict(self) -> dict:
        """The JSON download's data (also what the REST API answers)."""
        return {
            "report": self.name,
            "title": self.title,
            "tables": [t.as_dict() for t in self.tables],
            "footnotes": self.footnotes,
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=2)


# format name -> (render, content type, file extension)
FORMATS = {
    "text": (Report.to_text, "text/plain; charset=utf-8", "txt"),
    "csv": (Report.to_csv, "text/csv; charset=utf-8", "csv"),
    "json": (Report.to_json, "application/json", "json"),
    "latex": (Report.to_latex, "application/x-latex; charset=utf-8", "tex"),
}


@dataclass(frozen=True)
class Settings:
    headline: str = "quadratic"
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    confidence: float = 0.95
    # Cross-judge (Table 5): the judges a manager chose; empty = the default set
    # (`default_judge_set`).
    judges: tuple[str, ...] = ()

    def __post_init__(self):
        if self.headline not in WEIGHT_FORMULAS:
            raise ValueError(
                "headline weights must be 'linear' or 'quadratic', "
                f"got {self.headline!r}"
            )

    @property
    def ci_note(self) -> Note:
        return Note(
            gettext_noop(
                "%(confidence)s CIs: percentile bootstrap, %(resamples)s resamples of "
                "units with replacement (seed %(seed)s), the same resamples for every "
                "statistic in a row."
            ),
            confidence=f"{self.confidence:.0%}",
            resamples=f"{self.n_resamples:,}",
            seed=self.seed,
        )

    @property
    def kappa_note(self) -> Note:
        if self.headline == "linear":
            headline = gettext_noop(
                "κ linear / quadratic: Cohen's κ with disagreement weights |i − j| / "
                "(i − j)² on positions in the declared 0–3 scale (0, 1, 2, 3), so an "
                "unused score still counts. Headline (with CI): linear, the "
                "benchmark's setting (the IndustryBench paper's κw is linear)."
            )
        else:
            headline = gettext_noop(
                "κ linear / quadratic: Cohen's κ with disagreement weights |i − j| / "
                "(i − j)² on positions in the declared 0–3 scale (0, 1, 2, 3), so an "
                "unused score still counts. Headline (with CI): quadratic, the "
                "benchmark's setting (the IndustryBench paper's κw is linear)."
            )
        return Note(headline)

    def summary(self, ratings_or_a, b=None, **kwargs) -> dict:
        options = {
            "labels": SCORE_SCALE,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "confidence": self.confidence,
            **kwargs,
        }
        if b is None:
            return panel_agreement(ratings_or_a, **options)
        return paired_agreement(ratings_or_a, b, **options)


def _agreement_columns(settings: Settings, *, discrepancy: bool) -> list[Column]:
    weights = Note(WEIGHT_NAMES[settings.headline])
    columns = [
        Column("n", gettext_noop("n"), "int"),
        Column("exact", gettext_noop("Exact (%)"), "rate"),
        Column("within_k", gettext_noop("|Δ| ≤ 1 (%)"), "rate"),
    ]
    if discrepancy:
        columns.append(Column("discrepancy", gettext_noop("|Δ| ≥ 2 (%)"), "rate"))
    return columns + [
        Column("kappa_linear", gettext_noop("κ linear"), "num"),
        Column("kappa_quadratic", gettext_noop("κ quadratic"), "num"),
        Column(
            "kappa_ci_low",
            Note(gettext_noop("κ %(weights)s CI low"), weights=weights),
            "num",
        ),
        Column(
            "kappa_ci_high",
            Note(gettext_noop("κ %(weights)s CI high"), weights=weights),
            "num",
        ),
        Column("rho", gettext_noop("Spearman ρ"), "num"),
        Column("rho_ci_low", gettext_noop("ρ CI low"), "num"),
        Column("rho_ci_high", gettext_noop("ρ CI high"), "num"),
    ]


def _agreement_row(summary: dict, settings: Settings) -> dict:
    row = {key: summary[key] for key in summary if not key.endswith("_ci")}
    for name, source in (("kappa", f"kappa_{settings.headline}"), ("rho", "rho")):
        low, high = summary.get(f"{source}_ci", (None, None))
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = low, high
    return row


# ----------------------------------------------------------------- cross-judge (T5)

# Above this many judges the subsets are not enumerated (2^16 masks); every judge
# is used unless the manager chooses.
MAX_JUDGES_SEARCHED = 16


def default_judge_set(scored: np.ndarray) -> np.ndarray:
    """The judges whose shared responses hold the most judgments.

    ``scored`` is ``judges × responses``, True where a judge has a usable score.
    Table 5 needs every chosen judge on a response, so one judge that scored a few
    responses would empty every row if it were always included. Among sets of at
    least two judges, the one maximising judges × responses scored by all of them
    is chosen; ties go to the larger set, then to the earlier judges. Responses are
    grouped by which judges scored them, so the search costs 2^judges × patterns.
    """
    scored = np.asarray(scored, dtype=bool)
    n_judges = scored.shape[0]
    if n_judges <= 2 or n_judges > MAX_JUDGES_SEARCHED:
        return np.ones(n_judges, dtype=bool)
    bits = np.left_shift(1, np.arange(n_judges, dtype=np.int64))
    patterns, counts = np.unique(bits @ scored.astype(np.int64), return_counts=True)
    masks = np.arange(1, 1 << n_judges, dtype=np.int64)
    sizes = ((masks[:, None] & bits[None, :]) != 0).sum(axis=1)
    masks, sizes = masks[sizes >= 2], sizes[sizes >= 2]
    covers = (patterns[None, :] & masks[:, None]) == masks[:, None]
    shared = covers.astype(np.int64) @ counts
    # lexsort's last key is the primary one: judgments, then set size, then the
    # smallest mask (earlier judges) via its negation.
    best = np.lexsort((-masks, sizes, shared * sizes))[-1]
    return (masks[best] & bits) != 0


def cross_judge_report(
    models: list[str],
    panels: list[np.ndarray],
    judges: list[str],
    settings: Settings = Settings(),
    left_out: list[str] | None = None,
    chosen_by_manager: bool = False,
) -> Report:
    """Table 5: per tested model, agreement among the judges on its responses.

    ``panels[m]`` is ``judges × responses`` of 0–3 scores (NaN = no usable score),
    restricted to the chosen `judges`; `left_out` names the judges with scores that
    are not in the set.
    """
    columns = [
        Column("model", gettext_noop("Tested model")),
        Column("n", gettext_noop("n"), "int"),
        Column("full_agreement", gettext_noop("Full agreement (%)"), "rate"),
        Column("high_discrepancy", gettext_noop("Range ≥ 2 (%)"), "rate"),
        Column("exact", gettext_noop("Pairwise exact (%)"), "rate"),
        Column("within_k", gettext_noop("Pairwise |Δ| ≤ 1 (%)"), "rate"),
        *_agreement_columns(settings, discrepancy=False)[3:],
    ]
    n_judges = len(judges)
    rows = []
    for model, panel in zip(models, panels, strict=True):
        if n_judges < 2:
            break
        rows.append(
            {"model": model, **_agreement_row(settings.summary(panel), settings)}
        )
    if len(rows) > 1:
        rows.append(_average_row(rows, columns))
        pooled = np.hstack(panels)
        rows.append(
            {
                "model": Note(gettext_noop("All models (pooled)")),
                **_agreement_row(settings.summary(pooled), settings),
            }
        )
    left_out = left_out or []
    footnotes = [
        Note(
            JUDGES_NOTES[chosen_by_manager, bool(left_out)],
            count=n_judges,
            judges=", ".join(judges) if judges else Note(gettext_noop("none")),
            left_out=", ".join(left_out),
        ),
        *cross_judge_notes(settings, n_judges),
    ]
    models_table = table(
        "models", gettext_noop("Cross-judge consistency (Table 5)"), columns, rows
    )
    if n_judges < 2:
        # Only what is true of no table: the statistics' notes would describe
        # nothing. The table's own note says why it is empty (on the page, under
        # it).
        empty_note = one_judge_note(judges + left_out)
        models_table.notes.append(empty_note)
        footnotes = [empty_note, footnotes[0]]
    return Report(
        name="cross-judge",
        title=gettext_noop("Cross-judge consistency per tested model"),
        tables=[models_table],
        footnotes=footnotes,
    )


def _average_row(rows: list[dict], columns: list[Column]) -> dict:
    """The mean of each statistic over the rows that have it; intervals are not
    averaged (a mean of CI bounds is no interval)."""
    average: dict = {"model": Note(gettext_noop("Average"))}
    for column in columns:
        if column.kind == "text" or "_ci_" in column.key:
            continue
        values = [row.get(column.key) for row in rows]
        values = [v for v in values if v is not None and not np.isnan(v)]
        if column.key == "n":
            average["n"] = sum(values)
        else:
            average[column.key] = float(np.mean(values)) if values else None
    return average


def judge_pairs_report(
    judges: list[str],
    scores: np.ndarray,
    settings: Settings = Settings(),
    models: list[str] | None = None,
    model_of: np.ndarray | None = None,
) -> Report:
    """Table 15: each judge pair per tested model, as the paper gives it, and over
    all responses pooled. ``scores`` is ``judges × responses``; ``model_of[r]`` the
    index in `models` of response r's tested model."""
    models = models or []
    pair_indices = list(combinations(range(len(judges)), 2))
    columns = [
        Column("judge_a", gettext_noop("Judge A")),
        Column("judge_b", gettext_noop("Judge B")),
        *_agreement_columns(settings, discrepancy=True),
    ]

    def pair_rows(panel: np.ndarray) -> list[dict]:
        return [
            {
                "judge_a": judges[i],
                "judge_b": judges[j],
                **_agreement_row(settings.summary(panel[i], panel[j]), settings),
            }
            for i, j in pair_indices
        ]

    per_model = [
        {"model": model, **row}
        for m, model in enumerate(models)
        for row in pair_rows(scores[:, model_of == m])
    ]
    empty_note = one_judge_note(judges) if len(judges) < 2 else ""
    footnotes = judge_pairs_notes(settings)
    tables = [
        table(
            "per_model",
            gettext_noop("Pairwise judge agreement per tested model (Table 15)"),
            [Column("model", gettext_noop("Tested model")), *columns],
            per_model,
        ),
        table(
            "pairs",
            gettext_noop("Pairwise judge agreement, all tested models pooled"),
            columns,
            pair_rows(scores),
        ),
    ]
    if empty_note:
        for each in tables:
            each.notes.append(empty_note)
        footnotes = [empty_note]
    return Report(
        name="judge-pairs",
        title=gettext_noop("Pairwise judge agreement"),
        tables=tables,
        footnotes=footnotes,
    )


# ------------------------------------------------------------ calibration (T6, T16)

MEDIAN = Note(gettext_noop("Median of judges"))


def calibration_report(
    judges: list[str],
    judge_scores: np.ndarray,
    humans: list[str],
    human_scores: np.ndarray,
    settings: Settings = Settings(),
    calibrated: tuple[JudgeUse, ...] = (),
    in_use: tuple[JudgeUse, ...] = (),
) -> Report:
    """Table 6 and Table 16 on the calibration sample, and which judges the
    evaluation runs use now against those calibrated (`judge_currency`).

    ``judge_scores`` is ``judges × units`` and ``human_scores`` ``humans × units``
    over the same units: the responses at least one human graded.
    """
    median = (
        ag.median_ensemble(judge_scores, even="lower")
        if len(judges)
        else np.full(human_scores.shape[1], np.nan)
    )
    with_judges = []
    for h, human in enumerate(humans):
        for j, judge in enumerate(judges):
            with_judges.append((judge, human, judge_scores[j], human_scores[h]))
        if len(judges) > 1:
            with_judges.append((MEDIAN, human, median, human_scores[h]))
    comparisons = list(with_judges)
    for h1, h2 in combinations(range(len(humans)), 2):
        both = ~np.isnan(human_scores[h1]) & ~np.isnan(human_scores[h2])
        if both.sum() > 1:
            comparisons.append(
                (humans[h1], humans[h2], human_scores[h1], human_scores[h2])
            )
    rows = [
        {
            "rater": rater,
            "human": human,
            **_agreement_row(settings.summary(a, b), settings),
        }
        for rater, human, a, b in comparisons
    ]
    agreement = table(
        "agreement",
        gettext_noop("Judges and humans on the calibration sample (Table 6)"),
        [
            Column("rater", gettext_noop("Rater")),
            Column("human", gettext_noop("vs human")),
            *_agreement_columns(settings, discrepancy=True),
        ],
        rows,
    )

    confusion = score_confusion_table(with_judges)
    raters = [*judges, *([MEDIAN] if len(judges) > 1 else []), *humans]
    matrix = (
        np.vstack(
            [
                judge_scores,
                *([median[None, :]] if len(judges) > 1 else []),
                human_scores,
            ]
        )
        if raters
        else np.zeros((0, 0))
    )
    distributions = score_distribution_table(raters, matrix)
    n_units = human_scores.shape[1]
    footnotes = calibration_notes(settings, n_units, humans, len(judges))
    currency, warnings = judge_currency(calibrated, in_use)
    return Report(
        name="calibration",
        title=gettext_noop("Human calibration of the judges"),
        tables=[agreement, confusion, distributions, currency],
        footnotes=footnotes,
        warnings=warnings,
    )


@dataclass(frozen=True)
class JudgeUse:
    """A judge (name, prompt version) on an endpoint model ("" when unknown, e.g.
    imported scores), and how many judgments (calibrated) or runs (in use)."""

    name: str
    prompt_version: str
    model: str
    count: int

    @property
    def label(self) -> str:
        """As the report tables name judges: "name · prompt version"."""
        return (
            f"{self.name} · {self.prompt_version}" if self.prompt_version else self.name
        )


def judge_currency(
    calibrated: tuple[JudgeUse, ...], in_use: tuple[JudgeUse, ...]
) -> tuple[Table, list[Note]]:
    """The judges calibrated on the sample against those the runs use now: a table
    with one row per judge, and a warning per stale judge in use (one no human was
    compared with, or one whose endpoint now sends a model the calibrated
    judgments did not come from)."""
    judges: dict[tuple[str, str], dict] = {}
    for use, side in [(u, "calibrated") for u in calibrated] + [
        (u, "in_use") for u in in_use
    ]:
        entry = judges.setdefault(
            (use.name, use.prompt_version),
            {"label": use.label, "calibrated": {}, "in_use": {}},
        )
        entry[side][use.model] = entry[side].get(use.model, 0) + use.count
    calibrated_labels = sorted(
        entry["label"] for entry in judges.values() if entry["calibrated"]
    )
    rows, warnings = [], []
    for (_, version), entry in sorted(judges.items()):
        sample, runs = entry["calibrated"], entry["in_use"]
        known = {model for model in sample if model}
        changed = sorted(
            model for model in runs if model and known and model not in known
        )
        if not runs:
            status = Note(gettext_noop("calibrated; no run uses it now"))
        elif not sample:
            status = Note(gettext_noop("STALE: in use, never calibrated"))
            others = [label for label in calibrated_labels if label != entry["label"]]
            warnings.append(
                never_calibrated_warning(sum(runs.values()), entry["label"], others)
            )
        elif changed:
            status = Note(gettext_noop("STALE: endpoint model changed"))
            warnings.append(
                model_changed_warning(entry["label"], changed, sorted(known))
            )
        else:
            status = Note(gettext_noop("calibrated, in use"))
        rows.append(
            {
                "judge": entry["label"],
                "prompt_version": version or "—",
                "sample_models": _models(sample),
                "sample_n": sum(sample.values()),
                "runs": sum(runs.values()),
                "run_models": _models(runs),
                "status": status,
            }
        )
    currency = table(
        "judges",
        gettext_noop("Judges calibrated and judges in use"),
        [
            Column("judge", gettext_noop("Judge")),
            Column("prompt_version", gettext_noop("Prompt version")),
            Column("sample_models", gettext_noop("Endpoint model (calibration)")),
            Column("sample_n", gettext_noop("Responses calibrated"), "int"),
            Column("runs", gettext_noop("Runs using it now"), "int"),
            Column("run_models", gettext_noop("Endpoint model (runs now)")),
            Column("status", gettext_noop("Status")),
        ],
        rows,
    )
    return currency, warnings


def _models(counts: dict[str, int]) -> str:
    """The endpoint models, a judgment with none recorded (imported) first."""
    if not counts:
        return "—"
    models = ", ".join(sorted(model for model in counts if model))
    if "" not in counts:
        return models
    if not models:
        return Note(gettext_noop("unknown (not recorded)"))
    return Note(gettext_noop("unknown (not recorded), %(models)s"), models=models)


def score_confusion_table(comparisons) -> Table:
    """The 4×4 human × judge confusion matrix behind Table 6, for each (judge,
    human, judge scores, human scores): rows are the human's scores, columns the
    judge's, cells count the responses both scored."""
    columns = [
        Column("rater", gettext_noop("Judge")),
        Column("human", gettext_noop("Human")),
        Column("human_score", gettext_noop("Human score"), "int"),
        *(
            Column(f"judge_{s}", Note(gettext_noop("Judge %(score)s"), score=s), "int")
            for s in SCORE_SCALE
        ),
        Column("total", gettext_noop("Total"), "int"),
    ]
    rows = []
    for rater, human, judge_values, human_values in comparisons:
        counts, _ = ag.confusion_matrix(human_values, judge_values, labels=SCORE_SCALE)
        for s, line in zip(SCORE_SCALE, counts, strict=True):
            rows.append(
                {
                    "rater": rater,
                    "human": human,
                    "human_score": s,
                    **{
                        f"judge_{t}": int(n)
                        for t, n in zip(SCORE_SCALE, line, strict=True)
                    },
                    "total": int(line.sum()),
                }
            )
    return table(
        "confusion",
        gettext_noop("Human × judge score confusion matrix (Table 6)"),
        columns,
        rows,
    )


def score_distribution_table(raters: list[str], matrix: np.ndarray) -> Table:
    """Table 16: one row per rater (``matrix`` is ``raters × units``, NaN = not
    scored): n, the count and share of each score, and the mean score."""
    columns = [
        Column("rater", gettext_noop("Rater")),
        Column("n", gettext_noop("n"), "int"),
        *(
            Column(f"count_{s}", Note(gettext_noop("%(score)s (n)"), score=s), "int")
            for s in SCORE_SCALE
        ),
        *(
            Column(f"share_{s}", Note(gettext_noop("%(score)s (%%)"), score=s), "rate")
            for s in SCORE_SCALE
        ),
        Column("mean", gettext_noop("Mean score"), "num"),
    ]
    rows = []
    for rater, values in zip(raters, matrix, strict=True):
        scored = values[~np.isnan(values)]
        row = {"rater": rater, "n": scored.size}
        for score in SCORE_SCALE:
            count = int(np.sum(scored == score))
            row[f"count_{score}"] = count
            row[f"share_{score}"] = count / scored.size if scored.size else None
        row["mean"] = float(scored.mean()) if scored.size else None
        rows.append(row)
    return table(
        "distributions",
        gettext_noop("Score distributions on the calibration sample (Table 16)"),
        columns,
        rows,
    )


# ------------------------------------------------------------------ SV judge (T4)


def sv_validation_report(
    judges: list[str],
    judge_flags: np.ndarray,
    humans: list[str],
    human_flags: np.ndarray,
    units: list[dict],
    judge_reasons: list[list[str]],
) -> Report:
    """Table 4: the safety-violation judge against human safe/violating labels.

    Flags are 1 (violating), 0 (safe) or NaN (missing), ``judges × units`` and
    ``humans × units``; ``units[u]`` describes unit u (``item``, ``model``) for the
    disagreement list, ``judge_reasons[j][u]`` the judge's reason.
    """
    rows, disagreements = [], []
    for h, human in enumerate(humans):
        for j, judge in enumerate(judges):
            truth, pred = human_flags[h], judge_flags[j]
            metrics = ag.binary_metrics(truth, pred, positive=1.0)
            rows.append({"judge": judge, "human": human, **metrics})
            differ = np.flatnonzero(
                ~np.isnan(truth) & ~np.isnan(pred) & (truth != pred)
            )
            for u in differ:
                disagreements.append(
                    {
                        **units[u],
                        "judge": judge,
                        "human": human,
                        "human_label": _flag_name(truth[u]),
                        "judge_label": _flag_name(pred[u]),
                        "judge_reason": judge_reasons[j][u],
                    }
                )
    confusion = table(
        "confusion",
        gettext_noop("SV judge against human labels (Table 4)"),
        [
            Column("judge", gettext_noop("SV judge")),
            Column("human", gettext_noop("Human")),
            Column("n", gettext_noop("n"), "int"),
            Column("tp", gettext_noop("TP"), "int"),
            Column("fp", gettext_noop("FP"), "int"),
            Column("fn", gettext_noop("FN"), "int"),
            Column("tn", gettext_noop("TN"), "int"),
            Column("precision", gettext_noop("Precision"), "num"),
            Column("recall", gettext_noop("Recall"), "num"),
            Column("f1", gettext_noop("F1"), "num"),
            Column("specificity", gettext_noop("Specificity"), "num"),
        ],
        rows,
    )
    listing = table(
        "disagreements",
        gettext_noop("Responses where the SV judge and the human disagree"),
        [
            Column("item", gettext_noop("Item")),
            Column("model", gettext_noop("Tested model")),
            Column("judge", gettext_noop("SV judge")),
            Column("judge_label", gettext_noop("Judge says")),
            Column("human", gettext_noop("Human")),
            Column("human_label", gettext_noop("Human says")),
            Column("judge_reason", gettext_noop("Judge's reason")),
        ],
        disagreements,
    )
    return Report(
        name="sv-validation",
        title=gettext_noop("Safety-violation judge validation"),
        tables=[confusion, listing],
        footnotes=list(SV_NOTES),
    )


def _flag_name(value: float) -> Note:
    return Note(gettext_noop("violating") if value == 1 else gettext_noop("safe"))
