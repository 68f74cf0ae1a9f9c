"""Time `paper_tables` (every table and figure, zipped) at paper scale on PostgreSQL.

Paper scale: 17 runs × 2,049 items, 3 rubric judges + 1 SV judge on every response
(the leaderboard reads judge-a and the SV judge); 5 of the 17 runs are thinking-mode
twins of 5 models (Table 8, Figure 4); a 198-response calibration sample graded 0–3
and a 200-response SV sample labelled by one expert; 2,049 items × 3 annotators × 2
dimensions of labelling consensus; every item with a final capability and industry
label and a difficulty.

    DATABASE_URL=postgres://…/assay_bench REDIS_URL=redis://…/N SECRET_KEY=x \\
        .venv/bin/python bench/paper_tables_bench.py [--repeat 3]

"cold" clears the cache first (every report read and computed, the bootstrap
included); "warm" reuses cached reports. Target: ≤ 10 s cold.
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

from annotation.paper.collect import paper_set  # noqa: E402
from benchmark.actions import do_create_benchmark  # noqa: E402
from benchmark.models import Benchmark, FinalLabel, Item, Label  # noqa: E402
from judging.evaluation.models import EvaluationRun  # noqa: E402
from tests.annotation.report_factories import (  # noqa: E402
    SV_JUDGE,
    bulk_items,
    human_grades,
    judged_runs,
    labelling_consensus,
)

SLUG = "paper-tables-bench"
ITEMS, RUNS, THINKING_TWINS = 2049, 17, 5
CALIBRATION, SV_SAMPLE = 198, 200


def build() -> Benchmark:
    existing = Benchmark.objects.filter(slug=SLUG).first()
    if existing is not None:
        return existing
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    benchmark = do_create_benchmark(name="Paper tables bench", slug=SLUG)
    items = bulk_items(benchmark, ITEMS, prefix="P")
    models = [f"model-{i:02d}" for i in range(RUNS)]
    runs = judged_runs(benchmark, items, models=models, seed=1)
    EvaluationRun.objects.filter(benchmark=benchmark).update(
        judge_name="judge-a", sv_judge_name=SV_JUDGE
    )
    for i in range(THINKING_TWINS):
        EvaluationRun.objects.filter(
            benchmark=benchmark, model_name=models[RUNS - 1 - i]
        ).update(model_name=models[i], thinking=True)
    expert = get_user_model().objects.get_or_create(username="bench-expert")[0]
    responses, scores, flags = runs[models[0]]
    sample = rng.choice(len(responses), SV_SAMPLE, replace=False)
    grades = scores["judge-a"][sample].astype(float)
    grades[CALIBRATION:] = np.nan  # 198 graded 0–3, all 200 labelled safe/violating
    human_grades(
        benchmark,
        [responses[i] for i in sample],
        {expert: grades},
        flags={expert: flags[sample]},
    )
    labelling_consensus(benchmark, items)
    finals = []
    for code in ("capability", "industry"):
        FinalLabel.objects.filter(
            item__benchmark=benchmark, dimension__code=code
        ).delete()
        labels = list(
            Label.objects.filter(dimension__benchmark=benchmark, dimension__code=code)
        )
        picks = rng.integers(0, len(labels), ITEMS)
        finals += [
            FinalLabel(
                item=item,
                dimension_id=labels[pick].dimension_id,
                label=labels[pick],
                provenance="imported",
            )
            for item, pick in zip(items, picks, strict=True)
        ]
    FinalLabel.objects.bulk_create(finals, batch_size=5000)
    tiers = np.array(["easy", "medium", "hard"])[rng.integers(0, 3, ITEMS)]
    for tier in ("easy", "medium", "hard"):
        Item.objects.filter(
            pk__in=[i.pk for i, t in zip(items, tiers, strict=True) if t == tier]
        ).update(difficulty=tier)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"built in {time.perf_counter() - started:.0f} s", flush=True)
    return benchmark


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Run against PostgreSQL: set DATABASE_URL=postgres://…")
    call_command("migrate", verbosity=0)
    benchmark = build()
    cold, warm, size = [], [], 0
    for _ in range(args.repeat):
        cache.clear()
        started = time.perf_counter()
        archive = paper_set(benchmark, preset="industrybench").archive()
        cold.append(time.perf_counter() - started)
        size = len(archive)
        started = time.perf_counter()
        paper_set(benchmark, preset="industrybench").archive()
        warm.append(time.perf_counter() - started)
    print(
        f"paper_tables, {RUNS} runs × {ITEMS:,} items: cold median "
        f"{statistics.median(cold):.2f} s (best {min(cold):.2f} s), warm median "
        f"{statistics.median(warm):.2f} s; archive {size / 1024:.0f} KiB; "
        f"load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
