"""The one item resampler every bootstrap in Assay draws from (pure numpy).

A bootstrap replicate draws n items with replacement. `draw_items` gives the drawn
indices (statistics that index arrays: agreement_intervals' `bootstrap_ci`);
`resample_counts` gives how often each item was drawn (statistics that are sums,
computed as one matrix product: the leaderboard's paired bootstrap and binary
accuracy). Both consume the generator the same way, so for one seed a count row is
exactly the bincount of the same index row.
"""

from __future__ import annotations

import numpy as np


def draw_items(n_items: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(n_resamples × n_items) item indices drawn uniformly with replacement."""
    return rng.integers(0, n_items, size=(n_resamples, n_items))


def resample_counts(
    n_items: int, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """(n_resamples × n_items) multinomial counts: how often each item is drawn when
    n_items items are drawn with replacement. Rows sum to n_items.

    Built from `draw_items` and one bincount (numpy's multinomial sampler is ~4×
    slower for thousands of categories); the distribution is the same.
    """
    draws = draw_items(n_items, n_resamples, rng)
    draws += (np.arange(n_resamples) * n_items)[:, None]
    counts = np.bincount(draws.ravel(), minlength=n_resamples * n_items)
    return counts.reshape(n_resamples, n_items)
