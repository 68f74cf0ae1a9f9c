"""Load stored labels into arrays for `annotation.reports`, and cache the reports.

Judge scores come from `judging.Judgment` (rubric and safety) on the responses of a
benchmark's evaluation runs; human grades from the latest `annotation.GradingLabel`
of each person on each response; label consensus from the latest labelling run's
`LabelConsensus` and `AnnotatorLabel` rows.

A cached report is keyed by a label-version key: counts and id checksums of the rows
it reads, so any new, changed or deleted label gives a new key and the report is
recomputed; nothing expires by time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from django.conf import settings as django_settings
from django.core.cache import cache
from django.db.models import Case, Count, F, IntegerField, Max, Q, Sum, When
from threadpoolctl import threadpool_limits

from benchmark.models import Benchmark, LabelDimension, Rendering
from judging.models import (
    AnnotatorLabel,
    EvaluationRun,
    Judgment,
    LabelConsensus,
    LabellingRun,
    Response,
)

from . import reports
from .models import GradingLabel
from .reports import Report

REPORT_TITLES = {
    "cross-judge": "Cross-judge consistency (Table 5)",
    "judge-pairs": "Pairwise judge agreement (Table 15)",
    "calibration": "Human calibration (Tables 6 and 16)",
    "sv-validation": "SV judge validation (Table 4)",
    "consensus": "Label consensus (Table 3)",
}


def report_settings() -> reports.Settings:
    """Report options from Django settings (read at call time, never at import)."""
    return reports.Settings(
        headline=getattr(django_settings, "AGREEMENT_HEADLINE_WEIGHTS", "quadratic"),
        n_resamples=getattr(django_settings, "AGREEMENT_BOOTSTRAP_RESAMPLES", 2000),
    )


# ------------------------------------------------------------------- judge scores


def judge_label(name: str, prompt_version: str) -> str:
    return f"{name} · {prompt_version}" if prompt_version else name


@dataclass
class JudgeMatrix:
    """``judges × responses`` values (NaN = no completed judgment)."""

    judges: list[str]
    response_ids: np.ndarray
    run_ids: np.ndarray
    values: np.ndarray

    def columns_for(self, response_ids) -> np.ndarray:
        """`judges × len(response_ids)` values, NaN for responses nobody judged."""
        response_ids = np.asarray(response_ids, dtype=np.int64)
        out = np.full((len(self.judges), response_ids.size), np.nan)
        if self.response_ids.size == 0 or response_ids.size == 0:
            return out
        pos = np.searchsorted(self.response_ids, response_ids)
        pos = np.minimum(pos, self.response_ids.size - 1)
        found = self.response_ids[pos] == response_ids
        out[:, found] = self.values[:, pos[found]]
        return out


def _matrix(rows) -> JudgeMatrix:
    """rows: (response_id, run_id, judge_name, prompt_version, value) tuples."""
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return JudgeMatrix([], empty, empty, np.zeros((0, 0)))
    response_col, run_col, name_col, version_col, value_col = zip(*rows, strict=True)
    labels = [judge_label(n, v) for n, v in zip(name_col, version_col, strict=True)]
    judges, judge_idx = np.unique(np.array(labels, dtype=object), return_inverse=True)
    response_ids, unit_idx = np.unique(
        np.array(response_col, dtype=np.int64), return_inverse=True
    )
    run_ids = np.zeros(response_ids.size, dtype=np.int64)
    run_ids[unit_idx] = run_col
    values = np.full((judges.size, response_ids.size), np.nan)
    values[judge_idx, unit_idx] = np.array(value_col, dtype=float)
    return JudgeMatrix(list(judges), response_ids, run_ids, values)


def _judgments(benchmark, kind: str):
    field = "score" if kind == Judgment.Kind.RUBRIC else "safety_violation"
    return Judgment.objects.filter(
        response__run__benchmark=benchmark,
        kind=kind,
        status=Judgment.Status.DONE,
        **{f"{field}__isnull": False},
    )


def rubric_scores(benchmark) -> JudgeMatrix:
    rows = list(
        _judgments(benchmark, Judgment.Kind.RUBRIC).values_list(
            "response_id", "response__run_id", "judge_name", "prompt_version", "score"
        )
    )
    return _matrix(rows)


def human_values(benchmark, field: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(humans, response ids, ``humans × responses`` values) of each person's latest
    grading label with `field` set (``score`` or ``safety_violation``)."""
    rows = list(
        GradingLabel.objects.filter(
            task__campaign__benchmark=benchmark,
            task__response__isnull=False,
            is_latest=True,
            **{f"{field}__isnull": False},
        )
        .order_by("id")
        .values_list("task__response_id", "user__username", field)
    )
    if not rows:
        return [], np.zeros(0, dtype=np.int64), np.zeros((0, 0))
    response_col, user_col, value_col = zip(*rows, strict=True)
    humans, human_idx = np.unique(np.array(user_col, dtype=object), return_inverse=True)
    response_ids, unit_idx = np.unique(
        np.array(response_col, dtype=np.int64), return_inverse=True
    )
    values = np.full((humans.size, response_ids.size), np.nan)
    # Later rows win: one person labelling a response in two campaigns counts once.
    values[human_idx, unit_idx] = np.array(value_col, dtype=float)
    return list(humans), response_ids, values


# ------------------------------------------------------------------------ loaders


def _run_names(run_ids) -> dict[int, str]:
    return {run.pk: str(run) for run in EvaluationRun.objects.filter(pk__in=run_ids)}


def load_cross_judge(benchmark, settings: reports.Settings) -> Report:
    matrix = rubric_scores(benchmark)
    run_ids = [int(r) for r in np.unique(matrix.run_ids)]
    names = _run_names(run_ids)
    ordered = sorted(run_ids, key=lambda r: names.get(r, ""))
    panels = [matrix.values[:, matrix.run_ids == r] for r in ordered]
    return reports.cross_judge_report(
        [names[r] for r in ordered], panels, matrix.judges, settings
    )


def load_judge_pairs(benchmark, settings: reports.Settings) -> Report:
    matrix = rubric_scores(benchmark)
    return reports.judge_pairs_report(matrix.judges, matrix.values, settings)


def load_calibration(benchmark, settings: reports.Settings) -> Report:
    humans, response_ids, human_scores = human_values(benchmark, "score")
    matrix = rubric_scores(benchmark)
    judge_scores = matrix.columns_for(response_ids)
    return reports.calibration_report(
        matrix.judges, judge_scores, humans, human_scores, settings
    )


def load_sv_validation(benchmark, settings: reports.Settings) -> Report:
    humans, response_ids, human_flags = human_values(benchmark, "safety_violation")
    rows = list(
        _judgments(benchmark, Judgment.Kind.SAFETY)
        .filter(response_id__in=response_ids.tolist())
        .values_list(
            "response_id",
            "response__run_id",
            "judge_name",
            "prompt_version",
            "safety_violation",
            "reason",
        )
    )
    matrix = _matrix([r[:5] for r in rows])
    judge_flags = matrix.columns_for(response_ids)
    position = {int(r): u for u, r in enumerate(response_ids)}
    judge_position = {j: i for i, j in enumerate(matrix.judges)}
    reasons = [[""] * response_ids.size for _ in matrix.judges]
    for response_id, _, name, version, _, reason in rows:
        reasons[judge_position[judge_label(name, version)]][position[response_id]] = (
            reason
        )
    described = {
        pk: {"item": external_id, "model": str(run)}
        for pk, external_id, run in (
            (r.pk, r.item.external_id, r.run)
            for r in Response.objects.filter(
                pk__in=response_ids.tolist()
            ).select_related("item", "run")
        )
    }
    units = [described[int(r)] for r in response_ids]
    return reports.sv_validation_report(
        matrix.judges, judge_flags, humans, human_flags, units, reasons
    )


def latest_labelling_run(benchmark) -> LabellingRun | None:
    return (
        LabellingRun.objects.filter(benchmark=benchmark, consensus__isnull=False)
        .distinct()
        .order_by("-created_at", "-id")
        .first()
    )


def load_consensus(benchmark, settings: reports.Settings) -> Report:
    run = latest_labelling_run(benchmark)
    dimensions = []
    if run is not None:
        outcome_rows = LabelConsensus.objects.filter(run=run).values_list(
            "dimension_id", "outcome", "item_id"
        )
        label_rows = list(
            AnnotatorLabel.objects.filter(
                run=run, status=AnnotatorLabel.Status.LABELLED
            ).values_list("dimension_id", "annotator__name", "item_id", "label_id")
        )
        annotators = sorted(
            {row[1] for row in label_rows}
            | set(run.annotators.values_list("name", flat=True))
        )
        annotator_pos = {name: i for i, name in enumerate(annotators)}
        outcomes: dict[int, dict[str, int]] = {}
        items: dict[int, set] = {}
        for dimension_id, outcome, item_id in outcome_rows:
            counts = outcomes.setdefault(dimension_id, {})
            counts[outcome] = counts.get(outcome, 0) + 1
            items.setdefault(dimension_id, set()).add(item_id)
        for dimension_id, _, item_id, _ in label_rows:
            items.setdefault(dimension_id, set()).add(item_id)
        for dimension in LabelDimension.objects.filter(
            benchmark=benchmark, pk__in=list(items)
        ).order_by("position", "code"):
            item_ids = np.array(sorted(items[dimension.pk]), dtype=np.int64)
            labels = np.full((len(annotators), item_ids.size), np.nan)
            mine = [r for r in label_rows if r[0] == dimension.pk]
            if mine:
                _, names, item_col, label_col = zip(*mine, strict=True)
                labels[
                    [annotator_pos[n] for n in names],
                    np.searchsorted(item_ids, np.array(item_col, dtype=np.int64)),
                ] = label_col
            dimensions.append(
                reports.DimensionLabels(
                    dimension.name, outcomes.get(dimension.pk, {}), annotators, labels
                )
            )
    return reports.consensus_report(dimensions)


LOADERS = {
    "cross-judge": load_cross_judge,
    "judge-pairs": load_judge_pairs,
    "calibration": load_calibration,
    "sv-validation": load_sv_validation,
    "consensus": load_consensus,
}


# --------------------------------------------------------------- version and cache


def _judgment_version(benchmark) -> tuple:
    return tuple(
        Judgment.objects.filter(response__run__benchmark=benchmark)
        .aggregate(
            n=Count("id"),
            last=Max("id"),
            scores=Sum(F("id") * F("score"), output_field=IntegerField()),
            flags=Sum(Case(When(safety_violation=True, then=F("id")), default=0)),
            done=Sum(Case(When(status=Judgment.Status.DONE, then=F("id")), default=0)),
        )
        .values()
    )


def _human_version(benchmark) -> tuple:
    # Grading labels are append-only (a correction is a new row), so count and last
    # id change with every new label.
    return tuple(
        GradingLabel.objects.filter(task__campaign__benchmark=benchmark)
        .aggregate(
            n=Count("id"), last=Max("id"), latest=Count("id", filter=Q(is_latest=True))
        )
        .values()
    )


def _consensus_version(benchmark) -> tuple:
    consensus = LabelConsensus.objects.filter(run__benchmark=benchmark).aggregate(
        n=Count("id"), last=Max("id"), at=Max("computed_at")
    )
    labels = AnnotatorLabel.objects.filter(run__benchmark=benchmark).aggregate(
        n=Count("id"),
        last=Max("id"),
        labels=Sum(F("id") * F("label_id"), output_field=IntegerField()),
    )
    return (*consensus.values(), *labels.values())


VERSION_SOURCES = {
    "cross-judge": (_judgment_version,),
    "judge-pairs": (_judgment_version,),
    "calibration": (_judgment_version, _human_version),
    "sv-validation": (_judgment_version, _human_version),
    "consensus": (_consensus_version,),
}


def label_version(benchmark, name: str) -> str:
    parts = [benchmark.pk, benchmark.created_at.isoformat()]
    for source in VERSION_SOURCES[name]:
        parts.extend(source(benchmark))
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:24]


def build_report(
    benchmark: Benchmark, name: str, settings: reports.Settings | None = None
) -> Report:
    """The report `name` for `benchmark`, from the cache while its labels are
    unchanged."""
    if name not in LOADERS:
        raise ValueError(f"unknown report {name!r}; choose from {', '.join(LOADERS)}")
    settings = settings or report_settings()
    key = f"assay:report:{name}:{label_version(benchmark, name)}:{settings!r}"
    key = "assay:report:" + hashlib.sha256(key.encode()).hexdigest()
    report = cache.get(key)
    if report is None:
        # Many tiny matrix products: BLAS threads only add contention here.
        with threadpool_limits(limits=1, user_api="blas"):
            report = LOADERS[name](benchmark, settings)
        cache.set(key, report, timeout=None)
    return report


# ---------------------------------------------------------- disagreement browser

DISAGREEMENT_KINDS = {
    "judges": "Judges differ by ≥ 2",
    "human": "A judge and a human differ by ≥ 2",
}


def disagreeing_response_ids(benchmark, kind: str, threshold: float = 2) -> list[int]:
    """Responses where the judges' scores span ≥ threshold (``judges``) or a judge
    and a human differ by ≥ threshold (``human``)."""
    matrix = rubric_scores(benchmark)
    if kind == "judges":
        values = matrix.values
        rated = (~np.isnan(values)).sum(0) >= 2
        if not rated.any():
            return []
        spread = np.zeros(values.shape[1])
        spread[rated] = np.nanmax(values[:, rated], 0) - np.nanmin(values[:, rated], 0)
        return matrix.response_ids[rated & (spread >= threshold)].tolist()
    if kind == "human":
        _, response_ids, human_scores = human_values(benchmark, "score")
        judge_scores = matrix.columns_for(response_ids)
        with np.errstate(invalid="ignore"):
            gaps = np.abs(judge_scores[:, None, :] - human_scores[None, :, :])
        flagged = (gaps >= threshold).any(axis=(0, 1))
        return response_ids[flagged].tolist()
    raise ValueError(f"kind must be one of {', '.join(DISAGREEMENT_KINDS)}")


def describe_responses(responses) -> list[dict]:
    """Each response with its question, reference, judges' scores and reasons, and
    human grades, for the disagreement browser (one query per kind of row)."""
    ids = [r.pk for r in responses]
    current = {
        (r.item_id, r.language): r
        for r in Rendering.objects.filter(
            item_id__in=[r.item_id for r in responses], is_current=True
        )
    }
    judgments: dict[int, list] = {}
    for j in Judgment.objects.filter(
        response_id__in=ids, kind=Judgment.Kind.RUBRIC
    ).order_by("judge_name", "prompt_version"):
        judgments.setdefault(j.response_id, []).append(j)
    grades: dict[int, list] = {}
    for label in (
        GradingLabel.objects.filter(
            task__response_id__in=ids, is_latest=True, score__isnull=False
        )
        .select_related("user", "task")
        .order_by("user__username", "id")
    ):
        grades.setdefault(label.task.response_id, []).append(label)
    return [
        {
            "response": response,
            "rendering": response.rendering
            or current.get((response.item_id, response.run.language)),
            "judgments": judgments.get(response.pk, []),
            "grades": grades.get(response.pk, []),
        }
        for response in responses
    ]
