"""Paired bootstrap at paper scale: 17 runs × 2,049 items, B = 10,000 (target ≤ 0.5 s).

    .venv/bin/python bench/bootstrap_bench.py [--repeat 5]

Times judging.reporting.scoring.paired_bootstrap (counts-matrix formulation: shared
item resamples, means = counts @ scores.T / n, percentile CIs for every run and every
pair) against a per-replicate loop doing the same work, on synthetic final scores.
No database or Django settings needed.
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from judging.reporting.scoring import paired_bootstrap  # noqa: E402

RUNS, ITEMS, RESAMPLES = 17, 2049, 10_000


def synthetic_scores(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.45, 0.75, RUNS)[:, None]
    p3 = np.clip(skill + rng.normal(0, 0.1, (1, ITEMS)), 0.05, 0.95)
    draw = rng.random((RUNS, ITEMS))
    return np.select([draw < p3, draw < p3 + 0.15, draw < p3 + 0.25], [3, 2, 1], 0)


def per_replicate_loop(scores: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    boot = np.empty((RESAMPLES, scores.shape[0]))
    for b in range(RESAMPLES):
        boot[b] = scores[:, rng.integers(0, ITEMS, ITEMS)].mean(axis=1)
    return np.quantile(boot, [0.025, 0.975], axis=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-loop", action="store_true")
    args = parser.parse_args()
    scores = synthetic_scores().astype(float)
    paired_bootstrap(scores, n_resamples=1000)  # warm up BLAS threads and allocators
    timings = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = paired_bootstrap(scores, n_resamples=RESAMPLES, seed=0)
        timings.append(time.perf_counter() - start)
    print(
        f"runs={RUNS} items={ITEMS} B={RESAMPLES};"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"paired_bootstrap (counts @ scores.T): median {statistics.median(timings):.3f}"
        f" s, best {min(timings):.3f} s over {args.repeat} runs"
    )
    print(
        f"half-widths {result.half_widths.min():.4f}–{result.half_widths.max():.4f};"
        f" significant pairs {int(np.triu(result.significant, 1).sum())}"
        f" of {RUNS * (RUNS - 1) // 2}"
    )
    if not args.skip_loop:
        start = time.perf_counter()
        per_replicate_loop(scores, seed=0)
        print(f"per-replicate loop (CIs only): {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main()
