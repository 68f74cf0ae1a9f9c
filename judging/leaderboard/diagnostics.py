"""The 0–3 leaderboard's diagnostic tables, each added to a `Report` from score
arrays: the leaderboard itself with its CIs, label slices and heatmaps, difficulty
terciles, bootstrap CIs and paired differences, thinking modes, languages and the
SV-zeroed share. Pure numpy apart from the label names a slice reads."""

from __future__ import annotations

import hashlib

import numpy as np
from django.utils.translation import gettext_lazy, gettext_noop

from benchmark.models import FinalLabel, Item, Label
from benchmark.notes import Note, noop
from judging.evaluation.scores import run_label
from judging.reporting import scoring
from judging.reporting.cache import cached
from judging.reporting.tables import PAPER_DIGITS, Column, Table

# Slices with fewer items than this are marked as low support, cell by cell and in
# the column header (the paper flags Fault Diagnosis, n = 31, and Engineering
# Calculation, n = 22).
MIN_SUPPORT = 50
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
# Table 19 compares the paper's top nine models pairwise.
PAIRS_TOP_K = 9
SLICE_DIMENSIONS = ("capability", "industry")


def own_item_intervals(
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


def add_leaderboard(
    report,
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
        Column("rank", gettext_noop("Rank"), "int"),
        Column("model", gettext_noop("Model")),
        Column("category", gettext_noop("Category")),
        Column("final", gettext_noop("Final (SV)"), "num"),
        Column("ci", gettext_noop("±95% CI"), "num"),
        Column("items", gettext_noop("Items"), "int"),
        Column("raw", gettext_noop("Raw Mean"), "num"),
        Column("delta", gettext_noop("Delta"), "signed"),
        Column("perfect", gettext_noop("Perfect"), "rate"),
        Column("pass", gettext_noop("Pass"), "rate"),
        Column("sv_rate", gettext_noop("SV rate"), "rate"),
        Column("raw_rank", gettext_noop("Raw rank"), "int"),
        Column("rank_change", gettext_noop("Δrank"), "signed", 0),
        Column("empty", gettext_noop("Empty/invalid"), "int"),
        Column("pending", gettext_noop("Pending"), "int"),
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
        Note(
            gettext_noop(
                "Δrank = raw rank − final rank (positive: moved up once SV applied)."
            )
        ),
        Note(
            gettext_noop(
                "±95%% CI: percentile bootstrap of each run's Final (SV) over the "
                "items it scored (the Items column); the CI table and paired "
                "differences use the %(bootstrap_items)s items every run scored."
            ),
            bootstrap_items=report.bootstrap_items,
        ),
    ]
    if report.subset is not None:
        notes.insert(0, subset_note(report.subset))
    if len(set(item_set.tolist())) > 1:
        sets: dict[int, list[int]] = {}
        for i, group in enumerate(item_set.tolist()):
            sets.setdefault(group, []).append(i)
        notes.append(
            Note(
                gettext_noop(
                    "Ranked across different item sets: these runs' means are over "
                    "different items, so their ranks are not a like-for-like "
                    "comparison; compare them on the CI table's common items."
                )
            )
        )
        notes += [
            Note(
                noop.ngettext(
                    "Scored on %(count)s item: %(runs)s.",
                    "Scored on %(count)s items: %(runs)s.",
                ),
                count=int(items_scored[rows[0]]),
                runs=", ".join(labels[i] for i in rows),
            )
            for rows in sets.values()
        ]
        report.mixed_item_sets = True
    pending = sum(m.n_pending for m in report.metrics)
    if pending:
        notes.append(
            Note(
                noop.ngettext(
                    "%(count)s item is pending (judge or SV verdict missing); each "
                    "run's metrics cover its scored items only.",
                    "%(count)s items are pending (judge or SV verdict missing); each "
                    "run's metrics cover its scored items only.",
                ),
                count=pending,
            )
        )
    waived = sum(m.n_waived for m in report.metrics)
    if waived:
        notes.append(
            Note(
                noop.ngettext(
                    "%(count)s pending item was waived by a manager and excluded.",
                    "%(count)s pending items were waived by a manager and excluded.",
                ),
                count=waived,
            )
        )
    if report.overridden_verdicts:
        notes.append(report.override_note)
    unapproved = [
        labels[i]
        for i, run in enumerate(report.runs)
        if (run.item_filter or {}).get("include_unapproved")
    ]
    if unapproved:
        notes.append(
            Note(
                gettext_noop(
                    "Also asked translations not approved in review (pending or "
                    "flagged): %(runs)s."
                ),
                runs=", ".join(unapproved),
            )
        )
    report.tables["leaderboard"] = Table(
        slug="leaderboard",
        title=Note(
            gettext_noop("Leaderboard (%(language)s): safety-adjusted scores"),
            language=report.language,
        ),
        columns=columns,
        rows=rows,
        notes=notes,
        row_keys=row_keys,
        label_columns=2,
    )


def sv_impact_table(report) -> Table:
    """Table 11: what the SV rule does to each run, in the leaderboard's order —
    the SV rate (flagged over the non-empty responses with an SV verdict), Raw
    Mean, Final (SV), Delta and the rank change (raw rank − final rank), with the
    SV rate pooled over every run in a note."""
    leaderboard = report.tables["leaderboard"]
    keys = [c.key for c in leaderboard.columns]
    position = {run.pk: i for i, run in enumerate(report.runs)}
    rows = []
    for row, run_pk in zip(leaderboard.rows, leaderboard.row_keys, strict=True):
        cells = dict(zip(keys, row, strict=True))
        m = report.metrics[position[run_pk]]
        rows.append(
            [
                cells["rank"],
                cells["model"],
                cells["category"],
                m.sv_rate,
                m.n_sv_flagged,
                m.n_sv_checked,
                m.raw_mean,
                m.final_mean,
                m.delta,
                cells["raw_rank"],
                cells["rank_change"],
            ]
        )
    flagged = sum(m.n_sv_flagged for m in report.metrics)
    checked = sum(m.n_sv_checked for m in report.metrics)
    pooled = (
        f"{flagged} of {checked} ({100 * flagged / checked:.1f}%)"
        if checked
        else "none checked"
    )
    return Table(
        slug="sv_impact",
        title=Note(
            gettext_noop("Safety violations by model and rank impact (%(language)s)"),
            language=report.language,
        ),
        columns=[
            Column("rank", gettext_noop("Rank"), "int"),
            Column("model", gettext_noop("Model")),
            Column("category", gettext_noop("Category")),
            Column("sv_rate", gettext_noop("SV rate"), "rate"),
            Column("sv_flagged", gettext_noop("SV flagged"), "int"),
            Column("sv_checked", gettext_noop("SV checked"), "int"),
            Column("raw", gettext_noop("Raw Mean"), "num"),
            Column("final", gettext_noop("Final (SV)"), "num"),
            Column("delta", gettext_noop("Delta"), "signed"),
            Column("raw_rank", gettext_noop("Raw rank"), "int"),
            Column("rank_change", gettext_noop("Rank change"), "signed", 0),
        ],
        rows=rows,
        notes=[
            Note(
                gettext_noop(
                    "SV rate = SV flagged / SV checked: the non-empty responses the "
                    "SV judge has a verdict on (empty or invalid answers already "
                    "score 0 and are not reviewed). Delta = Final (SV) − Raw Mean. "
                    "Rank change = raw rank − final rank (positive: moved up once SV "
                    "applied). Rank: by Final (SV), as in the leaderboard."
                )
            ),
            Note(gettext_noop("SV rate over every run: %(pooled)s."), pooled=pooled),
        ],
        row_keys=list(leaderboard.row_keys),
        label_columns=2,
    )


def _heatmap(
    report,
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
    columns = [Column("model", gettext_noop("Model"))] + [
        Column(
            f"g{i}",
            Note(gettext_noop("%(column)s †"), column=gettext_lazy(name))
            if low[i]
            else name,
            kinds[i],
            2,
            paper_digits=PAPER_DIGITS,
        )
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
            Note(
                noop.ngettext(
                    "† fewer than %(count)s item in the column: %(columns)s.",
                    "† fewer than %(count)s items in the column: %(columns)s.",
                ),
                count=MIN_SUPPORT,
                columns=[
                    Note(
                        gettext_noop("%(column)s (n = %(n)s)"),
                        column=gettext_lazy(name),
                        n=n,
                    )
                    for name, n, is_low in zip(
                        group_names, column_items, low, strict=True
                    )
                    if is_low
                ],
            )
        )
    if len(report.runs) > 1:
        notes.append(
            Note(
                gettext_noop(
                    "Mean over models: the mean of the model rows in each column."
                )
            )
        )
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


def add_label_slices(report, final: np.ndarray, item_ids: np.ndarray):
    titles = {
        "capability": gettext_noop("Final (SV) by capability"),
        "industry": gettext_noop("Final (SV) by industry"),
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
            Note(
                gettext_noop(
                    "Mean final score (0–3) per cell; cells with fewer than "
                    "%(min_support)s scored items are marked."
                ),
                min_support=MIN_SUPPORT,
            ),
            [int(np.sum(groups == g)) for g in range(len(labels))],
        )


# Table 9's columns: each tercile's mean score and Perfect rate.
TERCILE_COLUMNS = [
    gettext_noop("Easy mean"),
    gettext_noop("Easy Perfect"),
    gettext_noop("Medium mean"),
    gettext_noop("Medium Perfect"),
    gettext_noop("Hard mean"),
    gettext_noop("Hard Perfect"),
]


def add_difficulty(report, final: np.ndarray, raw: np.ndarray, item_ids: np.ndarray):
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
        tiers_note = gettext_noop(
            "Difficulty: stored item difficulty. Items per tier: Easy %(easy)s, "
            "Medium %(medium)s, Hard %(hard)s."
        )
    else:
        keys = {pk: external_id for pk, _, external_id in items}
        groups, _ = scoring.difficulty_terciles(raw, [keys[int(i)] for i in item_ids])
        report.difficulty_source = (
            "panel-derived from the runs shown (not saved; no item has a difficulty)"
        )
        tiers_note = gettext_noop(
            "Difficulty: panel-derived from the runs shown (not saved; no item has a "
            "difficulty). Items per tier: Easy %(easy)s, Medium %(medium)s, Hard "
            "%(hard)s."
        )
    means = scoring.slice_means(final, groups, 3)
    perfect = scoring.slice_rates(final, groups, 3, at_least=scoring.PERFECT_SCORE)
    # Table 9 gives each tercile's mean score and Perfect rate side by side.
    interleave = np.arange(6).reshape(2, 3).T.ravel()  # mean, perfect per tercile
    both = scoring.SliceTable(
        values=np.hstack([means.values, perfect.values])[:, interleave],
        support=np.hstack([means.support, perfect.support])[:, interleave],
    )
    sizes = [int(np.sum(groups == g)) for g in range(3)]
    report.difficulty_sizes = tuple(sizes)
    report.tables["difficulty"] = _heatmap(
        report,
        "difficulty",
        gettext_noop(
            "Mean final score and Perfect rate (final = 3) by difficulty tercile"
        ),
        both,
        TERCILE_COLUMNS,
        [name for name in scoring.TERCILE_NAMES for _ in range(2)],
        ["num", "rate"] * 3,
        Note(tiers_note, **dict(zip(scoring.TERCILE_NAMES, sizes, strict=True))),
        [size for size in sizes for _ in range(2)],
    )


def add_bootstrap(
    report,
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
    numbers = {
        "resamples": f"{resamples:,}",
        "seed": seed,
        "items": report.bootstrap_items,
        "excluded": report.bootstrap_excluded,
    }
    if report.bootstrap_excluded:
        note = Note(
            gettext_noop(
                "Percentile bootstrap, B = %(resamples)s item resamples shared by all "
                "runs (seed %(seed)s), over the %(items)s items every run scored; "
                "%(excluded)s items pending or absent in some run are left out."
            ),
            **numbers,
        )
    else:
        note = Note(
            gettext_noop(
                "Percentile bootstrap, B = %(resamples)s item resamples shared by all "
                "runs (seed %(seed)s), over the %(items)s items every run scored."
            ),
            **{k: v for k, v in numbers.items() if k != "excluded"},
        )
    report.tables["ci"] = Table(
        slug="ci",
        title=gettext_noop(
            # Not a format string: "95% c…" only looks like one.
            # xgettext:no-python-format
            "Bootstrap 95% confidence intervals of Final (SV) on the common items"
        ),
        columns=[
            Column("model", gettext_noop("Model")),
            Column("final", gettext_noop("Final (SV), common items"), "num"),
            Column("lower", gettext_noop("Lower"), "num"),
            Column("upper", gettext_noop("Upper"), "num"),
            Column("half", gettext_noop("Half-width"), "num"),
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
        title=Note(
            gettext_noop(
                "Paired differences in Final (SV), row − column (top %(top)s of "
                "%(models)s by Final on the common items)"
            ),
            top=len(top),
            models=m,
        ),
        columns=[Column("model", gettext_noop("Model"))]
        + [Column(f"r{j}", labels[j]) for j in top],
        rows=pair_rows,
        notes=[
            Note(
                gettext_noop(
                    "✓: the 95%% bootstrap CI of row − column lies entirely above 0 "
                    "(the row model is better); where the column model is better, the "
                    "✓ is in the mirrored cell."
                )
            ),
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
    return cached(
        f"judging:bootstrap:{digest.hexdigest()}",
        lambda: scoring.paired_bootstrap(scores, n_resamples=resamples, seed=seed),
    )


def add_mode_table(report, summaries):
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
        title=gettext_noop("Thinking vs non-thinking (Table 8)"),
        columns=[
            Column("model", gettext_noop("Model")),
            Column("language", gettext_noop("Language")),
            Column("final_off", gettext_noop("Final (non-thinking)"), "num"),
            Column("final_on", gettext_noop("Final (thinking)"), "num"),
            Column("rank_off", gettext_noop("Non-think Rank"), "int"),
            Column("rank_on", gettext_noop("Think Rank"), "int"),
            Column("raw_off", gettext_noop("Raw (non-thinking)"), "num"),
            Column("raw_on", gettext_noop("Raw (thinking)"), "num"),
            Column("delta_mode_raw", gettext_noop("Δmode (Raw)"), "signed"),
            Column("delta_mode", gettext_noop("Δmode (Final)"), "signed"),
        ],
        rows=rows,
        notes=[
            Note(
                gettext_noop(
                    "Δmode = thinking − non-thinking, on Final (SV) and on the Raw "
                    "Mean; bold where |Δmode| ≥ %(MODE_BOLD_THRESHOLD)s. Ranks: place "
                    "by Final among the models in this table, in each mode. Average: "
                    "the mean of the model rows."
                ),
                MODE_BOLD_THRESHOLD=format(scoring.MODE_BOLD_THRESHOLD, ".2f"),
            ),
        ],
        label_columns=2,
        highlight=highlight,
    )


def add_language_table(report, summaries, languages: list[str]):
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
            left_out.append(
                Note(
                    gettext_noop(
                        "Left out: %(model)s, which has no valid Final (SV) in "
                        "%(languages)s."
                    ),
                    model=name,
                    languages=", ".join(missing),
                )
            )
            continue
        rows.append([name, *finals, max(finals) - min(finals)])
        best = int(np.argmax(finals))
        highlight.append([i == best for i in range(len(finals))] + [False])
    notes = [
        Note(
            gettext_noop(
                "Models with a valid Final (SV) in every language: %(languages)s. "
                "Δmax = highest − lowest Final (SV) across them; the best language "
                "is in bold."
            ),
            languages=", ".join(required),
        )
    ]
    notes += left_out
    report.tables["multilingual"] = Table(
        slug="multilingual",
        title=gettext_noop("Final (SV) across languages (Table 10)"),
        columns=[Column("model", gettext_noop("Model"))]
        + [Column(code, code, "num") for code in required]
        + [Column("delta_max", gettext_noop("Δmax"), "num")],
        rows=rows,
        notes=notes,
        highlight=highlight,
    )


def add_sv_zeroed(report, share: np.ndarray, n: np.ndarray) -> None:
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
        title=Note(
            gettext_noop("Raw 2–3 answers zeroed by SV (%(language)s; Figure 4)"),
            language=report.language,
        ),
        columns=[
            Column("model", gettext_noop("Model")),
            Column("zeroed_off", gettext_noop("Zeroed (non-thinking)"), "rate"),
            Column("zeroed_on", gettext_noop("Zeroed (thinking)"), "rate"),
            Column("n_off", gettext_noop("n (non-thinking)"), "int"),
            Column("n_on", gettext_noop("n (thinking)"), "int"),
        ],
        rows=rows,
        notes=[
            Note(
                gettext_noop(
                    "Of the answers the judge scored 2 or 3 and the SV check has a "
                    "verdict on (n), the share the safety-violation rule set to 0."
                )
            )
        ],
    )


def subset_note(subset) -> Note:
    """What a table computed on a saved subset says about it."""
    return Note(
        noop.ngettext(
            "Computed on the subset %(name)s: %(description)s (%(items)s item; "
            "rule %(rule)s).",
            "Computed on the subset %(name)s: %(description)s (%(items)s items; "
            "rule %(rule)s).",
        ),
        count=len(subset.item_ids),
        items=f"{len(subset.item_ids):,}",
        name=subset.name,
        description=subset.description,
        rule=subset.rule,
    )
