"""Semantic dedup at scale: 50,000 candidates × 1,024-dimension embeddings.

    .venv/bin/python bench/dedup_bench.py [--n 50000] [--dim 1024] [--block 512]
        [--sweep]

Random unit vectors (float32) with 5 % planted near-duplicates of earlier rows;
times construction.dedup.greedy_clusters at 0.90 and reports the peak memory it
allocated beyond the embeddings themselves (tracemalloc sees numpy's buffers),
and checks every planted duplicate was found. No database needed. `--sweep`
clusters at the run's threshold and the ten sweep thresholds in the same pass,
as a dedup run does.
"""

import argparse
import pathlib
import resource
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from construction.dedup import (  # noqa: E402
    KEPT,
    SWEEP_THRESHOLDS,
    greedy_clusters_at,
)

PLANTED_SHARE = 0.05


def embeddings(n: int, dim: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    planted = rng.choice(np.arange(1, n), size=int(n * PLANTED_SHARE), replace=False)
    # Each copy's original is an earlier row that is not itself a copy.
    kept = np.setdiff1d(np.arange(n), planted)
    earlier = np.searchsorted(kept, planted)
    originals = kept[(rng.random(planted.size) * earlier).astype(np.int64)]
    # Noise of 0.2 per dimension keeps a copy at cosine ≈ 0.98 to its original.
    vectors[planted] = vectors[originals] + 0.2 * rng.standard_normal(
        (planted.size, dim), dtype=np.float32
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--block", type=int, default=512)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    thresholds = [args.threshold, *(SWEEP_THRESHOLDS if args.sweep else ())]
    vectors, planted = embeddings(args.n, args.dim)
    tracemalloc.start()
    started = time.perf_counter()
    clusters = greedy_clusters_at(
        vectors, thresholds, block=args.block, near=3 if args.sweep else 0
    )[0]
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    found = np.flatnonzero(clusters.twins != KEPT)
    missed = np.setdiff1d(planted, found).size
    print(
        f"n={args.n:,} dim={args.dim} block={args.block} "
        f"threshold={args.threshold}{' + sweep' if args.sweep else ''}: "
        f"{seconds:.1f} s, "
        f"peak {peak / 2**20:.0f} MiB beyond the {vectors.nbytes / 2**20:.0f} MiB "
        f"of embeddings (process max RSS "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB); "
        f"{found.size:,} duplicates, {missed} planted missed"
    )


if __name__ == "__main__":
    main()
