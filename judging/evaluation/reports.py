"""Read evaluation results into numpy and assemble the diagnostic tables.

Scores come out of the database in one query (responses with the verdicts each
run's metrics use, and the people's overrides of them); everything after that is
judging.evaluation.scoring.
`cached_report` keeps built reports in the cache under `leaderboard_key`, a cheap
version of everything `build_report` reads, so a repeat view skips the score query
and the bootstrap.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np
from django.core.cache import cache
from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Count,
    ExpressionWrapper,
    F,
    FilteredRelation,
    IntegerField,
    Max,
    Q,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from benchmark.models import Benchmark, FinalLabel, Item, Label
from judging.evaluation import scoring
from judging.evaluation.accuracy_report import (
    BINARY_TABLE_ORDER,
    build_binary_report,
    load_binary,
)
from judging.evaluation.choices import CHOICE_FORMATS
from judging.evaluation.models import (
    AnswerGrade,
    EvaluationRun,
    Judgment,
    Response,
    ScoreOverride,
)
from judging.reporting.tables import Column, Table

# Slices with fewer items than this are marked as low support, cell by cell and in
# the column header (the paper flags Fault Diagnosis, n = 31, and Engineering
# Calculation, n = 22).
MIN_SUPPORT = 50
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
# Table 19 compares the paper's top nine models pairwise.
PAIRS_TOP_K = 9
BOOTSTRAP_CACHE_SECONDS = 24 * 3600
# Keys change with the data, so entries are never stale; the expiry only keeps
# superseded versions from piling up.
REPORT_CACHE_SECONDS = 24 * 3600
SLICE_DIMENSIONS = ("capability", "industry")

STATUS_CODES = {
    Response.Status.PENDING: 0,
    Response.Status.ANSWERED: 1,
    Response.Status.EMPTY: 2,
    Response.Status.INVALID: 3,
    Response.Status.FAILED: 4,
}
# What `_score_rows` returns per response, in order. Part of the cached rows' key,
# so a change of layout never reads rows cached in the old one.
ROW_COLUMNS = (
    "run",
    "item",
    "status",
    "waived",
    "raw",
    "sv",
    "raw_overridden",
    "sv_overridden",
)


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
    # A person's override replaced the judge's rubric score / SV flag (in raw / sv).
    raw_overridden: np.ndarray
    sv_overridden: np.ndarray

    def restricted(self, item_ids) -> ScoreMatrix:
        """The same runs on only `item_ids` (a saved subset): every metric and table
        built from it covers those items alone."""
        keep = np.isin(self.item_ids, np.asarray(list(item_ids), dtype=np.int64))
        return replace(
            self,
            item_ids=self.item_ids[keep],
            **{
                name: getattr(self, name)[:, keep]
                for name in (
                    "present",
                    "raw",
                    "sv",
                    "empty",
                    "invalid",
                    "waived",
                    "raw_overridden",
                    "sv_overridden",
                )
            },
        )

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
        # An SV flag alone would give 0; with the judge's verdict missing the item
        # is pending, as the metrics count it, so the CI and slices leave it out too.
        final[~self.present | self.waived | self.pending()] = np.nan
        return final

    def raw_scores(self) -> np.ndarray:
        raw = np.where(self.empty | self.invalid, 0.0, self.raw)
        raw[~self.present | self.waived] = np.nan
        return raw

    def overrides(self, rows) -> tuple[int, int]:
        """(verdicts, responses) where a person's override counts, in `rows`: not
        on waived items, nor on empty/invalid answers (scored 0 whatever the
        verdicts say)."""
        counted = self.present & ~self.waived & ~self.empty & ~self.invalid
        raw = (self.raw_overridden & counted)[rows]
        sv = (self.sv_overridden & counted)[rows]
        return int(raw.sum() + sv.sum()), int((raw | sv).sum())


def _verdict(judgment: str, override: str, field: str) -> Case:
    """The judge's value, or the person's where an override applies; NULL while the
    judge has given none (an override changes a verdict, never stands in for a
    missing one)."""
    return Case(
        When(
            **{f"{judgment}__{field}__isnull": False},
            then=Coalesce(F(f"{override}__{field}"), F(f"{judgment}__{field}")),
        ),
        default=Value(None),
    )


def _overridden(judgment: str, override: str, field: str) -> ExpressionWrapper:
    return ExpressionWrapper(
        Q(**{f"{judgment}__{field}__isnull": False, f"{override}__id__isnull": False}),
        output_field=BooleanField(),
    )


def _override(kind: str) -> FilteredRelation:
    """The latest override of `kind` on a response, unless it restored the judge's
    verdict. At most one row (a partial unique index), so the join adds no rows."""
    return FilteredRelation(
        "overrides",
        condition=Q(
            overrides__kind=kind, overrides__is_latest=True, overrides__reverts=False
        ),
    )


def _score_rows(runs: list[EvaluationRun]) -> np.ndarray:
    """One row of ROW_COLUMNS per response: run id, item id, status code, waived,
    rubric score and SV flag (a person's override where one applies), and whether
    each of the two was overridden."""
    status_code = Case(
        *[
            When(status=status, then=Value(code))
            for status, code in STATUS_CODES.items()
        ],
        default=Value(-1),
        output_field=IntegerField(),
    )
    query = (
        Response.objects.filter(run__in=[run.pk for run in runs])
        .annotate(
            rubric=FilteredRelation(
                "judgments",
                condition=Q(
                    judgments__kind=Judgment.Kind.RUBRIC,
                    judgments__status=Judgment.Status.DONE,
                    judgments__judge_name=F("run__judge_name"),
                    judgments__prompt_version=F("run__judge_prompt_version"),
                    # Redundant with the line above, but a constant PostgreSQL can
                    # filter the scan with: other judges' rows (the three-judge
                    # study) never reach the hash join.
                    judgments__judge_name__in={r.judge_name for r in runs},
                ),
            ),
            safety=FilteredRelation(
                "judgments",
                condition=Q(
                    judgments__kind=Judgment.Kind.SAFETY,
                    judgments__status=Judgment.Status.DONE,
                    judgments__judge_name=F("run__sv_judge_name"),
                    judgments__prompt_version=F("run__sv_prompt_version"),
                    judgments__judge_name__in={r.sv_judge_name for r in runs},
                ),
            ),
            rubric_override=_override(Judgment.Kind.RUBRIC),
            safety_override=_override(Judgment.Kind.SAFETY),
            status_code=status_code,
            is_waived=ExpressionWrapper(
                Q(waived_at__isnull=False), output_field=BooleanField()
            ),
            raw=_verdict("rubric", "rubric_override", "score"),
            sv=_verdict("safety", "safety_override", "safety_violation"),
            raw_overridden=_overridden("rubric", "rubric_override", "score"),
            sv_overridden=_overridden("safety", "safety_override", "safety_violation"),
        )
        .order_by()
        .values_list(
            "run_id",
            "item_id",
            "status_code",
            "is_waived",
            "raw",
            "sv",
            "raw_overridden",
            "sv_overridden",
        )
    )
    # The ORM builds the SQL; the cursor fetches the rows without per-row converters.
    # Every column is numeric or NULL, so numpy converts them in one call
    # (None -> NaN, True/False -> 1/0).
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    table = np.array(rows, dtype=float).reshape(-1, len(ROW_COLUMNS))
    return table


def _run_rows_key(run: EvaluationRun) -> str:
    identity = (
        ROW_COLUMNS,
        run.pk,
        run.created_at.isoformat(),
        run.scores_version,
        run.judge_name,
        run.judge_prompt_version,
        run.sv_judge_name,
        run.sv_prompt_version,
    )
    digest = hashlib.sha256(repr(identity).encode()).hexdigest()
    return f"judging:run-scores:{digest}"


def _cached_score_rows(runs: list[EvaluationRun]) -> np.ndarray:
    keys = {run.pk: _run_rows_key(run) for run in runs}
    found = cache.get_many(list(keys.values()))
    missing = [run for run in runs if keys[run.pk] not in found]
    if missing:
        fresh = _score_rows(missing)
        by_run = {keys[run.pk]: fresh[fresh[:, 0] == run.pk] for run in missing}
        cache.set_many(by_run, REPORT_CACHE_SECONDS)
        found.update(by_run)
    return np.concatenate([found[keys[run.pk]] for run in runs])


def load_scores(runs: list[EvaluationRun], *, cached: bool = False) -> ScoreMatrix:
    """One query: each response with the rubric and SV verdicts of the judges its run
    uses (left joins, so a missing verdict comes back as NULL -> NaN = pending),
    people's overrides applied.

    With `cached`, each run's rows are kept in the cache under its `scores_version`
    and only runs whose version changed are read, so the first leaderboard view after
    one run changes reads that run alone. Only for run objects read just now (as
    `cached_report` does): an older copy carries an older version.
    """
    if not runs:
        empty = np.zeros((0, 0), dtype=bool)
        return ScoreMatrix(
            runs=[],
            item_ids=np.zeros(0, dtype=np.int64),
            present=empty,
            raw=np.zeros((0, 0)),
            sv=np.zeros((0, 0)),
            empty=empty,
            invalid=empty,
            waived=empty,
            raw_overridden=empty,
            sv_overridden=empty,
        )
    table = _cached_score_rows(runs) if cached else _score_rows(runs)
    run_ids = np.array([run.pk for run in runs], dtype=np.int64)
    run_order = np.argsort(run_ids)
    run_col = table[:, 0].astype(np.int64)
    item_col = table[:, 1].astype(np.int64)
    item_ids = np.unique(item_col)
    m, n = len(runs), item_ids.size
    rows_idx = run_order[np.searchsorted(run_ids, run_col, sorter=run_order)]
    cols_idx = np.searchsorted(item_ids, item_col)

    def grid(column: str, fill, dtype):
        values = np.full((m, n), fill, dtype=dtype)
        values[rows_idx, cols_idx] = table[:, ROW_COLUMNS.index(column)]
        return values

    status = grid("status", -1, np.int8)
    return ScoreMatrix(
        runs=list(runs),
        item_ids=item_ids,
        present=status >= 0,
        raw=grid("raw", np.nan, float),
        sv=grid("sv", np.nan, float),
        empty=status == STATUS_CODES[Response.Status.EMPTY],
        invalid=status == STATUS_CODES[Response.Status.INVALID],
        waived=grid("waived", 0, float) == 1,
        raw_overridden=grid("raw_overridden", 0, float) == 1,
        sv_overridden=grid("sv_overridden", 0, float) == 1,
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
    # The leaderboard ranks runs that scored different items.
    mixed_item_sets: bool = False
    # The saved item subset every table was computed on (None: all items).
    subset: object = None
    # Judge verdicts people overrode in these runs, and the responses they are on.
    overridden_verdicts: int = 0
    overridden_responses: int = 0
    cache_key: str = ""
    # What the bootstrap CIs were drawn with; the defaults are cached_report's, so
    # a report cached before these fields existed reads right.
    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    # A benchmark on the binary scale: accuracy tables (judging.evaluation.
    # accuracy_report) instead of the 0–3 ones.
    binary: bool = False

    def ordered_tables(self) -> list[Table]:
        order = BINARY_TABLE_ORDER if self.binary else TABLE_ORDER
        return [self.tables[slug] for slug in order]

    @property
    def override_note(self) -> str:
        verdicts, responses = self.overridden_verdicts, self.overridden_responses
        if not verdicts:
            return ""
        return (
            f"{verdicts} judge score{'s' if verdicts != 1 else ''} overridden by "
            f"people ({responses} response{'s' if responses != 1 else ''}): the "
            "final scores use the people's verdicts; each item's results page shows "
            "the judge's verdict beside the override, who made it and why."
        )

    def as_dict(self, tables: list[Table] | None = None) -> dict:
        """The report as JSON-ready data (`manage.py leaderboard --format json`, the
        REST API): its runs with their metrics and `tables` (default: all)."""
        return {
            "benchmark": self.benchmark.slug,
            "language": self.language,
            "languages": self.languages,
            "bootstrap": {
                "resamples": self.resamples,
                "seed": self.seed,
                "items": self.bootstrap_items,
                "excluded_items": self.bootstrap_excluded,
            },
            "difficulty_source": self.difficulty_source,
            "scale": "binary" if self.binary else "rubric_0_3",
            "subset": (
                {
                    "name": self.subset.name,
                    "rule": self.subset.rule,
                    "items": len(self.subset.item_ids),
                }
                if self.subset is not None
                else None
            ),
            "overridden_verdicts": self.overridden_verdicts,
            "runs": [
                {
                    "id": run.pk,
                    "model": run.model_name,
                    "category": run.model_category,
                    "language": run.language,
                    "thinking": run.thinking,
                    "origin": run.origin,
                    "status": run.status,
                    "metrics": _finite(metrics.as_dict()),
                }
                for run, metrics in zip(self.runs, self.metrics, strict=True)
            ],
            "tables": {
                t.slug: t.as_dict()
                for t in (self.ordered_tables() if tables is None else tables)
            },
        }


def _finite(values: dict) -> dict:
    """JSON has no NaN: missing values become null."""
    return {
        key: None if isinstance(value, float) and value != value else value
        for key, value in values.items()
    }


def benchmark_runs(benchmark) -> list[EvaluationRun]:
    return list(
        EvaluationRun.objects.filter(benchmark=benchmark)
        .exclude(status=EvaluationRun.Status.CANCELLED)
        .order_by("model_name", "language", "thinking", "id")
    )


def leaderboard_key(
    benchmark, runs, language: str | None, resamples, seed, subset=None
) -> str:
    """A cache key that changes whenever anything `build_report` reads changes.

    Three small queries instead of the score query: the runs (their fields and
    `scores_version`, which every write to their responses or verdicts bumps in the
    same transaction — see judging.evaluation.pipeline.scores_changed), and checksums
    of the final capability/industry labels, the label names and the items' stored
    difficulty. Read it *before* the data, so a write landing in between can only
    file newer results under the older key, never older results under the newer.
    """
    run_part = [
        (
            r.pk,
            r.model_name,
            r.model_category,
            r.language,
            r.thinking,
            r.status,
            r.judge_name,
            r.judge_prompt_version,
            r.sv_judge_name,
            r.sv_prompt_version,
            r.scores_version,
            r.binary,
            r.trials,
        )
        for r in runs
    ]
    final_labels = FinalLabel.objects.filter(
        item__benchmark=benchmark, dimension__code__in=SLICE_DIMENSIONS
    ).aggregate(
        n=Count("id"),
        last=Max("id"),
        labels=Sum(F("id") * F("label_id"), output_field=IntegerField()),
    )
    label_names = list(
        Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code__in=SLICE_DIMENSIONS
        )
        .order_by("pk")
        .values_list("pk", "code", "name", "position")
    )
    difficulty = Case(
        *[
            When(difficulty=name, then=F("id") * (code + 1))
            for code, name in enumerate(scoring.TERCILE_NAMES)
        ],
        default=0,
        output_field=IntegerField(),
    )
    items = Item.objects.filter(benchmark=benchmark).aggregate(
        n=Count("id"), last=Max("id"), difficulty=Sum(difficulty)
    )
    raw = repr(
        (
            benchmark.pk,
            benchmark.created_at.isoformat(),
            benchmark.source_language,
            benchmark.languages,
            benchmark.scoring_scale,
            language,
            resamples,
            seed,
            run_part,
            sorted(final_labels.items()),
            label_names,
            sorted(items.items()),
            # A saved subset never changes: its id stands for its items.
            subset.pk if subset is not None else None,
        )
    )
    return "judging:leaderboard:" + hashlib.sha256(raw.encode()).hexdigest()


def cached_report(benchmark, *, language: str | None = None, subset=None) -> Report:
    """build_report, from the cache while nothing it reads has changed."""
    runs = benchmark_runs(benchmark)
    key = leaderboard_key(
        benchmark, runs, language, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, subset
    )
    report = cache.get(key)
    if report is None:
        report = build_report(
            benchmark, language=language, runs=runs, cached_scores=True, subset=subset
        )
        report.cache_key = key
        cache.set(key, report, REPORT_CACHE_SECONDS)
    return report


def build_report(
    benchmark,
    *,
    language: str | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    runs: list[EvaluationRun] | None = None,
    cached_scores: bool = False,
    pairs_top: int = PAIRS_TOP_K,
    subset=None,
) -> Report:
    """Every diagnostic table for the runs of `benchmark` in `language` (default: the
    source language); the mode and multilingual tables use runs in all languages.
    `runs`: the benchmark's runs if already read (benchmark_runs); `cached_scores`:
    see load_scores; `pairs_top`: how many runs the paired-difference table
    compares (Table 19); `subset`: a saved benchmark.ItemSubset every table is
    computed on (its rule and size are noted under the leaderboard)."""
    all_runs = benchmark_runs(benchmark) if runs is None else runs
    languages = sorted({r.language for r in all_runs}, key=_language_order(benchmark))
    language = language or (
        benchmark.source_language
        if benchmark.source_language in languages or not languages
        else languages[0]
    )
    if benchmark.scoring_scale == Benchmark.ScoringScale.BINARY:
        return _binary_report(
            benchmark, all_runs, languages, language, resamples, seed, subset
        )
    matrix = load_scores(all_runs, cached=cached_scores)
    if subset is not None:
        matrix = matrix.restricted(subset.item_ids)
    all_metrics = [matrix.metrics(i) for i in range(len(all_runs))]
    rows = [i for i, r in enumerate(all_runs) if r.language == language]
    runs = [all_runs[i] for i in rows]
    report = Report(
        benchmark=benchmark,
        language=language,
        languages=languages,
        runs=runs,
        metrics=[all_metrics[i] for i in rows],
        subset=subset,
        resamples=resamples,
        seed=seed,
    )
    report.overridden_verdicts, report.overridden_responses = matrix.overrides(rows)
    final = matrix.final()[rows]
    raw = matrix.raw_scores()[rows]
    keep = matrix.present[rows].any(axis=0)
    final, raw, item_ids = final[:, keep], raw[:, keep], matrix.item_ids[keep]

    _add_bootstrap(report, final, resamples, seed, pairs_top)
    _add_leaderboard(report, *_own_item_intervals(final, resamples, seed))
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
    language_rows = np.array(rows, dtype=np.int64)
    _add_sv_zeroed(
        report,
        *scoring.sv_zeroed(
            matrix.raw_scores()[language_rows], matrix.sv[language_rows]
        ),
    )
    return report


def _binary_report(benchmark, all_runs, languages, language, resamples, seed, subset):
    runs = [r for r in all_runs if r.language == language and r.binary]
    matrix = load_binary(runs)
    if subset is not None:
        matrix = matrix.restricted(subset.item_ids)
    report = Report(
        benchmark=benchmark,
        language=language,
        languages=languages,
        runs=runs,
        metrics=[],
        subset=subset,
        resamples=resamples,
        seed=seed,
        binary=True,
    )
    build_binary_report(
        report,
        matrix,
        list(range(len(runs))),
        [run_label(run) for run in runs],
        subset_note(subset) if subset is not None else "",
    )
    return report


def _language_order(benchmark):
    order = {code: i for i, code in enumerate(benchmark.languages)}
    return lambda code: (order.get(code, len(order)), code)


def subset_note(subset) -> str:
    """What a table computed on a saved subset says about it."""
    return (
        f"Computed on the subset {subset.name}: {subset.description} "
        f"({len(subset.item_ids):,} items; rule {subset.rule})."
    )


def _own_item_intervals(
    final: np.ndarray, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(CI half-width, items scored, item-set group) per run, each CI over the
    items that run scored, so the ± belongs to the Final (SV) beside it.

    Runs that scored the same items share one paired bootstrap (the usual case is a
    single group, the same computation and cache entry as the CI table's)."""
    scored = ~np.isnan(final)
    half = np.full(final.shape[0], np.nan)
    if final.size == 0:
        return half, scored.sum(axis=1), np.zeros(final.shape[0], dtype=np.int64)
    patterns, group = np.unique(scored, axis=0, return_inverse=True)
    group = group.reshape(-1)
    for g, pattern in enumerate(patterns):
        rows = np.flatnonzero(group == g)
        if pattern.any():
            scores = final[np.ix_(rows, pattern)]
            half[rows] = _cached_bootstrap(scores, resamples, seed).half_widths
    return half, scored.sum(axis=1), group


def _add_leaderboard(
    report: Report,
    half_widths: np.ndarray,
    items_scored: np.ndarray,
    item_set: np.ndarray,
) -> None:
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
        Column("items", "Items", "int"),
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
                items_scored[i],
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
    notes = [
        "Δrank = raw rank − final rank (positive: moved up once SV applied).",
        "±95% CI: percentile bootstrap of each run's Final (SV) over the items it "
        "scored (the Items column); the CI table and paired differences use the "
        f"{report.bootstrap_items} items every run scored.",
    ]
    if report.subset is not None:
        notes.insert(0, subset_note(report.subset))
    if len(set(item_set.tolist())) > 1:
        sets: dict[int, list[int]] = {}
        for i, group in enumerate(item_set.tolist()):
            sets.setdefault(group, []).append(i)
        described = "; ".join(
            f"{int(items_scored[rows[0]])} items: " + ", ".join(labels[i] for i in rows)
            for rows in sets.values()
        )
        notes.append(
            f"Ranked across different item sets ({described}): these runs' means "
            "are over different items, so their ranks are not a like-for-like "
            "comparison; compare them on the CI table's common items."
        )
        report.mixed_item_sets = True
    pending = sum(m.n_pending for m in report.metrics)
    if pending:
        notes.append(
            f"{pending} items are pending (judge or SV verdict missing); each run's "
            "metrics cover its scored items only."
        )
    waived = sum(m.n_waived for m in report.metrics)
    if waived:
        notes.append(f"{waived} pending items were waived by a manager and excluded.")
    if report.overridden_verdicts:
        notes.append(report.override_note)
    unapproved = [
        labels[i]
        for i, run in enumerate(report.runs)
        if (run.item_filter or {}).get("include_unapproved")
    ]
    if unapproved:
        notes.append(
            "Also asked translations not approved in review (pending or flagged): "
            + ", ".join(unapproved)
            + "."
        )
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
    kind: str | list[str],
    note: str,
    column_items: list[int],
) -> Table:
    """One row per run and, with two or more runs, a "Mean over models" row (the
    mean of the run rows per column). `kind`: every value column's, or one per
    column; `column_items`: the items in each column's slice. Columns with fewer
    than MIN_SUPPORT items carry a † in their header and are named in a note."""
    kinds = [kind] * len(group_names) if isinstance(kind, str) else kind
    low = [n < MIN_SUPPORT for n in column_items]
    columns = [Column("model", "Model")] + [
        Column(f"g{i}", f"{name} †" if low[i] else name, kinds[i], 2)
        for i, name in enumerate(group_names)
    ]
    rows = [
        [run_label(run), *table.values[r].tolist()] for r, run in enumerate(report.runs)
    ]
    support = table.support.tolist()
    row_keys = [run.pk for run in report.runs]
    if len(report.runs) > 1:
        mean = scoring.column_means(table.values)
        rows.append(["Mean over models", *mean.tolist()])
        support.append(list(column_items))
        row_keys.append(None)
    notes = [note]
    if any(low):
        notes.append(
            f"† fewer than {MIN_SUPPORT} items in the column: "
            + ", ".join(
                f"{name} (n = {n})"
                for name, n, is_low in zip(group_names, column_items, low, strict=True)
                if is_low
            )
            + "."
        )
    if len(report.runs) > 1:
        notes.append("Mean over models: the mean of the model rows in each column.")
    return Table(
        slug=slug,
        title=title,
        columns=columns,
        rows=rows,
        notes=notes,
        support=support,
        min_support=MIN_SUPPORT,
        row_keys=row_keys,
        column_keys=group_keys,
    )


def _groups_of(item_ids: np.ndarray, pairs, index: dict) -> np.ndarray:
    """Group index per item from (item id, key) pairs; −1 for items without one."""
    groups = np.full(item_ids.size, -1)
    if not pairs or not item_ids.size:
        return groups
    ids = np.array([pk for pk, _ in pairs], dtype=np.int64)
    codes = np.array([index.get(key, -1) for _, key in pairs])
    position = np.clip(np.searchsorted(item_ids, ids), 0, item_ids.size - 1)
    found = item_ids[position] == ids
    groups[position[found]] = codes[found]
    return groups


def _add_label_slices(report: Report, final: np.ndarray, item_ids: np.ndarray):
    titles = {
        "capability": "Final (SV) by capability",
        "industry": "Final (SV) by industry",
    }
    for code in SLICE_DIMENSIONS:
        title = titles[code]
        labels = list(
            Label.objects.filter(
                dimension__benchmark=report.benchmark, dimension__code=code
            ).order_by("position", "code")
        )
        assigned = list(
            FinalLabel.objects.filter(
                item__benchmark=report.benchmark, dimension__code=code
            )
            .order_by()
            .values_list("item_id", "label_id")
        )
        groups = _groups_of(
            item_ids, assigned, {label.pk: i for i, label in enumerate(labels)}
        )
        report.tables[code] = _heatmap(
            report,
            code,
            title,
            scoring.slice_means(final, groups, len(labels)),
            [label.name for label in labels],
            [label.code for label in labels],
            "num",
            f"Mean final score (0–3) per cell; cells with fewer than {MIN_SUPPORT} "
            "scored items are marked.",
            [int(np.sum(groups == g)) for g in range(len(labels))],
        )


def _add_difficulty(
    report: Report, final: np.ndarray, raw: np.ndarray, item_ids: np.ndarray
):
    items = list(
        Item.objects.filter(benchmark=report.benchmark)
        .order_by("pk")
        .values_list("pk", "difficulty", "external_id")
    )
    stored = [(pk, difficulty) for pk, difficulty, _ in items if difficulty]
    if stored:
        order = {name: i for i, name in enumerate(scoring.TERCILE_NAMES)}
        groups = _groups_of(item_ids, stored, order)
        report.difficulty_source = "stored item difficulty"
    else:
        keys = {pk: external_id for pk, _, external_id in items}
        groups, _ = scoring.difficulty_terciles(raw, [keys[int(i)] for i in item_ids])
        report.difficulty_source = (
            "panel-derived from the runs shown (not saved; no item has a difficulty)"
        )
    means = scoring.slice_means(final, groups, 3)
    perfect = scoring.slice_rates(final, groups, 3, at_least=scoring.PERFECT_SCORE)
    # Table 9 gives each tercile's mean score and Perfect rate side by side.
    interleave = np.arange(6).reshape(2, 3).T.ravel()  # mean, perfect per tercile
    both = scoring.SliceTable(
        values=np.hstack([means.values, perfect.values])[:, interleave],
        support=np.hstack([means.support, perfect.support])[:, interleave],
    )
    names = [name.capitalize() for name in scoring.TERCILE_NAMES]
    sizes = [int(np.sum(groups == g)) for g in range(3)]
    report.tables["difficulty"] = _heatmap(
        report,
        "difficulty",
        "Mean final score and Perfect rate (final = 3) by difficulty tercile",
        both,
        [f"{name} {what}" for name in names for what in ("mean", "Perfect")],
        [name for name in scoring.TERCILE_NAMES for _ in range(2)],
        ["num", "rate"] * 3,
        f"Difficulty: {report.difficulty_source}. Items per tier: "
        + ", ".join(f"{n} {size}" for n, size in zip(names, sizes, strict=True))
        + ".",
        [size for size in sizes for _ in range(2)],
    )


def _add_bootstrap(
    report: Report,
    final: np.ndarray,
    resamples: int,
    seed: int,
    pairs_top: int = PAIRS_TOP_K,
) -> None:
    """The CI table and paired differences, over the items every run scored."""
    complete = scoring.complete_items(final) if final.size else np.zeros(0, bool)
    report.bootstrap_items = int(complete.sum())
    report.bootstrap_excluded = int(complete.size - complete.sum())
    labels = [run_label(r) for r in report.runs]
    m = len(report.runs)
    if m == 0 or report.bootstrap_items == 0:
        half = np.full(m, np.nan)
        result = None
    else:
        result = _cached_bootstrap(final[:, complete], resamples, seed)
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
        title="Bootstrap 95% confidence intervals of Final (SV) on the common items",
        columns=[
            Column("model", "Model"),
            Column("final", "Final (SV), common items", "num"),
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
    # Table 19: the top-k runs by Final (SV) on the common items, best first.
    top = (
        [int(i) for i in np.argsort(-result.means, kind="stable")[:pairs_top]]
        if result is not None
        else list(range(m))
    )
    pair_rows = []
    for i in top:
        cells = []
        for j in top:
            if result is None or i == j:
                cells.append(None)
            else:
                mark = " ✓" if result.better[i, j] else ""
                cells.append(f"{result.diff[i, j]:+.3f}{mark}")
        pair_rows.append([labels[i], *cells])
    report.tables["pairs"] = Table(
        slug="pairs",
        title=(
            f"Paired differences in Final (SV), row − column (top {len(top)} of "
            f"{m} by Final on the common items)"
        ),
        columns=[Column("model", "Model")] + [Column(f"r{j}", labels[j]) for j in top],
        rows=pair_rows,
        notes=[
            "✓: the 95% bootstrap CI of row − column lies entirely above 0 (the "
            "row model is better); where the column model is better, the ✓ is in "
            "the mirrored cell.",
            note,
        ],
        row_keys=[report.runs[i].pk for i in top],
        highlight=(
            result.better[np.ix_(top, top)].tolist() if result is not None else None
        ),
    )


def _cached_bootstrap(scores: np.ndarray, resamples: int, seed: int):
    """paired_bootstrap, cached by the exact scores it is given: the result is a
    pure function of (scores, resamples, seed), so a stale entry is impossible."""
    scores = np.ascontiguousarray(scores)
    digest = hashlib.sha256(scores.tobytes())
    digest.update(f"{scores.shape}|{resamples}|{seed}".encode())
    key = f"judging:bootstrap:{digest.hexdigest()}"
    result = cache.get(key)
    if result is None:
        result = scoring.paired_bootstrap(scores, n_resamples=resamples, seed=seed)
        cache.set(key, result, BOOTSTRAP_CACHE_SECONDS)
    return result


def _add_mode_table(report: Report, summaries):
    """Table 8: per model with both modes, Final and Raw in each, the rank among
    these models in each mode, Δmode on Final and on Raw (bold where |Δmode| ≥
    0.20), and an Average row of the model rows."""
    comparisons = scoring.mode_comparisons(summaries)
    off_rank = scoring.ranks_descending([c.non_thinking_final for c in comparisons])
    on_rank = scoring.ranks_descending([c.thinking_final for c in comparisons])
    rows = [
        [
            c.model,
            c.language,
            c.non_thinking_final,
            c.thinking_final,
            int(off_rank[i]),
            int(on_rank[i]),
            c.non_thinking_raw,
            c.thinking_raw,
            c.delta_mode_raw,
            c.delta_mode,
        ]
        for i, c in enumerate(comparisons)
    ]
    if len(rows) > 1:
        values = np.array([row[2:] for row in rows], dtype=float)
        average = np.nanmean(values, axis=0).tolist()
        average[2:4] = [None, None]  # a mean of ranks is no rank
        rows.append(["Average", "", *average])
    delta_columns = (8, 9)
    highlight = [
        [
            c in delta_columns
            and row[c] is not None
            and abs(row[c]) >= scoring.MODE_BOLD_THRESHOLD - 1e-12
            for c in range(2, len(row))
        ]
        for row in rows
    ]
    report.tables["mode"] = Table(
        slug="mode",
        title="Thinking vs non-thinking (Table 8)",
        columns=[
            Column("model", "Model"),
            Column("language", "Language"),
            Column("final_off", "Final (non-thinking)", "num"),
            Column("final_on", "Final (thinking)", "num"),
            Column("rank_off", "Non-think Rank", "int"),
            Column("rank_on", "Think Rank", "int"),
            Column("raw_off", "Raw (non-thinking)", "num"),
            Column("raw_on", "Raw (thinking)", "num"),
            Column("delta_mode_raw", "Δmode (Raw)", "signed"),
            Column("delta_mode", "Δmode (Final)", "signed"),
        ],
        rows=rows,
        notes=[
            "Δmode = thinking − non-thinking, on Final (SV) and on the Raw Mean; "
            f"bold where |Δmode| ≥ {scoring.MODE_BOLD_THRESHOLD:.2f}. Ranks: place "
            "by Final among the models in this table, in each mode. Average: the "
            "mean of the model rows.",
        ],
        label_columns=2,
        highlight=highlight,
    )


def _add_language_table(report: Report, summaries, languages: list[str]):
    """Table 10: the models with a valid Final (SV) in every language of the
    benchmark (the paper's intersection), Δmax per model, the best language in
    bold; the models left out are named."""
    required = [code for code in report.benchmark.languages if code in languages]
    required = required or languages
    rows, highlight, left_out = [], [], []
    for c in scoring.language_comparisons(summaries):
        name = f"{c.model} (thinking)" if c.thinking else c.model
        finals = [c.finals.get(code, np.nan) for code in required]
        if np.isnan(finals).any():
            missing = [
                code for code, v in zip(required, finals, strict=True) if np.isnan(v)
            ]
            left_out.append(f"{name} (no {', '.join(missing)})")
            continue
        rows.append([name, *finals, max(finals) - min(finals)])
        best = int(np.argmax(finals))
        highlight.append([i == best for i in range(len(finals))] + [False])
    notes = [
        "Models with a valid Final (SV) in every language: "
        + ", ".join(required)
        + ". Δmax = highest − lowest Final (SV) across them; the best language "
        "is in bold."
    ]
    if left_out:
        notes.append("Left out: " + "; ".join(left_out) + ".")
    report.tables["multilingual"] = Table(
        slug="multilingual",
        title="Final (SV) across languages (Table 10)",
        columns=[Column("model", "Model")]
        + [Column(code, code, "num") for code in required]
        + [Column("delta_max", "Δmax", "num")],
        rows=rows,
        notes=notes,
        highlight=highlight,
    )


def _add_sv_zeroed(report: Report, share: np.ndarray, n: np.ndarray) -> None:
    """Figure 4's data: per model, the share of its raw 2–3 answers the SV rule set
    to 0, in non-thinking and thinking mode (in the report's language)."""
    by_model: dict[str, dict[bool, tuple[float, int]]] = {}
    for i, run in enumerate(report.runs):
        by_model.setdefault(run.model_name, {})[run.thinking] = (
            float(share[i]),
            int(n[i]),
        )
    rows = []
    for model in sorted(by_model):
        modes = by_model[model]
        off, on = modes.get(False, (np.nan, 0)), modes.get(True, (np.nan, 0))
        rows.append([model, off[0], on[0], off[1], on[1]])
    report.tables["sv_zeroed"] = Table(
        slug="sv_zeroed",
        title=f"Raw 2–3 answers zeroed by SV ({report.language}; Figure 4)",
        columns=[
            Column("model", "Model"),
            Column("zeroed_off", "Zeroed (non-thinking)", "rate"),
            Column("zeroed_on", "Zeroed (thinking)", "rate"),
            Column("n_off", "n (non-thinking)", "int"),
            Column("n_on", "n (thinking)", "int"),
        ],
        rows=rows,
        notes=[
            "Of the answers the judge scored 2 or 3 and the SV check has a verdict "
            "on (n), the share the safety-violation rule set to 0."
        ],
    )


TABLE_ORDER = (
    "leaderboard",
    "capability",
    "industry",
    "difficulty",
    "mode",
    "multilingual",
    "sv_zeroed",
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
        (judging.evaluation.actions.check_override_score)."""
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
            return f"Answer call failed: {response.error}"
        if response.status == Response.Status.PENDING:
            return "Not answered yet."
        if self.read_by_rules:
            return "Not graded yet."
        verdicts = [("Key-point judge" if self.binary else "Judge", self.rubric)]
        if not self.unanswered and not self.binary:
            verdicts.append(("SV check", self.safety))
        problems = []
        for name, judgment in verdicts:
            if judgment is None:
                problems.append(f"{name}: not asked yet")
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
        .select_related("run", "item", "rendering")
        .order_by("item__external_id")
    )
    details = response_details(responses)
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
        .select_related("run", "rendering", "item")
        .order_by(
            "run__language", "run__model_name", "run__thinking", "run_id", "trial"
        )
    )
    return response_details(responses, with_other_judges=True)
