"""Stratified, seeded release sampling (pure)."""

import numpy as np

from construction.sampling import allocate, stratified_sample


def test_allocation_is_proportional_and_exact():
    assert allocate([50, 30, 20], 10).tolist() == [5, 3, 2]
    assert allocate([1, 1, 1], 2).tolist() == [1, 1, 0]
    assert allocate([3, 2], 10).tolist() == [3, 2]
    assert allocate([7, 5, 1], 6).sum() == 6


def test_sample_is_reproducible_and_stratified():
    strata = ["a"] * 60 + ["b"] * 30 + ["c"] * 10
    first = stratified_sample(strata, 20, seed=7)
    assert np.array_equal(first, stratified_sample(strata, 20, seed=7))
    assert not np.array_equal(first, stratified_sample(strata, 20, seed=8))
    picked = np.array(strata, dtype=object)[first]
    assert [np.count_nonzero(picked == s) for s in "abc"] == [12, 6, 2]
    assert len(set(first.tolist())) == 20


def test_asking_for_more_than_the_pool_takes_it_all():
    assert stratified_sample(["x", "y"], 5, seed=0).tolist() == [0, 1]
    assert stratified_sample([], 3, seed=0).tolist() == []
