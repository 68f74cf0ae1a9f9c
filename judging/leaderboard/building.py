"""Build a benchmark's leaderboard report and keep it in the cache.

`build_report` reads the scores (judging.evaluation.scores) or, on a binary
benchmark, the graded answers (judging.evaluation.grades) and adds every table
(`diagnostics`, `binary_tables`). `cached_report` keeps built reports under
`leaderboard_key`, a cheap version of everything `build_report` reads, so a repeat
view skips the score query and the bootstrap."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from django.db.models import (
    Case,
    Count,
    F,
    IntegerField,
    Max,
    Sum,
    When,
)
from django.db.models.functions import Length

from benchmark.models import Benchmark, FinalLabel, Item, Label
from benchmark.notes import Note, noop
from judging.evaluation.grades import load_binary
from judging.evaluation.models import (
    EvaluationRun,
)
from judging.evaluation.scores import benchmark_runs, load_scores, run_label
from judging.leaderboard.binary_tables import BINARY_TABLE_ORDER, build_binary_report
from judging.leaderboard.diagnostics import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    PAIRS_TOP_K,
    SLICE_DIMENSIONS,
    add_bootstrap,
    add_difficulty,
    add_label_slices,
    add_language_table,
    add_leaderboard,
    add_mode_table,
    add_sv_zeroed,
    own_item_intervals,
    subset_note,
)
from judging.reporting import scoring
from judging.reporting.cache import cached, version_key
from judging.reporting.tables import Table


@dataclass
class Report:
    benchmark: object
    language: str
    languages: list[str]
    runs: list[EvaluationRun]
    metrics: list[scoring.RunMetrics]
    tables: dict[str, Table] = field(default_factory=dict)
    difficulty_source: str = ""
    # Scored items per tercile (easy, medium, hard) behind the difficulty table.
    difficulty_sizes: tuple[int, ...] = ()
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
        return Note(
            noop.ngettext(
                "%(count)s judge score overridden by people (%(responses)s): the "
                "final scores use the people's verdicts; each item's results page "
                "shows the judge's verdict beside the override, who made it and why.",
                "%(count)s judge scores overridden by people (%(responses)s): the "
                "final scores use the people's verdicts; each item's results page "
                "shows the judge's verdict beside the override, who made it and why.",
            ),
            count=verdicts,
            responses=Note(
                noop.ngettext("%(count)s response", "%(count)s responses"),
                count=responses,
            ),
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


# Moves when what a report holds changes shape, so reports cached by an older
# release are built again (3: the binary report's field tables, tested accuracy).
REPORT_VERSION = 3


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
    # Fields (the item's domain) group the binary per-field table: a checksum
    # of their lengths by id sees an import that relabels items.
    items = Item.objects.filter(benchmark=benchmark).aggregate(
        n=Count("id"),
        last=Max("id"),
        difficulty=Sum(difficulty),
        domains=Sum(F("id") * Length("domain"), output_field=IntegerField()),
    )
    return version_key(
        "judging:leaderboard",
        REPORT_VERSION,
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


def cached_report(benchmark, *, language: str | None = None, subset=None) -> Report:
    """build_report, from the cache while nothing it reads has changed."""
    runs = benchmark_runs(benchmark)
    key = leaderboard_key(
        benchmark, runs, language, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, subset
    )
    return cached(
        key,
        lambda: replace(
            build_report(
                benchmark,
                language=language,
                runs=runs,
                cached_scores=True,
                subset=subset,
            ),
            cache_key=key,
        ),
    )


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

    add_bootstrap(report, final, resamples, seed, pairs_top)
    add_leaderboard(report, *own_item_intervals(final, resamples, seed))
    add_label_slices(report, final, item_ids)
    add_difficulty(report, final, raw, item_ids)
    summaries = [
        scoring.RunSummary(
            r.model_name, r.language, r.thinking, m.raw_mean, m.final_mean
        )
        for r, m in zip(all_runs, all_metrics, strict=True)
    ]
    add_mode_table(report, summaries)
    add_language_table(report, summaries, languages)
    language_rows = np.array(rows, dtype=np.int64)
    add_sv_zeroed(
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
    domains = dict(
        Item.objects.filter(pk__in=matrix.item_ids.tolist()).values_list("pk", "domain")
    )
    build_binary_report(
        report,
        matrix,
        list(range(len(runs))),
        [run_label(run) for run in runs],
        subset_note(subset) if subset is not None else "",
        fields=np.array([domains[int(pk)] for pk in matrix.item_ids], dtype=object),
    )
    return report


def _language_order(benchmark):
    order = {code: i for i, code in enumerate(benchmark.languages)}
    return lambda code: (order.get(code, len(order)), code)


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
