"""How well an automated stage agrees with people (pure: numpy, no ORM).

A stage's job is to catch bad candidates, so "reject" is the positive class:

    precision = of the candidates the stage rejected, the share people say
                should be rejected;
    recall    = of the candidates people say should be rejected, the share the
                stage rejected.

A reviewer agrees or disagrees with the automated verdict; disagreeing with a
pass (or a refine) says the candidate should have been rejected, disagreeing
with a reject says it should not. Every rate comes with its n and a Wilson score
interval (95 %), which stays inside [0, 1] and is honest at small n and at rates
near 0 or 1, where the normal approximation is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile


@dataclass(frozen=True)
class Rate:
    """successes / n with its Wilson interval; value and bounds None when n = 0."""

    successes: int
    n: int
    low: float | None
    high: float | None

    @property
    def value(self) -> float | None:
        return self.successes / self.n if self.n else None


def wilson_interval(successes, n, z: float = Z95):
    """Wilson score interval for successes out of n, elementwise over arrays:
    (low, high), NaN where n = 0.

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) · √(p(1 − p)/n + z²/4n²)
    """
    successes = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = successes / n
        z2n = z * z / n
        centre = (p + z2n / 2) / (1 + z2n)
        half = z / (1 + z2n) * np.sqrt(p * (1 - p) / n + z2n / (4 * n))
        low = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
        high = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    return low, high


def rate(successes: int, n: int) -> Rate:
    if n == 0:
        return Rate(0, 0, None, None)
    low, high = wilson_interval(successes, n)
    return Rate(int(successes), int(n), float(low), float(high))


def item_verdicts(
    item_index: Sequence[int], agrees: Sequence[bool], items: int
) -> np.ndarray:
    """People's verdict per audit item from their answers (each reviewer's
    latest, one entry per reviewer and item): 1 agree, 0 disagree by majority,
    -1 for an item nobody answered or a tie (left out of the measures)."""
    index = np.asarray(item_index, dtype=np.int64)
    agree = np.asarray(agrees, dtype=bool)
    yes = np.bincount(index[agree], minlength=items)
    no = np.bincount(index[~agree], minlength=items)
    verdict = np.full(items, -1, dtype=np.int64)
    verdict[yes > no] = 1
    verdict[no > yes] = 0
    return verdict


@dataclass(frozen=True)
class StageMeasure:
    """A stage against people on the answered items of one audit."""

    answered: int  # items with a verdict from people (no tie)
    agreement: Rate  # people agree with the stage
    precision: Rate  # people's rejects among the stage's rejects
    recall: Rate  # the stage's rejects among people's rejects
    true_reject: int
    false_reject: int  # the stage rejected, people would keep it
    missed_reject: int  # the stage kept it, people would reject it
    true_keep: int


def measure(stage_rejected: Sequence[bool], people_agree: Sequence[int]):
    """`stage_rejected[i]`: the stage's outcome on item i was reject;
    `people_agree[i]`: 1 agree, 0 disagree, -1 no verdict (left out)."""
    rejected = np.asarray(stage_rejected, dtype=bool)
    verdict = np.asarray(people_agree, dtype=np.int64)
    known = verdict >= 0
    rejected, agree = rejected[known], verdict[known] == 1
    people_reject = np.where(agree, rejected, ~rejected)
    true_reject = int(np.count_nonzero(rejected & people_reject))
    false_reject = int(np.count_nonzero(rejected & ~people_reject))
    missed_reject = int(np.count_nonzero(~rejected & people_reject))
    true_keep = int(np.count_nonzero(~rejected & ~people_reject))
    return StageMeasure(
        answered=int(known.sum()),
        agreement=rate(int(agree.sum()), int(known.sum())),
        precision=rate(true_reject, true_reject + false_reject),
        recall=rate(true_reject, true_reject + missed_reject),
        true_reject=true_reject,
        false_reject=false_reject,
        missed_reject=missed_reject,
        true_keep=true_keep,
    )


@dataclass(frozen=True)
class Comparison:
    """Two prompt versions' outcomes on the candidates both decided."""

    outcomes: list[str]  # the table's rows (version A) and columns (version B)
    table: np.ndarray  # table[i, j]: A said outcomes[i], B said outcomes[j]
    agreement: Rate
    differ: np.ndarray  # indices of the candidates where they differ


def compare(a: Sequence[str], b: Sequence[str], outcomes: Sequence[str]):
    """Outcome × outcome table of two versions' decisions on the same candidates
    (`a[i]`, `b[i]` for candidate i), their agreement and where they differ."""
    codes = {outcome: code for code, outcome in enumerate(outcomes)}
    left = np.array([codes[o] for o in a], dtype=np.int64)
    right = np.array([codes[o] for o in b], dtype=np.int64)
    size = len(outcomes)
    table = np.bincount(left * size + right, minlength=size * size).reshape(size, size)
    same = left == right
    return Comparison(
        outcomes=list(outcomes),
        table=table,
        agreement=rate(int(same.sum()), int(same.size)),
        differ=np.flatnonzero(~same),
    )
