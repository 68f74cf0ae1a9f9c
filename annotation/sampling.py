"""Stratified random sampling for calibration campaigns (pure: no ORM)."""

from collections.abc import Hashable, Sequence

import numpy as np


def proportional_allocation(stratum_sizes: Sequence[int], size: int) -> np.ndarray:
    """How many to draw from each stratum: proportional to its size, rounded by the
    largest-remainder method so the parts add up to `size` exactly."""
    sizes = np.asarray(stratum_sizes, dtype=np.int64)
    total = int(sizes.sum())
    if size >= total:
        return sizes.copy()
    quota = sizes * size / total
    allocation = np.floor(quota).astype(np.int64)
    short = size - int(allocation.sum())
    # Ties in the remainder go to the earlier stratum (stable sort) so the draw
    # does not depend on anything but the inputs.
    order = np.argsort(-(quota - allocation), kind="stable")
    allocation[order[:short]] += 1
    return allocation


def stratified_sample(strata: Sequence[Hashable], size: int, seed: int) -> list[int]:
    """Indices of a stratified random sample of `size` from candidates whose stratum
    keys are `strata` (e.g. (difficulty, capability) per response).

    The same candidates in the same order, size and seed give the same sample.
    The indices come back shuffled, so a queue in this order mixes the strata.
    """
    if size < 1:
        raise ValueError("The sample size must be at least 1.")
    keys = sorted(set(strata), key=repr)
    members = {key: [] for key in keys}
    for index, key in enumerate(strata):
        members[key].append(index)
    allocation = proportional_allocation([len(members[key]) for key in keys], size)
    rng = np.random.default_rng(seed)
    drawn: list[int] = []
    for key, count in zip(keys, allocation, strict=True):
        pool = np.asarray(members[key])
        drawn.extend(int(i) for i in rng.choice(pool, size=int(count), replace=False))
    return [drawn[i] for i in rng.permutation(len(drawn))]
