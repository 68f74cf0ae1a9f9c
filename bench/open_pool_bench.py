"""Time `construction.release.do_open_pool` over a verified pool of --candidates
(half standards with an imported industry label, half product records), in a fresh
benchmark of the database DATABASE_URL names (migrated first):

    DATABASE_URL=postgres://… SECRET_KEY=bench DEBUG=0 \\
        .venv/bin/python bench/open_pool_bench.py --candidates 2000
"""

import argparse
import os
import pathlib
import sys
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from benchmark.actions import do_create_benchmark  # noqa: E402
from construction.models import Candidate, Source, StageDecision  # noqa: E402
from construction.release import do_open_pool  # noqa: E402
from construction.sources import content_hash  # noqa: E402


def verified_pool(benchmark, count: int):
    sources = []
    for n, kind in enumerate(("gbt_standard", "product_record")):
        text = f"来源 {n} {uuid.uuid4().hex}"
        sources.append(
            Source.objects.create(
                benchmark=benchmark,
                kind=kind,
                reference=f"ref {n}",
                text=text,
                fields={"industry": "electrical_power"} if n == 0 else {},
                content_hash=content_hash(kind, text),
            )
        )
    candidates = Candidate.objects.bulk_create(
        Candidate(
            source=sources[i % 2],
            question=f"问题 {i}：额定电压是多少？",
            reference_answer=f"答案 {i}：250 V。",
            knowledge_text=sources[i % 2].text,
        )
        for i in range(count)
    )
    StageDecision.objects.bulk_create(
        StageDecision(
            candidate=candidate,
            stage=stage,
            outcome="pass",
            prompt_version=f"{stage}-bench v1",
        )
        for candidate in candidates
        for stage in ("generation", "dedup", "quality")
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=2000)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    slug = f"open-pool-{uuid.uuid4().hex[:8]}"
    benchmark = do_create_benchmark(name=slug, slug=slug)
    verified_pool(benchmark, args.candidates)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    opened = do_open_pool(benchmark)
    seconds = time.perf_counter() - start
    again = do_open_pool(benchmark)
    print(
        f"opened {opened} in {seconds:.2f} s ({seconds / opened * 1000:.2f} ms each), "
        f"again {again}; load average {load:.1f}"
    )


if __name__ == "__main__":
    main()
