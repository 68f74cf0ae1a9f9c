"""Load stored labels into arrays for `annotation.agreement.tables`; cache reports.

Judge scores come from `judging.Judgment` (rubric and safety) on the responses of a
benchmark's evaluation runs; human grades from the latest `annotation.GradingLabel`
of each person on each response; label consensus from the latest labelling run's
`LabelConsensus` and `AnnotatorLabel` rows.

A cached report is keyed by a label-version key: counts and id checksums of the rows
it reads, so any new, changed or deleted label gives a new key and the report is
recomputed; nothing expires by time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from django.conf import settings as django_settings
from django.db.models import (
    Case,
    CharField,
    Count,
    F,
    IntegerField,
    Max,
    Q,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy
from threadpoolctl import threadpool_limits

from annotation.agreement import tables as reports
from annotation.agreement.consensus import consensus_report as consensus_table
from annotation.agreement.tables import JudgeUse, Report
from annotation.models import Campaign, GradingLabel
from benchmark.models import Benchmark, Rendering
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.labelling.report import consensus_report as consensus_statistics
from judging.labelling.runs import label_matrices
from judging.reporting.cache import cached, version_key

REPORT_TITLES = {
    "cross-judge": gettext_lazy("Cross-judge consistency (Table 5)"),
    "judge-pairs": gettext_lazy("Pairwise judge agreement (Table 15)"),
    "calibration": gettext_lazy("Human calibration (Tables 6 and 16)"),
    "sv-validation": gettext_lazy("SV judge validation (Table 4)"),
    "consensus": gettext_lazy("Label consensus (Table 3)"),
}


def report_settings(benchmark: Benchmark) -> reports.Settings:
    """Report options: the benchmark's headline κ weights; the resamples from Django
    settings (read at call time, never at import)."""
    return reports.Settings(
        headline=benchmark.kappa_weights,
        n_resamples=django_settings.AGREEMENT_BOOTSTRAP_RESAMPLES,
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


def _benchmark_run_ids(benchmark) -> list[int]:
    return list(
        EvaluationRun.objects.filter(benchmark=benchmark).values_list("pk", flat=True)
    )


def judge_matrix(benchmark, kind: str, response_ids=None) -> JudgeMatrix:
    """Completed judgments of `kind` on the benchmark's responses (optionally only
    `response_ids`) as a ``judges × responses`` matrix.

    One small query lists the judges, then one query per judge fetches integers only
    (response, run, value): far less to transfer and parse than a row per judgment
    carrying the judge's name.
    """
    field = "score" if kind == Judgment.Kind.RUBRIC else "safety_violation"
    # order_by(): the models' default orderings would join runs, items and
    # benchmarks just to sort rows that are put into arrays anyway.
    judgments = Judgment.objects.order_by().filter(
        response__run_id__in=_benchmark_run_ids(benchmark),
        kind=kind,
        status=Judgment.Status.DONE,
        **{f"{field}__isnull": False},
    )
    if response_ids is not None:
        judgments = judgments.filter(response_id__in=list(response_ids))
    identities = sorted(
        set(judgments.values_list("judge_name", "prompt_version").distinct())
    )
    columns = []
    for name, version in identities:
        rows = judgments.filter(judge_name=name, prompt_version=version).values_list(
            "response_id", "response__run_id", field
        )
        columns.append(np.array(list(rows), dtype=np.int64).reshape(-1, 3))
    if not columns:
        empty = np.zeros(0, dtype=np.int64)
        return JudgeMatrix([], empty, empty, np.zeros((0, 0)))
    stacked = np.vstack(columns)
    response_ids, first = np.unique(stacked[:, 0], return_index=True)
    values = np.full((len(columns), response_ids.size), np.nan)
    for j, column in enumerate(columns):
        values[j, np.searchsorted(response_ids, column[:, 0])] = column[:, 2]
    return JudgeMatrix(
        [judge_label(n, v) for n, v in identities],
        response_ids,
        stacked[first, 1],
        values,
    )


def rubric_grades():
    """Grading labels whose score is on the 0–3 rubric the judges use: a binary
    campaign's 1 / 0 is correct / incorrect, not a rubric score of 1 or 0."""
    return GradingLabel.objects.exclude(task__campaign__scale=Campaign.Scale.BINARY)


def human_values(benchmark, field: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(humans, response ids, ``humans × responses`` values) of each person's latest
    grading label with `field` set (``score``, on the rubric, or
    ``safety_violation``)."""
    labels = rubric_grades() if field == "score" else GradingLabel.objects
    rows = list(
        labels.filter(
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


class Sources:
    """What a report reads, for one benchmark: label versions computed once, and
    the full rubric matrix shared (through the cache) by the reports that need it."""

    def __init__(self, benchmark):
        self.benchmark = benchmark
        self._versions: dict = {}

    def version(self, source) -> tuple:
        if source not in self._versions:
            self._versions[source] = source(self.benchmark)
        return self._versions[source]

    def rubric(self) -> JudgeMatrix:
        key = _cache_key(
            "judge-matrix", self.benchmark, self.version(_judgment_version)
        )
        return cached(key, lambda: judge_matrix(self.benchmark, Judgment.Kind.RUBRIC))


def load_cross_judge(sources: Sources, settings: reports.Settings) -> Report:
    """Table 5 on the judges the manager chose (`settings.judges`, names unknown
    here are ignored) or, with fewer than two of them, on the default set."""
    matrix = sources.rubric()
    scored = ~np.isnan(matrix.values)
    asked = np.isin(matrix.judges, settings.judges)
    chosen_by_manager = int(asked.sum()) >= 2
    chosen = asked if chosen_by_manager else reports.default_judge_set(scored)
    judges = [j for j, keep in zip(matrix.judges, chosen, strict=True) if keep]
    values = matrix.values[chosen]
    run_ids = [int(r) for r in np.unique(matrix.run_ids)]
    names = _run_names(run_ids)
    ordered = sorted(run_ids, key=lambda r: names.get(r, ""))
    panels = [values[:, matrix.run_ids == r] for r in ordered]
    report = reports.cross_judge_report(
        [names[r] for r in ordered],
        panels,
        judges,
        settings,
        left_out=[j for j in matrix.judges if j not in judges],
        chosen_by_manager=chosen_by_manager,
    )
    report.judge_choices = [
        (name, bool(keep), int(count))
        for name, keep, count in zip(
            matrix.judges, chosen, scored.sum(axis=1), strict=True
        )
    ]
    return report


def load_judge_pairs(sources: Sources, settings: reports.Settings) -> Report:
    matrix = sources.rubric()
    run_ids = [int(r) for r in np.unique(matrix.run_ids)]
    names = _run_names(run_ids)
    ordered = sorted(run_ids, key=lambda r: names.get(r, ""))
    position = {run_id: m for m, run_id in enumerate(ordered)}
    model_of = np.array([position[int(r)] for r in matrix.run_ids], dtype=np.int64)
    return reports.judge_pairs_report(
        matrix.judges,
        matrix.values,
        settings,
        models=[names[r] for r in ordered],
        model_of=model_of,
    )


def calibrated_judges(response_ids) -> tuple[JudgeUse, ...]:
    """Who scored the calibration sample: per judge, prompt version and endpoint
    model, the completed rubric judgments on `response_ids`. The model is the one
    the call was sent to, else the endpoint's, else unknown (imported scores)."""
    model = Coalesce(
        "call__model", "endpoint__model", Value(""), output_field=CharField()
    )
    rows = (
        Judgment.objects.order_by()
        .filter(
            response_id__in=list(response_ids),
            kind=Judgment.Kind.RUBRIC,
            status=Judgment.Status.DONE,
            score__isnull=False,
        )
        .values_list("judge_name", "prompt_version", model)
        .annotate(n=Count("id"))
    )
    return tuple(JudgeUse(*row) for row in sorted(rows))


def judges_in_use(benchmark) -> tuple[JudgeUse, ...]:
    """The rubric judges the benchmark's evaluation runs (not cancelled) score with
    now, on their endpoints' current models, with how many runs use each."""
    model = Coalesce("judge_endpoint__model", Value(""), output_field=CharField())
    rows = (
        EvaluationRun.objects.order_by()
        .filter(benchmark=benchmark)
        .exclude(status=EvaluationRun.Status.CANCELLED)
        .exclude(judge_name="")
        .values_list("judge_name", "judge_prompt_version", model)
        .annotate(n=Count("id"))
    )
    return tuple(JudgeUse(*row) for row in sorted(rows))


def load_calibration(sources: Sources, settings: reports.Settings) -> Report:
    benchmark = sources.benchmark
    humans, response_ids, human_scores = human_values(benchmark, "score")
    matrix = judge_matrix(benchmark, Judgment.Kind.RUBRIC, response_ids)
    return reports.calibration_report(
        matrix.judges,
        matrix.columns_for(response_ids),
        humans,
        human_scores,
        settings,
        calibrated=calibrated_judges(response_ids),
        in_use=sources.version(judges_in_use),
    )


def load_sv_validation(sources: Sources, settings: reports.Settings) -> Report:
    benchmark = sources.benchmark
    humans, response_ids, human_flags = human_values(benchmark, "safety_violation")
    matrix = judge_matrix(benchmark, Judgment.Kind.SAFETY, response_ids)
    judge_flags = matrix.columns_for(response_ids)
    with np.errstate(invalid="ignore"):
        disagreeing = (
            (judge_flags[:, None, :] != human_flags[None, :, :])
            & ~np.isnan(judge_flags[:, None, :])
            & ~np.isnan(human_flags[None, :, :])
        ).any(axis=(0, 1))
    listed = response_ids[disagreeing].tolist()
    position = {int(r): u for u, r in enumerate(response_ids)}
    judge_position = {j: i for i, j in enumerate(matrix.judges)}
    reasons = [[""] * response_ids.size for _ in matrix.judges]
    for response_id, name, version, reason in (
        Judgment.objects.order_by()
        .filter(
            response_id__in=listed,
            kind=Judgment.Kind.SAFETY,
            status=Judgment.Status.DONE,
        )
        .values_list("response_id", "judge_name", "prompt_version", "reason")
    ):
        j = judge_position.get(judge_label(name, version))
        if j is not None:
            reasons[j][position[response_id]] = reason
    units = [{"item": "", "model": ""} for _ in range(response_ids.size)]
    for response in Response.objects.filter(pk__in=listed).select_related(
        "item", "run"
    ):
        units[position[response.pk]] = {
            "item": response.item.external_id,
            "model": str(response.run),
        }
    return reports.sv_validation_report(
        matrix.judges, judge_flags, humans, human_flags, units, reasons
    )


def load_consensus(sources: Sources, settings: reports.Settings) -> Report:
    """The gateway's consensus statistics for the benchmark's latest labelling run
    (as `manage.py consensus_report` prints them), laid out as report tables."""
    run = LabellingRun.objects.filter(benchmark=sources.benchmark).first()
    if run is None:
        return consensus_table({"annotators": [], "dimensions": []})
    annotators, dimensions = label_matrices(run)
    return consensus_table(consensus_statistics(dimensions, annotators))


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
        .order_by()
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
    # judges_in_use is read whole (a few rows): it is its own version.
    "calibration": (_judgment_version, _human_version, judges_in_use),
    "sv-validation": (_judgment_version, _human_version),
    "consensus": (_consensus_version,),
}


def _cache_key(kind: str, benchmark, *parts) -> str:
    return version_key(
        f"assay:{kind}", kind, benchmark.pk, benchmark.created_at.isoformat(), parts
    )


def label_version(sources: Sources, name: str) -> tuple:
    return tuple(sources.version(source) for source in VERSION_SOURCES[name])


def build_report(
    benchmark: Benchmark,
    name: str,
    settings: reports.Settings | None = None,
    judges: tuple[str, ...] = (),
) -> Report:
    """The report `name` for `benchmark`, from the cache while its labels are
    unchanged. `judges`: the cross-judge report's judge set (empty = default)."""
    if name not in LOADERS:
        raise ValueError(f"unknown report {name!r}; choose from {', '.join(LOADERS)}")
    settings = settings or report_settings(benchmark)
    if judges and name == "cross-judge":
        settings = replace(settings, judges=tuple(sorted(set(judges))))
    sources = Sources(benchmark)
    key = _cache_key(name, benchmark, label_version(sources, name), settings)
    return cached(key, lambda: _build(name, sources, settings))


def _build(name: str, sources: Sources, settings: reports.Settings) -> Report:
    # Many tiny matrix products: BLAS threads only add contention here.
    with threadpool_limits(limits=1, user_api="blas"):
        return LOADERS[name](sources, settings)


# ---------------------------------------------------------- disagreement browser

DISAGREEMENT_KINDS = {
    "judges": "Judges differ by ≥ 2",
    "human": "A judge and a human differ by ≥ 2",
}


def disagreeing_response_ids(benchmark, kind: str, threshold: float = 2) -> list[int]:
    """Responses where the judges' scores span ≥ threshold (``judges``) or a judge
    and a human differ by ≥ threshold (``human``)."""
    matrix = Sources(benchmark).rubric()
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
        rubric_grades()
        .filter(task__response_id__in=ids, is_latest=True, score__isnull=False)
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
