"""Agreement with bootstrap intervals: a percentile interval for any statistic
(`bootstrap_ci`) and the rows of the judge and panel agreement tables with one for
each of their statistics (`paired_agreement`, `panel_agreement`). Plain numpy, no
Django; the layouts, missing values and ``labels`` are agreement.py's.

The rows' resamples are drawn over the distinct rating patterns (a multinomial
draw), and every statistic of a row is computed from the same resampled count
tables with agreement.py's batched table statistics, so 10,000 resamples cost
little more than one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from judging.reporting.agreement import (
    Coded,
    as_array,
    cell_share,
    kappa_from_tables,
    paired_codes,
    panel_codes,
    spearman_from_tables,
)
from judging.reporting.resampling import draw_items

__all__ = ["bootstrap_ci", "paired_agreement", "panel_agreement"]


# ------------------------------------------------------------------------- bootstrap


def _percentile_interval(samples: np.ndarray, confidence: float) -> tuple:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return (float(low), float(high))


def bootstrap_ci(
    statistic: Callable,
    *arrays,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    vectorized: bool = False,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(*arrays)``, resampling items.

    Items are the last axis of every array (1-D arrays, or ``raters × units``); the
    same resampled item indices are used for all arrays, so pairs stay paired.
    ``vectorized=True``: ``statistic`` takes arrays with an extra leading resample
    axis and returns one value per resample. Resamples where the statistic is NaN
    (e.g. κ of a constant resample) are left out. Seeded: same seed, same interval.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    arrs = [as_array(a) for a in arrays]
    n = arrs[0].shape[-1]
    if any(a.shape[-1] != n for a in arrs):
        raise ValueError("all arrays need the same number of items (last axis)")
    idx = draw_items(n, n_resamples, np.random.default_rng(seed))
    if vectorized:
        resampled = [np.moveaxis(np.take(a, idx, axis=-1), -2, 0) for a in arrs]
        samples = np.asarray(statistic(*resampled), dtype=float)
    else:
        samples = np.array(
            [statistic(*(np.take(a, row, axis=-1) for a in arrs)) for row in idx],
            dtype=float,
        )
    return _percentile_interval(samples, confidence)


# --------------------------------------------------- summaries with bootstrap intervals


def _distinct_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a units × raters code array (-1 = missing) and their counts.

    Rows are read as numbers in base k + 1 so a 1-D sort does the work
    (`np.unique(axis=0)` sorts structured rows, many times slower).
    """
    base = int(codes.max(initial=-1)) + 2
    n_raters = codes.shape[1]
    if n_raters == 0 or base**n_raters >= 2**62:
        return np.unique(codes, axis=0, return_counts=True)
    powers = base ** np.arange(n_raters, dtype=np.int64)
    numbers, counts = np.unique((codes + 1) @ powers, return_counts=True)
    digits = (numbers[:, None] // powers[None, :]) % base - 1
    return digits.astype(codes.dtype), counts


def _resampled_pattern_counts(
    patterns: np.ndarray, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of `patterns` and their counts in the data plus in each resample.

    Resampling n items with replacement and counting each distinct rating pattern is
    a multinomial draw over the patterns' observed frequencies; drawing that directly
    costs O(resamples × patterns) instead of O(resamples × items).
    """
    unique, counts = _distinct_rows(patterns)
    n = counts.sum()
    # Patterns × (1 + resamples): column 0 is the data, row-contiguous per pattern.
    out = np.zeros((counts.size, 1 + n_resamples))
    out[:, 0] = counts
    if n == 0 or not n_resamples:
        out[:, 1:] = counts[:, None]
        return unique, out
    # Multinomial(n, p) drawn as a chain of binomials, each vectorized over the
    # resamples: pattern c takes Binomial(items left, p_c / probability left).
    rng = np.random.default_rng(seed)
    left = np.full(n_resamples, n, dtype=np.int64)
    p = counts / n
    p_left = 1.0
    for c in range(counts.size - 1):
        share = min(p[c] / p_left, 1.0) if p_left > 0 else 0.0
        drawn = rng.binomial(left, share)
        out[c, 1:] = drawn
        left -= drawn
        p_left -= p[c]
    out[-1, 1:] = left
    return unique, out


def _pair_tables_from_patterns(
    unique: np.ndarray, weights: np.ndarray, i: int, j: int, k: int
) -> np.ndarray:
    """Flat (resamples, k·k) tables of raters i and j; patterns missing either are
    dropped."""
    keep = (unique[:, i] >= 0) & (unique[:, j] >= 0)
    cell = unique[keep, i] * k + unique[keep, j]
    onehot = np.zeros((int(keep.sum()), k * k))
    onehot[np.arange(cell.size), cell] = 1
    return (onehot.T @ weights[keep]).T


def _pair_stats(flat: np.ndarray, coded: Coded, k_within, k_big) -> dict:
    pos = np.arange(coded.k, dtype=float)
    distance = np.abs(coded.values[:, None] - coded.values[None, :])
    return {
        "n": flat.sum(1),
        "exact": cell_share(flat, distance == 0),
        "within_k": cell_share(flat, distance <= k_within),
        "discrepancy": cell_share(flat, distance >= k_big),
        "kappa": kappa_from_tables(flat, 1.0 - np.eye(coded.k)),
        "kappa_linear": kappa_from_tables(flat, np.abs(pos[:, None] - pos[None, :])),
        "kappa_quadratic": kappa_from_tables(flat, (pos[:, None] - pos[None, :]) ** 2),
        "rho": spearman_from_tables(flat, coded.k),
    }


def _summarise(samples: dict, n_resamples: int, confidence: float) -> dict:
    out = {}
    for name, values in samples.items():
        point = values[0]
        out[name] = int(point) if name == "n" else float(point)
        if n_resamples and name != "n":
            out[f"{name}_ci"] = _percentile_interval(values[1:], confidence)
    return out


def paired_agreement(
    a,
    b,
    *,
    labels=None,
    k: float = 1,
    big: float = 2,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict:
    """One row of a judge-vs-judge or judge-vs-human table, for ordinal ratings.

    Returns ``n`` (pairs with both values), ``exact``, ``within_k`` (|Δ| ≤ k),
    ``discrepancy`` (|Δ| ≥ big), ``kappa`` (unweighted), ``kappa_linear``,
    ``kappa_quadratic`` (weights on positions in ``labels``) and ``rho`` (Spearman,
    mid-ranks). With ``n_resamples`` > 0 each also gets ``<name>_ci``: a percentile
    bootstrap interval from paired item resampling (all statistics share the same
    resamples). Pairs with a missing value are dropped before resampling.
    """
    ca, cb, coded = paired_codes(a, b, labels, True)
    unique, weights = _resampled_pattern_counts(
        np.column_stack([ca, cb]), n_resamples, seed
    )
    tables = _pair_tables_from_patterns(unique, weights, 0, 1, coded.k)
    return _summarise(_pair_stats(tables, coded, k, big), n_resamples, confidence)


def panel_agreement(
    ratings,
    *,
    labels=None,
    k: float = 1,
    big: float = 2,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict:
    """One row of a multi-judge consistency table for ``raters × units`` ratings.

    Returns ``n`` (units with every rater present — the others are dropped),
    ``full_agreement`` (all raters identical), ``high_discrepancy`` (max − min ≥ big),
    and the pairwise-averaged (mean over rater pairs) ``exact``, ``within_k``,
    ``kappa``, ``kappa_linear``, ``kappa_quadratic`` and ``rho``. With
    ``n_resamples`` > 0 each gets ``<name>_ci`` from units resampled with
    replacement (the same resamples for every statistic and every pair).
    """
    codes, coded = panel_codes(ratings, labels, ordered=True)
    complete = (codes >= 0).all(0)
    patterns = codes[:, complete].T
    unique, weights = _resampled_pattern_counts(patterns, n_resamples, seed)
    values = coded.values[unique] if unique.size else np.zeros(unique.shape)
    spread = values.max(1) - values.min(1) if unique.size else np.zeros(0)
    total = weights.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = {
            "n": total,
            "full_agreement": (spread == 0).astype(float) @ weights / total,
            "high_discrepancy": (spread >= big).astype(float) @ weights / total,
        }
    n_raters = codes.shape[0]
    pair_samples = [
        _pair_stats(
            _pair_tables_from_patterns(unique, weights, i, j, coded.k), coded, k, big
        )
        for i in range(n_raters)
        for j in range(i + 1, n_raters)
    ]
    for name in (
        "exact",
        "within_k",
        "kappa",
        "kappa_linear",
        "kappa_quadratic",
        "rho",
    ):
        samples[name] = np.mean([p[name] for p in pair_samples], axis=0)
    return _summarise(samples, n_resamples, confidence)
