"""Evaluation pipeline throughput against the OpenAI-protocol stub, through real
Celery workers.

    DATABASE_URL=postgres://… REDIS_URL=redis://… CELERY_BROKER_URL=redis://… \
    .venv/bin/python bench/pipeline_bench.py [--items 2049] [--workers 2] \
        [--full-stub]

The stub (bench/lean_stub.py; the tests' threaded one with --full-stub) runs in its
own process with 300 ms latency and at most 64 requests in flight (429 beyond). One
evaluation run over --items items is queued as in production (`evaluate_run` cuts
it into chunks; each `evaluate_chunk` runs answer → judge → SV for its own items)
and run by a Celery worker with --workers processes, so stages of different chunks
overlap. The tested, judge and SV roles use one endpoint allowing 64 concurrent
calls: its limit is shared by both processes through Redis, as the stub's cap is
shared by every call to it. Reports calls per second across the stages, 429s seen,
duplicated requests (identical request bodies answered twice, which must be 0) and
CPU per call of the workers and the stub. Target: ≥ 192 calls/s for 2,049 items.
"""

import argparse
import json
import os
import pathlib
import resource
import signal
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")
os.environ.setdefault("BENCH_STUB_API_KEY", "bench-key")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.db.models import Count  # noqa: E402

from bench import lean_stub  # noqa: E402
from bench.labelling_bench import (  # noqa: E402
    combined_stub_stats,
    cpu_seconds,
    process_tree,
    start_worker,
)
from benchmark.actions import do_create_benchmark  # noqa: E402
from benchmark.models import Benchmark, Item, Rendering  # noqa: E402
from judging.evaluation.actions import do_start_evaluation  # noqa: E402
from judging.evaluation.models import EvaluationRun  # noqa: E402
from judging.evaluation.pipeline import run_scope  # noqa: E402
from judging.llm.models import Endpoint, LLMCall  # noqa: E402
from tests import openai_stub  # noqa: E402
from tests.judging.evaluation_stub import clean_responder  # noqa: E402
from tests.judging.labelling_fixtures import clear_broker  # noqa: E402

SLUG = "bench-pipeline"


@transaction.atomic
def bench_benchmark(items: int) -> Benchmark:
    benchmark = Benchmark.objects.filter(slug=SLUG).first()
    if benchmark is None:
        benchmark = do_create_benchmark(name="Pipeline bench", slug=SLUG)
    have = benchmark.items.count()
    made = Item.objects.bulk_create(
        Item(benchmark=benchmark, external_id=f"P{i:05d}") for i in range(have, items)
    )
    Rendering.objects.bulk_create(
        Rendering(
            item=item,
            language="zh",
            question=f"Question {int(item.external_id[1:])}?",
            answer="Reference.",
            origin="source",
        )
        for item in made
    )
    return benchmark


def endpoint(name: str, base_url: str) -> Endpoint:
    found, _ = Endpoint.objects.update_or_create(
        name=name,
        defaults={
            "base_url": base_url,
            "model": f"{name}-model",
            "api_key_env": "BENCH_STUB_API_KEY",
            "max_concurrency": 64,
            "rpm_limit": None,
        },
    )
    return found


def stub_counters(base_url: str) -> dict:
    with urllib.request.urlopen(base_url[: -len("/v1")] + "/stub/stats") as reply:
        return json.load(reply)


def children_cpu() -> float:
    """CPU seconds of this process's waited-for children (the stopped worker)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2049)
    parser.add_argument(
        "--full-stub",
        action="store_true",
        help="the tests' threaded stub instead of bench/lean_stub.py",
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--providers",
        type=int,
        choices=(1, 3),
        default=1,
        help="1: tested model, judge and SV judge share one stub (64 in flight); 3: "
        "each has a stub (a provider) of its own with 64 in flight",
    )
    args = parser.parse_args()
    if not settings.REDIS_URL or not settings.CELERY_BROKER_URL.startswith("redis"):
        sys.exit("Set REDIS_URL and CELERY_BROKER_URL (redis://) for the bench.")
    call_command("migrate", verbosity=0)
    benchmark = bench_benchmark(args.items)
    stub = openai_stub if args.full_stub else lean_stub
    stubs = [
        stub.start_in_subprocess(
            latency=0.3,
            max_in_flight=64,
            responder=clean_responder,
            api_key="bench-key",
        )
        for _ in range(args.providers)
    ]
    urls = [base_url for base_url, _ in stubs]
    # Messages left by tests or a killed worker would reach the bench's worker.
    clear_broker()
    children_before = children_cpu()
    worker = start_worker(args.workers, "pipeline-bench")
    try:
        time.sleep(3)  # let the worker come up before the clock starts
        workers_before = cpu_seconds(process_tree(worker.pid))
        if args.providers == 1:
            tested = judge = sv_judge = endpoint("bench-shared", urls[0])
        else:
            tested, judge, sv_judge = (
                endpoint(f"bench-{role}", url)
                for role, url in zip(("tested", "judge", "sv"), urls, strict=True)
            )
        start = time.perf_counter()
        run = do_start_evaluation(
            benchmark,
            tested=tested,
            judge=judge,
            sv_judge=sv_judge,
            language="zh",
            limit=args.items,
        )
        finished = {EvaluationRun.Status.COMPLETE, EvaluationRun.Status.ATTENTION}
        in_flight = []
        while run.status not in finished:
            time.sleep(0.2)
            in_flight.append(sum(stub_counters(url)["in_flight"] for url in urls))
            run.refresh_from_db()
        elapsed = time.perf_counter() - start
        worker_pids = set(process_tree(worker.pid))
        stub_cpu = cpu_seconds(
            set(process_tree(os.getpid())) - worker_pids - {os.getpid()}
        )
        stub_stats = combined_stub_stats([stub_counters(url) for url in urls])
        # A warm shutdown lets the last chunk warm the leaderboard; the workers' CPU
        # (pool processes included, reaped by the worker) is then known in full.
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
        drained = time.perf_counter() - start - elapsed
        worker_cpu = children_cpu() - children_before - workers_before
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
        for _, stop in stubs:
            stop()
    by_purpose = dict(
        LLMCall.objects.filter(scope=run_scope(run))
        .values_list("purpose")
        .annotate(calls=Count("pk"))
    )
    made = sum(by_purpose.values())
    print(
        f"items={args.items}, {args.workers} worker processes; {args.providers} "
        "stub(s): 300 ms latency, 64 in flight each, 429 beyond"
    )
    for purpose, calls in by_purpose.items():
        print(f"  {purpose:15s} {calls:5d} calls")
    print(f"all stages: {made} calls in {elapsed:.1f} s = {made / elapsed:.0f} calls/s")
    print(
        f"run {run.pk}: {run.get_status_display()}, {run.failed_count} pending; "
        f"stub counters: {json.dumps(stub_stats)}"
    )
    print(
        f"CPU per call: {1000 * worker_cpu / made:.2f} ms in the workers (gateway + "
        f"database writes), {1000 * stub_cpu / made:.2f} ms in the stub"
    )
    mean = sum(in_flight) / len(in_flight)
    print(
        f"stub in flight, sampled every 0.2 s: mean {mean:.1f}, "
        f"first/last 3 s: {in_flight[:15]} / {in_flight[-15:]}"
    )
    print(f"worker stopped {drained:.1f} s after the run finished (leaderboard warm)")
    print(f"load average: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
