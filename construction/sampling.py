"""Release sampling (pure): a seeded sample stratified over a label, so the same
pool, size and seed always give the same sample."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def allocate(sizes: Sequence[int], n: int) -> np.ndarray:
    """How many to take from each stratum: proportional to its size, rounded by
    largest remainder (ties to the earlier stratum), never more than it holds."""
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    n = min(n, total)
    if n == 0:
        return np.zeros_like(sizes)
    exact = sizes * n / total
    taken = np.floor(exact).astype(np.int64)
    # A stable sort keeps the earlier stratum first among equal remainders.
    order = np.argsort(-(exact - taken), kind="stable")
    taken[order[: n - int(taken.sum())]] += 1
    return taken


def stratified_sample(strata: Sequence[str], n: int, seed: int) -> np.ndarray:
    """Indices into `strata` (one stratum name per pool member, in the pool's
    stable order), sorted: `n` of them, spread over the strata in proportion."""
    names, codes = np.unique(np.asarray(strata, dtype=object), return_inverse=True)
    members = [np.flatnonzero(codes == code) for code in range(len(names))]
    counts = allocate([len(m) for m in members], n)
    rng = np.random.default_rng(seed)
    chosen = [
        rng.permutation(group)[:count]
        for group, count in zip(members, counts, strict=True)
    ]
    return np.sort(np.concatenate(chosen)) if chosen else np.array([], dtype=int)


def simple_sample(population: int, size: int, seed: int) -> np.ndarray:
    """A seeded simple random sample of min(size, population) indices into a
    population kept in a stable order, in the random order they were drawn (the
    order people see an audit in). The same population, size and seed always
    give the same sample."""
    rng = np.random.default_rng(seed)
    return rng.permutation(population)[: min(size, population)]
