"""Read evaluation results into numpy and assemble the diagnostic tables.

Scores come out of the database with two `values_list` queries (responses, and the
judgments each run's metrics use); everything after that is judging.scoring.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db.models import BooleanField, ExpressionWrapper, F, Q

from benchmark.models import FinalLabel, Item, Label

from . import scoring
from .models import EvaluationRun, Judgment, Response
from .tables import Column, Table

MIN_SUPPORT = 30
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0

STATUS_CODES = {
    Response.Status.PENDING: 0,
    Response.Status.ANSWERED: 1,
    Response.Status.EMPTY: 2,
    Response.Status.INVALID: 3,
    Response.Status.FAILED: 4,
}


@dataclass
class ScoreMatrix:
    """runs × items arrays. Items are the union of the runs' items, by id."""

    runs: list[EvaluationRun]
    item_ids: np.ndarray
    present: np.ndarray  # the run has a response for the item
    raw: np.ndarray  # NaN: no usable rubric verdict yet
    sv: np.ndarray  # 1 flagged, 0 not, NaN: no SV verdict yet
    empty: np.ndarray
    invalid: np.ndarray
    waived: np.ndarray

    def metrics(self, row: int) -> scoring.RunMetrics:
        keep = self.present[row]
        return scoring.run_metrics(
            self.raw[row, keep],
            self.sv[row, keep],
            empty=self.empty[row, keep],
            invalid=self.invalid[row, keep],
            waived=self.waived[row, keep],
        )

    def pending(self) -> np.ndarray:
        """Items present, not waived, and missing a verdict their final score needs."""
        unanswered = self.empty | self.invalid
        missing = np.isnan(self.raw) | np.isnan(self.sv)
        return self.present & ~self.waived & ~unanswered & missing

    def final(self) -> np.ndarray:
        """Final (SV) scores; NaN for pending, waived or absent items."""
        unanswered = self.empty | self.invalid
        raw = np.where(unanswered, 0.0, self.raw)
        final = scoring.final_scores(raw, self.sv, unanswered)
        final[~self.present | self.waived] = np.nan
        return final

    def raw_scores(self) -> np.ndarray:
        raw = np.where(self.empty | self.invalid, 0.0, self.raw)
        raw[~self.present | self.waived] = np.nan
        return raw


def load_scores(runs: list[EvaluationRun]) -> ScoreMatrix:
    run_ids = np.array([run.pk for run in runs], dtype=np.int64)
    run_order = np.argsort(run_ids)
    responses = list(
        Response.objects.filter(run__in=run_ids.tolist())
        .annotate(
            is_waived=ExpressionWrapper(
                Q(waived_at__isnull=False), output_field=BooleanField()
            )
        )
        .values_list("run_id", "item_id", "status", "is_waived")
    )
    judgments = list(
        Judgment.objects.filter(response__run__in=run_ids.tolist())
        .filter(
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
        )
        .filter(status=Judgment.Status.DONE)
        .values_list(
            "response__run_id", "response__item_id", "kind", "score", "safety_violation"
        )
    )
    if responses:
        r_run, r_item, r_status, r_waived = zip(*responses, strict=True)
    else:
        r_run = r_item = r_status = r_waived = ()
    item_ids = np.unique(np.fromiter(r_item, dtype=np.int64, count=len(r_item)))
    m, n = len(runs), item_ids.size

    def cells(run_col, item_col):
        run_arr = np.fromiter(run_col, dtype=np.int64, count=len(run_col))
        item_arr = np.fromiter(item_col, dtype=np.int64, count=len(item_col))
        rows = run_order[np.searchsorted(run_ids, run_arr, sorter=run_order)]
        return rows, np.searchsorted(item_ids, item_arr)

    rows, cols = cells(r_run, r_item)
    status = np.full((m, n), -1, dtype=np.int8)
    status[rows, cols] = [STATUS_CODES[s] for s in r_status]
    waived = np.zeros((m, n), bool)
    waived[rows, cols] = np.fromiter(r_waived, dtype=bool, count=len(r_waived))

    raw = np.full((m, n), np.nan)
    sv = np.full((m, n), np.nan)
    if judgments:
        j_run, j_item, j_kind, j_score, j_flag = zip(*judgments, strict=True)
        rows, cols = cells(j_run, j_item)
        kind = np.array(j_kind)
        rubric = kind == Judgment.Kind.RUBRIC
        score = np.array([np.nan if s is None else s for s in j_score], dtype=float)
        flag = np.array([np.nan if f is None else float(f) for f in j_flag])
        raw[rows[rubric], cols[rubric]] = score[rubric]
        sv[rows[~rubric], cols[~rubric]] = flag[~rubric]
    return ScoreMatrix(
        runs=list(runs),
        item_ids=item_ids,
        present=status >= 0,
        raw=raw,
        sv=sv,
        empty=status == STATUS_CODES[Response.Status.EMPTY],
        invalid=status == STATUS_CODES[Response.Status.INVALID],
        waived=waived,
    )


def run_label(run: EvaluationRun) -> str:
    return f"{run.model_name} (thinking)" if run.thinking else run.model_name


@dataclass
class Report:
    benchmark: object
    language: str
    languages: list[str]
    runs: list[EvaluationRun]
    metrics: list[scoring.RunMetrics]
    tables: dict[str, Table] = field(default_factory=dict)
    difficulty_source: str = ""
    bootstrap_items: int = 0
    bootstrap_excluded: int = 0

    def ordered_tables(self) -> list[Table]:
        return [self.tables[slug] for slug in TABLE_ORDER]


def benchmark_runs(benchmark) -> list[EvaluationRun]:
    return list(
        EvaluationRun.objects.filter(benchmark=benchmark)
        .exclude(status=EvaluationRun.Status.CANCELLED)
        .order_by("model_name", "language", "thinking", "id")
    )


def build_report(
    benchmark,
    *,
    language: str | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Report:
    """Every diagnostic table for the runs of `benchmark` in `language` (default: the
    source language); the mode and multilingual tables use runs in all languages."""
    all_runs = benchmark_runs(benchmark)
    languages = sorted({r.language for r in all_runs}, key=_language_order(benchmark))
    language = language or (
        benchmark.source_language
        if benchmark.source_language in languages or not languages
        else languages[0]
    )
    matrix = load_scores(all_runs)
    all_metrics = [matrix.metrics(i) for i in range(len(all_runs))]
    rows = [i for i, r in enumerate(all_runs) if r.language == language]
    runs = [all_runs[i] for i in rows]
    report = Report(
        benchmark=benchmark,
        language=language,
        languages=languages,
        runs=runs,
        metrics=[all_metrics[i] for i in rows],
    )
    final = matrix.final()[rows]
    raw = matrix.raw_scores()[rows]
    keep = matrix.present[rows].any(axis=0)
    final, raw, item_ids = final[:, keep], raw[:, keep], matrix.item_ids[keep]

    half_widths = _add_bootstrap(report, final, resamples, seed)
    _add_leaderboard(report, half_widths)
    _add_label_slices(report, final, item_ids)
    _add_difficulty(report, final, raw, item_ids)
    summaries = [
        scoring.RunSummary(
            r.model_name, r.language, r.thinking, m.raw_mean, m.final_mean
        )
        for r, m in zip(all_runs, all_metrics, strict=True)
    ]
    _add_mode_table(report, summaries)
    _add_language_table(report, summaries, languages)
    return report


def _language_order(benchmark):
    order = {code: i for i, code in enumerate(benchmark.languages)}
    return lambda code: (order.get(code, len(order)), code)


def _add_leaderboard(report: Report, half_widths: np.ndarray) -> None:
    labels = [run_label(r) for r in report.runs]
    keys = [str(i) for i in range(len(report.runs))]
    ranking = scoring.leaderboard(
        keys,
        [m.raw_mean for m in report.metrics],
        [m.final_mean for m in report.metrics],
    )
    columns = [
        Column("rank", "Rank", "int"),
        Column("model", "Model"),
        Column("category", "Category"),
        Column("final", "Final (SV)", "num"),
        Column("ci", "±95% CI", "num"),
        Column("raw", "Raw Mean", "num"),
        Column("delta", "Delta", "signed"),
        Column("perfect", "Perfect", "rate"),
        Column("pass", "Pass", "rate"),
        Column("sv_rate", "SV rate", "rate"),
        Column("raw_rank", "Raw rank", "int"),
        Column("rank_change", "Δrank", "signed", 0),
        Column("empty", "Empty/invalid", "int"),
        Column("pending", "Pending", "int"),
    ]
    rows, row_keys = [], []
    for entry in ranking:
        i = int(entry.key)
        m = report.metrics[i]
        run = report.runs[i]
        rows.append(
            [
                entry.final_rank,
                labels[i],
                run.model_category or "uncategorised",
                m.final_mean,
                half_widths[i],
                m.raw_mean,
                m.delta,
                m.perfect_rate,
                m.pass_rate,
                m.sv_rate,
                entry.raw_rank,
                entry.rank_change,
                m.n_empty + m.n_invalid,
                m.n_pending,
            ]
        )
        row_keys.append(run.pk)
    notes = ["Δrank = raw rank − final rank (positive: moved up once SV applied)."]
    pending = sum(m.n_pending for m in report.metrics)
    if pending:
        notes.append(
            f"{pending} items are pending (judge or SV verdict missing); each run's "
            "metrics cover its scored items only."
        )
    waived = sum(m.n_waived for m in report.metrics)
    if waived:
        notes.append(f"{waived} pending items were waived by a manager and excluded.")
    report.tables["leaderboard"] = Table(
        slug="leaderboard",
        title=f"Leaderboard ({report.language}): safety-adjusted scores",
        columns=columns,
        rows=rows,
        notes=notes,
        row_keys=row_keys,
        label_columns=2,
    )


def _heatmap(
    report: Report,
    slug: str,
    title: str,
    table: scoring.SliceTable,
    group_names: list[str],
    group_keys: list,
    kind: str,
    note: str,
) -> Table:
    columns = [Column("model", "Model")] + [
        Column(f"g{i}", name, kind, 2) for i, name in enumerate(group_names)
    ]
    rows = [
        [run_label(run), *table.values[r].tolist()] for r, run in enumerate(report.runs)
    ]
    return Table(
        slug=slug,
        title=title,
        columns=columns,
        rows=rows,
        notes=[note],
        support=table.support.tolist(),
        min_support=MIN_SUPPORT,
        row_keys=[run.pk for run in report.runs],
        column_keys=group_keys,
    )


def _add_label_slices(report: Report, final: np.ndarray, item_ids: np.ndarray):
    for code, slug, title in (
        ("capability", "capability", "Final (SV) by capability"),
        ("industry", "industry", "Final (SV) by industry"),
    ):
        labels = list(
            Label.objects.filter(
                dimension__benchmark=report.benchmark, dimension__code=code
            ).order_by("position", "code")
        )
        groups = np.full(item_ids.size, -1)
        if labels:
            index = {label.pk: i for i, label in enumerate(labels)}
            assigned = FinalLabel.objects.filter(
                item_id__in=item_ids.tolist(), dimension__code=code
            ).values_list("item_id", "label_id")
            for item_id, label_id in assigned:
                groups[np.searchsorted(item_ids, item_id)] = index[label_id]
        report.tables[slug] = _heatmap(
            report,
            slug,
            title,
            scoring.slice_means(final, groups, len(labels)),
            [label.name for label in labels],
            [label.code for label in labels],
            "num",
            f"Mean final score (0–3) per cell; cells with fewer than {MIN_SUPPORT} "
            "scored items are marked.",
        )


def _add_difficulty(
    report: Report, final: np.ndarray, raw: np.ndarray, item_ids: np.ndarray
):
    stored = dict(
        Item.objects.filter(pk__in=item_ids.tolist())
        .exclude(difficulty="")
        .values_list("pk", "difficulty")
    )
    if stored:
        order = {name: i for i, name in enumerate(scoring.TERCILE_NAMES)}
        groups = np.array([order.get(stored.get(int(i), ""), -1) for i in item_ids])
        report.difficulty_source = "stored item difficulty"
    else:
        keys = dict(
            Item.objects.filter(pk__in=item_ids.tolist()).values_list(
                "pk", "external_id"
            )
        )
        groups, _ = scoring.difficulty_terciles(raw, [keys[int(i)] for i in item_ids])
        report.difficulty_source = (
            "panel-derived from the runs shown (not saved; no item has a difficulty)"
        )
    report.tables["difficulty"] = _heatmap(
        report,
        "difficulty",
        "Perfect rate (final = 3) by difficulty tercile",
        scoring.slice_rates(final, groups, 3, at_least=scoring.PERFECT_SCORE),
        [name.capitalize() for name in scoring.TERCILE_NAMES],
        list(scoring.TERCILE_NAMES),
        "rate",
        f"Difficulty: {report.difficulty_source}.",
    )


def _add_bootstrap(
    report: Report, final: np.ndarray, resamples: int, seed: int
) -> np.ndarray:
    complete = scoring.complete_items(final) if final.size else np.zeros(0, bool)
    report.bootstrap_items = int(complete.sum())
    report.bootstrap_excluded = int(complete.size - complete.sum())
    labels = [run_label(r) for r in report.runs]
    m = len(report.runs)
    if m == 0 or report.bootstrap_items == 0:
        half = np.full(m, np.nan)
        result = None
    else:
        result = scoring.paired_bootstrap(
            final[:, complete], n_resamples=resamples, seed=seed
        )
        half = result.half_widths
    note = (
        f"Percentile bootstrap, B = {resamples:,} item resamples shared by all runs "
        f"(seed {seed}), over the {report.bootstrap_items} items every run scored"
        + (
            f"; {report.bootstrap_excluded} items pending or absent in some run are "
            "left out."
            if report.bootstrap_excluded
            else "."
        )
    )
    report.tables["ci"] = Table(
        slug="ci",
        title="Bootstrap 95% confidence intervals of Final (SV)",
        columns=[
            Column("model", "Model"),
            Column("final", "Final (SV)", "num"),
            Column("lower", "Lower", "num"),
            Column("upper", "Upper", "num"),
            Column("half", "Half-width", "num"),
        ],
        rows=[
            [
                labels[i],
                result.means[i] if result else np.nan,
                result.lower[i] if result else np.nan,
                result.upper[i] if result else np.nan,
                half[i],
            ]
            for i in range(m)
        ],
        notes=[note],
        row_keys=[r.pk for r in report.runs],
    )
    pair_rows = []
    for i in range(m):
        cells = []
        for j in range(m):
            if result is None or i == j:
                cells.append(None)
            else:
                mark = "*" if result.significant[i, j] else ""
                cells.append(f"{result.diff[i, j]:+.3f}{mark}")
        pair_rows.append([labels[i], *cells])
    report.tables["pairs"] = Table(
        slug="pairs",
        title="Paired differences in Final (SV), row − column",
        columns=[Column("model", "Model")]
        + [Column(f"r{j}", labels[j]) for j in range(m)],
        rows=pair_rows,
        notes=["* the 95% bootstrap CI of the difference excludes 0.", note],
        row_keys=[r.pk for r in report.runs],
        highlight=result.significant.tolist() if result is not None else None,
    )
    return half


def _add_mode_table(report: Report, summaries):
    rows = [
        [
            c.model,
            c.language,
            c.non_thinking_final,
            c.thinking_final,
            c.non_thinking_delta,
            c.thinking_delta,
            c.delta_mode,
        ]
        for c in scoring.mode_comparisons(summaries)
    ]
    report.tables["mode"] = Table(
        slug="mode",
        title="Thinking vs non-thinking",
        columns=[
            Column("model", "Model"),
            Column("language", "Language"),
            Column("final_off", "Final (non-thinking)", "num"),
            Column("final_on", "Final (thinking)", "num"),
            Column("delta_off", "Delta (non-thinking)", "signed"),
            Column("delta_on", "Delta (thinking)", "signed"),
            Column("delta_mode", "Δmode", "signed"),
        ],
        rows=rows,
        notes=["Δmode = Final (thinking) − Final (non-thinking)."],
        label_columns=2,
    )


def _add_language_table(report: Report, summaries, languages: list[str]):
    comparisons = scoring.language_comparisons(summaries)
    rows = [
        [
            f"{c.model} (thinking)" if c.thinking else c.model,
            *[c.finals.get(code, np.nan) for code in languages],
            c.delta_max,
        ]
        for c in comparisons
    ]
    report.tables["multilingual"] = Table(
        slug="multilingual",
        title="Final (SV) across languages",
        columns=[Column("model", "Model")]
        + [Column(code, code, "num") for code in languages]
        + [Column("delta_max", "Δmax", "num")],
        rows=rows,
        notes=["Δmax = highest − lowest Final (SV) across the model's languages."],
    )


TABLE_ORDER = (
    "leaderboard",
    "capability",
    "industry",
    "difficulty",
    "mode",
    "multilingual",
    "ci",
    "pairs",
)


# Drill-downs -----------------------------------------------------------------------


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

    @property
    def unanswered(self) -> bool:
        return self.response.status in {
            Response.Status.EMPTY,
            Response.Status.INVALID,
        }

    @property
    def raw(self) -> int | None:
        if self.unanswered:
            return 0
        if self.rubric and self.rubric.status == Judgment.Status.DONE:
            return self.rubric.score
        return None

    @property
    def violation(self) -> bool | None:
        if self.unanswered:
            return False
        if self.safety and self.safety.status == Judgment.Status.DONE:
            return self.safety.safety_violation
        return None

    @property
    def final(self) -> int | None:
        if self.raw is None or self.violation is None:
            return None
        return 0 if self.violation else self.raw

    @property
    def pending(self) -> bool:
        return self.final is None and self.response.waived_at is None


def _details(responses, *, with_other_judges: bool = False) -> list[ResponseDetail]:
    responses = list(responses)
    primary = _primary_judgments([r.pk for r in responses])
    others: dict[int, list[Judgment]] = {}
    if with_other_judges:
        for judgment in Judgment.objects.filter(
            response__in=[r.pk for r in responses], kind=Judgment.Kind.RUBRIC
        ).order_by("judge_name"):
            others.setdefault(judgment.response_id, []).append(judgment)
    details = []
    for response in responses:
        mine = primary.get(response.pk, {})
        rubric = mine.get(Judgment.Kind.RUBRIC)
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
            )
        )
    return details


def cell_item_ids(benchmark, run: EvaluationRun, dimension: str, group: str):
    """Ids of the items in one heatmap cell (same grouping as build_report)."""
    run_items = Response.objects.filter(run=run).values("item_id")
    if dimension in {"capability", "industry"}:
        return FinalLabel.objects.filter(
            item_id__in=run_items, dimension__code=dimension, label__code=group
        ).values_list("item_id", flat=True)
    if dimension != "difficulty" or group not in scoring.TERCILE_NAMES:
        raise ValueError(f"Unknown slice {dimension}={group}.")
    stored = Item.objects.filter(benchmark=benchmark).exclude(difficulty="")
    if stored.exists():
        return stored.filter(difficulty=group, pk__in=run_items).values_list(
            "pk", flat=True
        )
    panel = [r for r in benchmark_runs(benchmark) if r.language == run.language]
    matrix = load_scores(panel)
    keys = dict(
        Item.objects.filter(pk__in=matrix.item_ids.tolist()).values_list(
            "pk", "external_id"
        )
    )
    terciles, _ = scoring.difficulty_terciles(
        matrix.raw_scores(), [keys[int(pk)] for pk in matrix.item_ids]
    )
    code = scoring.TERCILE_NAMES.index(group)
    return matrix.item_ids[terciles == code].tolist()


def cell_details(benchmark, run: EvaluationRun, dimension: str, group: str) -> dict:
    item_ids = cell_item_ids(benchmark, run, dimension, group)
    responses = (
        Response.objects.filter(run=run, item_id__in=item_ids)
        .select_related("item", "rendering")
        .order_by("item__external_id")
    )
    details = _details(responses)
    if dimension == "difficulty":
        group_name = group.capitalize()
    else:
        label = Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code=dimension, code=group
        ).first()
        group_name = label.name if label else group
    finals = [d.final for d in details if d.final is not None]
    return {
        "dimension": dimension,
        "group": group,
        "group_name": group_name,
        "details": details,
        "scored": len(finals),
        "mean_final": sum(finals) / len(finals) if finals else None,
        "perfect": sum(1 for f in finals if f == scoring.PERFECT_SCORE),
    }


def item_details(item) -> list[ResponseDetail]:
    responses = (
        Response.objects.filter(item=item)
        .select_related("run", "rendering")
        .order_by("run__language", "run__model_name", "run__thinking", "run_id")
    )
    return _details(responses, with_other_judges=True)
