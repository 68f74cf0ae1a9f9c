"""The audit statistics: Wilson intervals against hand-computed values, the
quadratic they solve and scipy on random inputs; precision / recall with reject
as the positive class against a hand count and sklearn; the version comparison."""

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import precision_score, recall_score

from construction.audits.stats import (
    Z95,
    compare,
    item_verdicts,
    measure,
    rate,
    wilson_interval,
)
from construction.sampling import simple_sample


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # By hand: p = 0.8, z²/n = 0.38415; centre 0.71674 ± 0.22658.
        (8, 10, 0.49016, 0.94332),
        # p = 0: centre = half = 0.13877.
        (0, 10, 0.0, 0.27753),
        (10, 10, 0.72247, 1.0),
        (1, 2, 0.09453, 0.90547),
    ],
)
def test_wilson_matches_hand_computed_values(successes, n, low, high):
    got = rate(successes, n)
    assert got.low == pytest.approx(low, abs=5e-5)
    assert got.high == pytest.approx(high, abs=5e-5)
    assert got.value == successes / n


def test_wilson_bounds_solve_the_score_equation_on_random_inputs():
    """The bounds are the roots of (p̂ − p)² = z² p (1 − p) / n, solved here
    as a quadratic in p by numpy, and scipy's Wilson interval agrees."""
    rng = np.random.default_rng(7)
    n = rng.integers(1, 500, size=300)
    successes = rng.integers(0, n + 1)
    low, high = wilson_interval(successes, n)
    z2 = Z95**2
    for k, m, lo, hi in zip(successes, n, low, high, strict=True):
        p = k / m
        roots = np.sort(
            np.roots([1 + z2 / m, -(2 * p + z2 / m), p * p]).real.clip(0, 1)
        )
        assert (lo, hi) == pytest.approx(tuple(roots), abs=1e-9)
        scipy_ci = binomtest(int(k), int(m)).proportion_ci(method="wilson")
        assert (lo, hi) == pytest.approx((scipy_ci.low, scipy_ci.high), abs=1e-9)


def test_no_answers_give_no_rate():
    empty = rate(0, 0)
    assert (empty.value, empty.low, empty.high, empty.n) == (None, None, None, 0)
    low, high = wilson_interval([0, 3], [0, 4])
    assert np.isnan(low[0]) and np.isnan(high[0]) and 0 < low[1] < high[1] < 1


def test_precision_and_recall_treat_reject_as_positive_by_hand():
    stage_rejected = [True, True, True, False, False, False, False, False]
    # agree, agree, disagree | agree, agree, disagree, no verdict, agree
    people = [1, 1, 0, 1, 1, 0, -1, 1]
    result = measure(stage_rejected, people)
    assert result.answered == 7
    # People reject: items 0, 1 (agreed rejects) and 5 (a disagreed pass).
    assert (result.true_reject, result.false_reject) == (2, 1)
    assert (result.missed_reject, result.true_keep) == (1, 3)
    assert (result.precision.successes, result.precision.n) == (2, 3)
    assert (result.recall.successes, result.recall.n) == (2, 3)
    assert (result.agreement.successes, result.agreement.n) == (5, 7)


def test_precision_and_recall_match_sklearn_on_random_inputs():
    rng = np.random.default_rng(3)
    for _ in range(50):
        size = int(rng.integers(5, 200))
        rejected = rng.random(size) < rng.random()
        people = rng.integers(-1, 2, size=size)
        result = measure(rejected, people)
        known = people >= 0
        truth = np.where(people[known] == 1, rejected[known], ~rejected[known])
        predicted = rejected[known]
        if predicted.any():
            assert result.precision.value == pytest.approx(
                precision_score(truth, predicted)
            )
        else:
            assert result.precision.n == 0
        if truth.any():
            assert result.recall.value == pytest.approx(recall_score(truth, predicted))
        else:
            assert result.recall.n == 0
        assert result.agreement.value == pytest.approx(
            (truth == predicted).mean() if known.any() else None
        )


def test_item_verdicts_are_majorities_and_ties_are_left_out():
    # Item 0: two agree; item 1: one each (tie); item 2: one disagrees; item 3: none.
    verdicts = item_verdicts([0, 0, 1, 1, 2], [True, True, True, False, False], 4)
    assert verdicts.tolist() == [1, -1, 0, -1]


def test_samples_are_seeded_and_distinct():
    first = simple_sample(100, 10, seed=5)
    assert first.tolist() == simple_sample(100, 10, seed=5).tolist()
    assert first.tolist() != simple_sample(100, 10, seed=6).tolist()
    assert len(set(first.tolist())) == 10 and first.max() < 100
    assert sorted(simple_sample(4, 10, seed=1).tolist()) == [0, 1, 2, 3]


def test_compare_counts_outcome_pairs_and_lists_differences():
    a = ["pass", "pass", "reject", "reject", "pending"]
    b = ["pass", "reject", "reject", "pass", "pending"]
    result = compare(a, b, ["pass", "reject", "pending"])
    assert result.table.tolist() == [[1, 1, 0], [1, 1, 0], [0, 0, 1]]
    assert (result.agreement.successes, result.agreement.n) == (3, 5)
    assert result.differ.tolist() == [1, 3]
