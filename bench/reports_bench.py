"""Time all five agreement reports from PostgreSQL at paper scale and at 10×.

Paper scale (×1): 3 rubric judges + 1 SV judge × 6 tested models × 2,049 items; a
198-response calibration sample graded by one expert (a second on a third of it);
2,049 items × 3 annotators × 2 label dimensions with stored consensus. ×10 multiplies
items (and the calibration sample) by ten.

    DATABASE_URL=postgres://…/assay_bench REDIS_URL=redis://…/N SECRET_KEY=x \\
        .venv/bin/python bench/reports_bench.py [--scales 1 10] [--repeat 3]

Each scale gets its own benchmark (rebuilt when missing). "cold" clears the cache so
every report is loaded from the database and computed; "warm" is the cached page.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from annotation.agreement.loading import REPORT_TITLES, build_report  # noqa: E402
from benchmark.actions import do_create_benchmark  # noqa: E402
from benchmark.models import Benchmark  # noqa: E402
from tests.annotation.report_factories import (  # noqa: E402
    bulk_items,
    human_grades,
    judged_runs,
    labelling_consensus,
)

PAPER_ITEMS = 2049
PAPER_CALIBRATION = 198
MODELS = tuple(f"model-{i}" for i in range(1, 7))


def build(scale: int) -> Benchmark:
    slug = f"reports-bench-x{scale}"
    existing = Benchmark.objects.filter(slug=slug).first()
    if existing is not None:
        return existing
    started = time.perf_counter()
    benchmark = do_create_benchmark(name=f"Reports bench ×{scale}", slug=slug)
    items = bulk_items(benchmark, PAPER_ITEMS * scale, prefix="B")
    runs = judged_runs(benchmark, items, models=MODELS, seed=scale)
    users = [
        get_user_model().objects.get_or_create(username=f"bench-expert-{i}")[0]
        for i in (1, 2)
    ]
    responses, scores, flags = runs[MODELS[0]]
    rng = np.random.default_rng(scale)
    sample = rng.choice(len(responses), PAPER_CALIBRATION * scale, replace=False)
    first = scores["judge-a"][sample].astype(float)
    second = np.where(np.arange(sample.size) < sample.size // 3, first, np.nan)
    human_grades(
        benchmark,
        [responses[i] for i in sample],
        {users[0]: first, users[1]: second},
        flags={users[0]: flags[sample], users[1]: flags[sample]},
    )
    labelling_consensus(benchmark, items)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # fresh planner statistics after the bulk load
    print(f"built ×{scale} in {time.perf_counter() - started:.0f} s", flush=True)
    return benchmark


def time_reports(benchmark, repeat: int) -> dict:
    cold = {name: [] for name in REPORT_TITLES}
    warm = []
    for _ in range(repeat):
        cache.clear()
        for name in REPORT_TITLES:
            started = time.perf_counter()
            build_report(benchmark, name)
            cold[name].append(time.perf_counter() - started)
        started = time.perf_counter()
        for name in REPORT_TITLES:
            build_report(benchmark, name)
        warm.append(time.perf_counter() - started)
    totals = [sum(cold[n][i] for n in REPORT_TITLES) for i in range(repeat)]
    return {"cold": cold, "totals": totals, "warm": warm}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Run against PostgreSQL: set DATABASE_URL=postgres://…")
    call_command("migrate", verbosity=0)
    for scale in args.scales:
        benchmark = build(scale)
        result = time_reports(benchmark, args.repeat)
        print(f"\n×{scale}: {PAPER_ITEMS * scale:,} items, median of {args.repeat}")
        for name in REPORT_TITLES:
            print(f"  {name:14s} {statistics.median(result['cold'][name]):6.3f} s")
        print(
            f"  all five (cold) median {statistics.median(result['totals']):.3f} s, "
            f"best {min(result['totals']):.3f} s; "
            f"cached {statistics.median(result['warm']) * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
