"""Evaluation scores as runs × items arrays, read in one query.

Responses with the verdicts each run's metrics use and the people's overrides of
them come out of the database in one query (`load_scores`); everything after that
is pure numpy (judging.reporting.scoring). The leaderboard, the panel difficulty
write-back and the Inspect export all read scores here."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np
from django.core.cache import cache
from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    ExpressionWrapper,
    F,
    FilteredRelation,
    IntegerField,
    Q,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from judging.evaluation.models import (
    EvaluationRun,
    Judgment,
    Response,
)
from judging.reporting import scoring

# Rows are keyed by each run's scores_version, so entries are never stale; the
# expiry only keeps superseded versions from piling up.
SCORE_ROWS_CACHE_SECONDS = 24 * 3600
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
        cache.set_many(by_run, SCORE_ROWS_CACHE_SECONDS)
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


def benchmark_runs(benchmark) -> list[EvaluationRun]:
    return list(
        EvaluationRun.objects.filter(benchmark=benchmark)
        .exclude(status=EvaluationRun.Status.CANCELLED)
        .order_by("model_name", "language", "thinking", "id")
    )
