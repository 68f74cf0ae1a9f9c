from collections import Counter

import numpy as np
import pytest

from annotation.sampling import proportional_allocation, stratified_sample


@pytest.mark.smoke
def test_allocation_adds_up_and_is_proportional():
    rng = np.random.default_rng(3)
    for _ in range(200):
        sizes = rng.integers(0, 60, size=rng.integers(1, 12))
        if sizes.sum() == 0:
            continue
        size = int(rng.integers(1, sizes.sum() + 1))
        allocation = proportional_allocation(sizes, size)
        assert allocation.sum() == size
        assert np.all(allocation <= sizes)
        quota = sizes * size / sizes.sum()
        assert np.all(np.abs(allocation - quota) < 1)


@pytest.mark.smoke
def test_sample_is_reproducible_stratified_and_without_repeats():
    strata = [(d, c) for d in ("easy", "medium", "hard") for c in range(7)] * 20
    first = stratified_sample(strata, 198, seed=42)
    assert first == stratified_sample(strata, 198, seed=42)
    assert first != stratified_sample(strata, 198, seed=43)
    assert len(first) == len(set(first)) == 198
    counts = Counter(strata[i] for i in first)
    # 21 equal strata of 20: 198 = 21 * 9 + 9, so every stratum gets 9 or 10.
    assert set(counts.values()) <= {9, 10}
    assert len(counts) == 21


@pytest.mark.smoke
def test_sample_larger_than_population_takes_everyone():
    assert sorted(stratified_sample(["a", "a", "b"], 10, seed=1)) == [0, 1, 2]
    with pytest.raises(ValueError):
        stratified_sample(["a"], 0, seed=1)
