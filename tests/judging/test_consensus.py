"""judging.reporting.consensus against a brute-force reference on random inputs."""

from collections import Counter

import numpy as np
import pytest

from judging.reporting.consensus import (
    FULL,
    MAJORITY,
    MISSING,
    NONE,
    consensus,
    outcome_counts,
)


def reference(row, k):
    votes = Counter(value for value in row if value != MISSING)
    if not votes:
        return NONE, MISSING
    label, count = votes.most_common(1)[0]
    if count == k:
        return FULL, label
    if 2 * count > k:
        return MAJORITY, label
    return NONE, MISSING


def test_the_three_outcomes():
    outcome, adopted, votes = consensus(
        [[3, 3, 3], [3, 5, 3], [1, 2, 4], [2, MISSING, 2], [MISSING, MISSING, 7]]
    )
    assert outcome.tolist() == [FULL, MAJORITY, NONE, MAJORITY, NONE]
    assert adopted.tolist() == [3, 3, MISSING, 2, MISSING]
    assert votes.tolist() == [3, 2, 1, 2, 1]


def test_majority_is_strictly_more_than_half():
    # Two of four is a tie, not a majority; three of four is.
    outcome, adopted, _ = consensus([[1, 1, 2, 2], [1, 1, 1, 2], [1, 1, 2, 3]])
    assert outcome.tolist() == [NONE, MAJORITY, NONE]
    assert adopted.tolist() == [MISSING, 1, MISSING]


def test_two_annotators_agree_or_not():
    outcome, _, _ = consensus([[1, 1], [1, 2], [1, MISSING]])
    assert outcome.tolist() == [FULL, NONE, NONE]


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_matches_brute_force_on_random_labels(k):
    rng = np.random.default_rng(k)
    labels = rng.integers(-1, 4, size=(500, k))
    outcome, adopted, _ = consensus(labels)
    expected = [reference(row, k) for row in labels.tolist()]
    assert outcome.tolist() == [e[0] for e in expected]
    assert adopted.tolist() == [e[1] for e in expected]


def test_outcome_counts():
    outcome, _, _ = consensus([[0, 0, 0], [0, 1, 0], [0, 1, 2], [2, 2, 2]])
    assert outcome_counts(outcome) == {"full": 2, "majority": 1, "none": 1}


def test_rejects_a_flat_array():
    with pytest.raises(ValueError):
        consensus([1, 2, 3])


@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_agreement_api_classifies_by_the_same_rule(k):
    """consensus_classes (raters × units, None missing) is this module's rule, with
    units of fewer than two ratings left unclassified."""
    from judging.reporting.agreement import consensus_classes

    rng = np.random.default_rng(k)
    labels = rng.integers(-1, 3, size=(400, k))
    names = np.asarray(["full", "majority", "none"], dtype=object)
    expected = names[[reference(row, k)[0] for row in labels]]
    expected[(labels != MISSING).sum(1) < 2] = ""
    ratings = [[None if v == MISSING else int(v) for v in col] for col in labels.T]
    assert consensus_classes(ratings).tolist() == expected.tolist()
