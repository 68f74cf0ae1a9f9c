"""REST API at scale (#16): paging through 100,000 items (target: p95 ≤ 100 ms per
page of 100) and a bulk call of 10,000 items (target: ≤ 5 s).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/assay_api_bench \\
      SECRET_KEY=bench ALLOWED_HOSTS=testserver DEBUG=0 \\
      .venv/bin/python bench/api_bench.py [--items 100000] [--bulk 10000]

Creates the database if needed, migrates it and fills a benchmark `bench-api` once
with paper-like synthetic items (bench/import_bench.py's: zh/en/ru/vi renderings,
capability and industry labels), imported by COPY. Every request goes through
Django's WSGI handler in this process (Django's test client: middleware, token
check, django-ninja, JSON) with a personal API token, no network and no gunicorn.

Pages: every page of the benchmark with `limit=100`, then of two filtered views;
the wall time of each request (p50/p95/p99/max), the p95 of the CPU time this
process spent on it (what a request costs, whatever else the machine runs), and
the queries of one page. Bulk:
a new benchmark, `--bulk` items created in one call, then the same items sent
again with `update` and every English answer changed (a new rendering version
each); wall time of each call and the size of its body.
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

from browse_bench import setup_database  # noqa: E402
from import_bench import generic_item, synthetic_rows  # noqa: E402

SLUG = "bench-api"
BULK_SLUG = "bench-api-bulk"
VIEWS = [
    ("every item", {}),
    ("capability = fault diagnosis", {"label": "capability:fault_diagnosis"}),
    (
        "hard, machinery & hardware",
        {"difficulty": "hard", "label": "industry:machinery_hardware"},
    ),
]


def drop(benchmark) -> None:
    from benchmark.models import FinalLabel

    # Final labels protect their labels, which go with the benchmark's taxonomy:
    # they must go first.
    FinalLabel.objects.filter(item__benchmark=benchmark).delete()
    benchmark.delete()


def populate(count: int) -> None:
    from django.db import connection

    from benchmark.importing import do_import_items
    from benchmark.models import Benchmark

    benchmark = Benchmark.objects.filter(slug=SLUG).first()
    if benchmark and benchmark.items.count() == count:
        return
    if benchmark:
        drop(benchmark)
    started = time.perf_counter()
    lines = (
        json.dumps(generic_item(row), ensure_ascii=False).encode()
        for row in synthetic_rows(count)
    )
    do_import_items(lines, slug=SLUG, name="API bench")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"populated {count:,} items in {time.perf_counter() - started:.0f} s\n")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def page_through(client, params: dict) -> tuple[list[float], list[float], int]:
    """Wall and CPU seconds (this process) per request, and the items seen."""
    url = f"/api/v1/benchmarks/{SLUG}/items"
    walls, cpus, seen, cursor = [], [], 0, None
    while True:
        query = {**params, "limit": 100, **({"cursor": cursor} if cursor else {})}
        cpu, started = time.process_time(), time.perf_counter()
        response = client.get(url, query)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
        assert response.status_code == 200, response.content[:300]
        body = response.json()
        seen += len(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return walls, cpus, seen


def queries_per_page(client, params: dict) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        client.get(f"/api/v1/benchmarks/{SLUG}/items", {**params, "limit": 100})
    return len(captured)


def pages(client) -> None:
    print(
        "| view, limit=100 | items | pages | wall p50 ms | wall p95 ms | wall p99 ms "
        "| wall max ms | CPU p95 ms | queries/page |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, params in VIEWS:
        walls, cpus, seen = page_through(client, params)
        ms = [1000 * t for t in walls]
        print(
            f"| {name} | {seen:,} | {len(ms):,} | {statistics.median(ms):.1f} "
            f"| **{percentile(ms, 0.95):.1f}** | {percentile(ms, 0.99):.1f} "
            f"| {max(ms):.1f} | {1000 * percentile(cpus, 0.95):.1f} "
            f"| {queries_per_page(client, params)} |",
            flush=True,
        )


def bulk(client, count: int) -> None:
    from benchmark.actions import do_create_benchmark
    from benchmark.models import Benchmark

    old = Benchmark.objects.filter(slug=BULK_SLUG).first()
    if old:
        drop(old)
    benchmark = do_create_benchmark(name="API bulk bench", slug=BULK_SLUG)
    url = f"/api/v1/benchmarks/{benchmark.slug}/items/bulk"
    items = [generic_item(row) for row in synthetic_rows(count, seed=1)]
    print("| call | items | body | answer | wall |")
    print("|---|---|---|---|---|")
    for name, update in (("create", False), ("update, every en answer", True)):
        if update:
            for item in items:
                item["renderings"]["en"]["answer"] += " (revised)"
        body = json.dumps({"update": update, "items": items}, ensure_ascii=False)
        started = time.perf_counter()
        response = client.post(url, body, content_type="application/json")
        seconds = time.perf_counter() - started
        assert response.status_code == 200, response.content[:500]
        summary = response.json()
        print(
            f"| {name} | {count:,} | {len(body.encode()) / 2**20:.1f} MB "
            f"| {summary['created']:,} created, {summary['updated']:,} updated "
            f"| **{seconds:.2f} s** |",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--bulk", type=int, default=10_000)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        print("Set DATABASE_URL to a PostgreSQL database for this benchmark.")
        return 2
    setup_database(url)

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from api.actions import do_create_token
    from benchmark.actions import do_create_user

    if settings.DEBUG:
        print("Run with DEBUG=0: with DEBUG on, Django keeps every query.")
        return 2
    call_command("migrate", verbosity=0)
    populate(args.items)
    manager = do_create_user("bench-manager", "bench-password", "manager")
    _, token = do_create_token(manager, "api bench")
    client = Client(headers={"Authorization": f"Bearer {token}"})
    page_through(client, {"label": "capability:fault_diagnosis"})  # warm up
    print(f"load average {os.getloadavg()[0]:.1f}\n")
    pages(client)
    print()
    bulk(client, args.bulk)
    print(f"\nload average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
