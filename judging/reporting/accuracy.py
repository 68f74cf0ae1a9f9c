"""Accuracy of binary runs over k trials, with the trial spread and a bootstrap CI
(pure: numpy arrays in, numbers out).

A binary run scores each item in each trial 1 (correct), 0 (not correct) or not
at all (NaN). Per trial, the accuracy is the share correct among the scored
answers; the run's accuracy is the mean over its trials × 100 (LPFQA reports the
mean of 3 trials), and the spread is the lowest and highest trial and their
standard deviation.

What is scored decides the definition, and the caller chooses it: study 002 §2.3
divides by *all tested questions*, so the leaderboard passes
`BinaryMatrix.tested_score()` (flagged answers and provider refusals are 0, only
pending, waived and unasked answers NaN); the older "accuracy of scored answers"
passes `BinaryMatrix.score` (flagged answers NaN) and is shown only as a named
secondary column.

The 95% CI resamples items, not answers: the same items in every trial and, for a
paired comparison, in every run (percentile bootstrap, judging.reporting.
resampling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judging.reporting.resampling import resample_counts

RESAMPLE_CHUNK = 200


@dataclass(frozen=True)
class TrialAccuracy:
    """One run's accuracy in percent; NaN where nothing was scored."""

    accuracy: float
    per_trial: np.ndarray  # percent per trial, NaN for a trial with nothing scored
    scored: int  # scored answers over all trials
    items: int  # items scored in at least one trial

    @property
    def low(self) -> float:
        return _nan_reduce(np.nanmin, self.per_trial)

    @property
    def high(self) -> float:
        return _nan_reduce(np.nanmax, self.per_trial)

    @property
    def sd(self) -> float:
        """Standard deviation across trials (n − 1); NaN with fewer than two."""
        values = self.per_trial[~np.isnan(self.per_trial)]
        return float(np.std(values, ddof=1)) if values.size > 1 else float("nan")

    @property
    def trials(self) -> int:
        return int(np.sum(~np.isnan(self.per_trial)))


def _nan_reduce(reduce, values: np.ndarray) -> float:
    return float(reduce(values)) if np.any(~np.isnan(values)) else float("nan")


def _statistic(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Mean over trials of correct / scored, along the last axis, in percent;
    trials with nothing scored are left out; NaN when none is left."""
    with np.errstate(invalid="ignore", divide="ignore"):
        per_trial = np.where(count > 0, total / count, np.nan)
        kept = count > 0
        summed = np.where(kept, per_trial, 0.0).sum(axis=-1)
        n = kept.sum(axis=-1)
        return np.where(n > 0, 100 * summed / np.maximum(n, 1), np.nan)


def trial_accuracy(scores: np.ndarray) -> TrialAccuracy:
    """`scores`: items × trials of 1, 0 or NaN (not scored)."""
    scores = np.asarray(scores, dtype=float).reshape(len(scores), -1)
    scored = ~np.isnan(scores)
    total = np.where(scored, scores, 0.0).sum(axis=0)
    count = scored.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_trial = np.where(count > 0, 100 * total / np.maximum(count, 1), np.nan)
    return TrialAccuracy(
        accuracy=float(_statistic(total, count)),
        per_trial=per_trial,
        scored=int(count.sum()),
        items=int(scored.any(axis=1).sum()),
    )


@dataclass(frozen=True)
class AccuracyInterval:
    lower: np.ndarray  # percent, per run
    upper: np.ndarray

    @property
    def half_widths(self) -> np.ndarray:
        return (self.upper - self.lower) / 2


def bootstrap_accuracy(
    scores: np.ndarray, *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> AccuracyInterval:
    """Percentile CIs of each run's accuracy; `scores` is runs × items × trials.

    Every run sees the same item resamples (drawn in chunks, so memory stays flat
    at study scale); an item drawn twice counts twice in every trial.
    """
    scores = np.asarray(scores, dtype=float)
    runs, n_items, _ = scores.shape
    if n_items == 0:
        empty = np.full(runs, np.nan)
        return AccuracyInterval(empty, empty.copy())
    trials = scores.shape[2]
    # items × (runs · trials), so each chunk is two matrix products.
    scored = (~np.isnan(scores)).astype(float).transpose(1, 0, 2).reshape(n_items, -1)
    values = np.nan_to_num(scores, nan=0.0).transpose(1, 0, 2).reshape(n_items, -1)
    rng = np.random.default_rng(seed)
    stats = np.empty((resamples, runs))
    for start in range(0, resamples, RESAMPLE_CHUNK):
        size = min(RESAMPLE_CHUNK, resamples - start)
        weights = resample_counts(n_items, size, rng).astype(float)
        # resamples × runs × trials: weighted correct and weighted scored.
        total = (weights @ values).reshape(size, runs, trials)
        count = (weights @ scored).reshape(size, runs, trials)
        stats[start : start + size] = _statistic(total, count)
    alpha = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        lower, upper = np.nanquantile(stats, [alpha, 1 - alpha], axis=0)
    return AccuracyInterval(lower, upper)
