"""Benchmark construction end to end: generation → dedup → quality → search →
deep → post → release over --candidates candidates, through real Celery workers,
the gateway and the Redis-shared endpoint limit, against an OpenAI-protocol stub
with a fixed capacity and the SearxNG-protocol test server (tests/search_stub.py).

    DATABASE_URL=postgres://… REDIS_URL=redis://… CELERY_BROKER_URL=redis://… \\
    SECRET_KEY=bench ALLOWED_HOSTS=localhost DEBUG=0 \\
    .venv/bin/python bench/construction_bench.py [--candidates 10000] \\
        [--workers 2] [--release 1000] [--full-stub] [--search-latency 0.1] \\
        [--search-concurrency 64]

The stub (bench/lean_stub.py; the tests' threaded one with --full-stub) runs in
its own process, answers after 300 ms and allows 64 requests in flight (429
beyond): a capacity of 64 / 0.3 s = 213 calls/s. The endpoint declares the same
64. Sources are made so that generation (3 questions a source) gives
--candidates candidates, one in 150 of them a near-twin of an earlier one
(dedup rejects them) and one in 300 with a dangling reference (post-processing
flags those of them the release sample draws, 0–7 of its 1,000 in our runs);
the stub's quality verdict rejects about 10 %, its search verifier about 5 %,
and deep verification removes about 3 % and refines about 3 %. Each source text
carries a nonce, so no call or search is served from an earlier run's record.

Search verification asks the search stub (bench/lean_stub.LeanSearchStub, one
asyncio loop in its own process; the tests' stub, a thread per request, with
--full-stub) three queries per candidate, deep verification one per claim (two
claims); each answer takes --search-latency seconds. The stub itself has no
limit; the search service declares --search-concurrency queries in flight (64,
held over every worker process), so the search capacity is 64 / 0.1 s = 640
queries/s whatever the number of workers.

Per stage it prints the wall time (start to the run's end, as a manager sees it),
the cores busy on average by part (the workers, this bench with its stubs,
PostgreSQL, Redis, the whole machine), and for the LLM stages the calls answered,
the calls per second achieved and their share of the capacity (target ≥ 90 %),
429s, duplicated requests (must be 0), the mean of the stub's requests in flight
(64 would be capacity) and the workers' CPU per call. Release promotes a seeded
sample of --release candidates in this process, as the page does.
"""

import argparse
import hashlib
import json
import os
import pathlib
import re
import signal
import sys
import time
import urllib.request
from functools import partial

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")
os.environ.setdefault("BENCH_STUB_API_KEY", "bench-key")
# The search stub listens on loopback.
os.environ.setdefault("SEARCH_SERVICE_HOSTS", "127.0.0.1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from bench import lean_stub  # noqa: E402
from bench.labelling_bench import (  # noqa: E402
    cpu_seconds,
    process_tree,
    start_worker,
)
from benchmark.actions import (  # noqa: E402
    do_create_benchmark,
    do_set_final_labels,
)
from benchmark.models import Label  # noqa: E402
from construction.actions import (  # noqa: E402
    do_import_sources,
    do_save_search_service,
    do_start_stage,
)
from construction.models import StageRun  # noqa: E402
from construction.release import (  # noqa: E402
    do_draw_release_sample,
    do_open_pool,
)
from construction.report import funnel_rows, pending_flags  # noqa: E402
from judging.llm.models import Endpoint  # noqa: E402
from judging.llm.prompts import default_template  # noqa: E402
from tests import openai_stub  # noqa: E402
from tests.judging.labelling_fixtures import clear_broker  # noqa: E402
from tests.openai_stub import serve_in_subprocess  # noqa: E402
from tests.search_stub import SearchReply, SearchStub  # noqa: E402

LATENCY = 0.3
CAP = 64
CAPACITY = CAP / LATENCY
QUESTIONS = 3
TARGET_SHARE = 0.90
SUBJECTS = ("插座", "断路器", "螺栓", "轴承", "电缆", "变压器", "电芯", "涂料")
PROPERTIES = ("额定电压", "额定电流", "抗拉强度", "外径", "工作温度", "防护等级")


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _questions(source: int, nonce: str) -> list[dict]:
    """Three distinct questions for source `source`; every 50th source's first
    question repeats the one before it with other punctuation (a dedup twin),
    every 100th source's second question names no product (a dangling
    reference)."""
    items = []
    for position in range(QUESTIONS):
        twin = source % 50 == 49 and position == 0
        number = source - 1 if twin else source
        subject = SUBJECTS[number % len(SUBJECTS)]
        prop = PROPERTIES[(number + position) % len(PROPERTIES)]
        question = (
            f"按 GB/T {1000 + number}.{position}-{2000 + number % 25}（{nonce}），"
            f"型号 X{number:05d}-{position} 的{subject}{prop}是多少"
        )
        question += "?" if twin else "？"
        if source % 100 == 7 and position == 1:
            question = f"该产品的{prop}是多少？（X{number:05d}，{nonce}）"
        items.append({"question": question, "answer": f"{number % 97 + 3} 单位"})
    return items


def _line(prompt: str, name: str) -> str:
    return re.search(rf"^{name}: (.*)$", prompt, re.MULTILINE).group(1)


def _deep_reply(prompt: str) -> str:
    """Keep; remove ~3 %, refine ~3 % (by a digest of the question)."""
    question, answer = _line(prompt, "Question"), _line(prompt, "Reference answer")
    draw = _digest("deep" + question)[0]
    verdict = "remove" if draw < 8 else "refine" if draw < 16 else "keep"
    reply = {
        "claims": [
            {
                "claim": answer,
                "status": "supported" if verdict == "keep" else "contradicted",
                "basis": "[1]",
            }
        ],
        "verdict": verdict,
        "reason": "Checked against the source and [1].",
    }
    if verdict == "refine":
        reply["corrected_answer"] = answer + "（修正）"
    return json.dumps(reply, ensure_ascii=False)


def _claims_reply(prompt: str) -> str:
    """Stage 5's first call: two claims (the answer's value, the question's
    standard), one query each, none of them Stage 4's."""
    question, answer = _line(prompt, "Question"), _line(prompt, "Reference answer")
    claims = [
        {"claim": answer, "queries": [f"{question} {answer}"]},
        {"claim": question, "queries": [f"{question} 条款"]},
    ]
    return json.dumps({"claims": claims}, ensure_ascii=False)


def responder(body: dict) -> str:
    """Generation: the planned questions of the source named in the prompt.
    Quality: pass, or for ~10 % (by a digest of the question) reject. Search:
    three queries from the question; the verifier passes but ~5 %. Deep: two
    claims with a query each (_claims_reply), then _deep_reply."""
    prompt = openai_stub.first_user_text(body)
    if prompt.startswith("Write"):
        marker = prompt.split("BENCH-SRC ", 1)[1].split()[0]
        source, nonce = marker.split("/")
        return json.dumps({"items": _questions(int(source), nonce)}, ensure_ascii=False)
    if prompt.startswith("Propose exactly three"):
        question = _line(prompt, "Question")
        queries = [question, f"{question} 标准", f"{question} 参数"]
        return json.dumps({"queries": queries}, ensure_ascii=False)
    if prompt.startswith("Decide whether"):
        if _digest("search" + _line(prompt, "Question"))[0] < 13:
            reply = {"verdict": "reject", "supporting": [], "reason": "No result."}
        else:
            reply = {"verdict": "pass", "supporting": [1], "reason": "[1] states it."}
        return json.dumps(reply)
    if prompt.startswith("List the checkable claims"):
        return _claims_reply(prompt)
    if prompt.startswith("Check the candidate claim by claim"):
        return _deep_reply(prompt)
    if prompt.startswith("Check the candidate"):
        if _digest(prompt)[0] < 26:
            return json.dumps(
                {"verdict": "reject", "reason": "问题缺少限定条件，存在多个正确答案"},
                ensure_ascii=False,
            )
        return json.dumps({"verdict": "pass", "reason": "四项检查均通过。"})
    return "OK"


def search_results(query: str, latency: float) -> SearchReply:
    """Five results per query, named after it."""
    key = hashlib.sha256(query.encode()).hexdigest()[:12]
    return SearchReply(
        results=[
            (f"https://std.example.cn/{key}/{rank}", f"{query} 第 {rank} 条", query)
            for rank in range(1, 6)
        ],
        delay=latency,
    )


def _serve_search(conn, latency: float) -> None:
    with SearchStub(responder=lambda query: search_results(query, latency)) as stub:
        conn.send(stub.base_url)
        conn.recv()


def start_search_stub(latency: float):
    """The tests' search stub in its own process; (base_url, stop)."""
    return serve_in_subprocess(_serve_search, latency)


def search_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url + "/stub/stats") as reply:
        return json.load(reply)


def search_requests(base_url: str) -> int:
    return search_stats(base_url)["requests"]


def make_sources(benchmark, count: int, nonce: str) -> None:
    lines = []
    for source in range(count):
        kind = "gbt_standard" if source % 3 else "product_record"
        lines.append(
            json.dumps(
                {
                    "kind": kind,
                    "reference": f"GB/T {1000 + source} 5.{source % 9}"
                    if kind == "gbt_standard"
                    else f"bench/category R-{source:05d}",
                    "text": f"BENCH-SRC {source}/{nonce} "
                    f"{SUBJECTS[source % len(SUBJECTS)]}的技术要求与参数。",
                    "fields": {"label": SUBJECTS[source % len(SUBJECTS)]},
                },
                ensure_ascii=False,
            )
        )
    do_import_sources(benchmark, "\n".join(lines).encode(), "bench.jsonl")


def wait_for_worker(seconds: float = 120) -> None:
    """Start the clock only once the worker answers: on a loaded machine it
    takes longer than any fixed pause to come up."""
    from assay.celery import app

    deadline = time.monotonic() + seconds
    while not app.control.ping(timeout=1):
        if time.monotonic() > deadline:
            sys.exit("The worker did not come up.")


def stub_counters(base_url: str) -> dict:
    with urllib.request.urlopen(base_url[: -len("/v1")] + "/stub/stats") as reply:
        return json.load(reply)


def _named(name: str) -> list[int]:
    """Live processes whose command name is `name` (Linux /proc)."""
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _cpu_with_reaped(pids) -> float:
    """CPU seconds of the processes and of the children they have reaped:
    PostgreSQL's backends end with their connections, and the postmaster keeps
    their time."""
    total = 0
    for pid in pids:
        try:
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        total += sum(int(value) for value in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def machine_cpu(worker) -> dict:
    """CPU seconds so far by part: the worker processes, this bench with its
    stubs (they stand in for services that run elsewhere), PostgreSQL, Redis, and
    the machine as a whole (/proc/stat), to tell whether the cores are saturated."""
    workers = process_tree(worker.pid)
    harness = set(process_tree(os.getpid())) - set(workers)
    fields = pathlib.Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    idle = int(fields[3]) + int(fields[4])
    busy = sum(int(value) for value in fields[:8]) - idle
    return {
        "workers": cpu_seconds(workers),
        "bench and stubs": cpu_seconds(harness),
        "postgres": _cpu_with_reaped(_named("postgres")),
        "redis": cpu_seconds(_named("redis-server")),
        "machine": busy / os.sysconf("SC_CLK_TCK"),
    }


def run_stage(
    benchmark, stage: str, base_url: str, worker, search_url="", **options
) -> dict:
    """Start a stage and wait for its end; its wall time, stub counters, the
    stub's requests in flight (sampled every 0.2 s), the searches (with
    `search_url`) and the workers' CPU."""
    before = stub_counters(base_url)
    searched = search_requests(search_url) if search_url else 0
    cpu_before = machine_cpu(worker)
    start = time.perf_counter()
    run = do_start_stage(benchmark, stage, **options)
    in_flight, searching = [], []
    while run.is_active:
        time.sleep(0.2)
        in_flight.append(stub_counters(base_url)["in_flight"])
        if search_url:
            searching.append(search_stats(search_url)["in_flight"])
        run = StageRun.objects.get(pk=run.pk)
    wall = time.perf_counter() - start
    cpu_after = machine_cpu(worker)
    worker_cpu = cpu_after["workers"] - cpu_before["workers"]
    after = stub_counters(base_url)
    answered = after["answered"] - before["answered"]
    figures = {
        "stage": stage,
        "status": run.get_status_display(),
        "units": run.total_units,
        "wall_s": round(wall, 2),
    }
    if answered:
        figures.update(
            calls=answered,
            calls_per_s=round(answered / wall, 1),
            share_of_capacity=round(answered / wall / CAPACITY, 3),
            capped_429=after["capped_429"] - before["capped_429"],
            duplicate_answers=after["duplicate_answers"] - before["duplicate_answers"],
            peak_in_flight=after["peak_in_flight"],
            mean_in_flight=round(sum(in_flight) / len(in_flight), 1),
            in_flight_each_second=in_flight[::5],
            worker_cpu_ms_per_call=round(1000 * worker_cpu / answered, 2),
        )
    if search_url:
        searched = search_requests(search_url) - searched
        figures.update(
            searches=searched,
            searches_per_s=round(searched / wall, 1),
            search_peak_in_flight=search_stats(search_url)["peak_in_flight"],
            search_mean_in_flight=round(sum(searching) / max(1, len(searching)), 1),
            searching_each_second=searching[::5],
        )
    figures["worker_cpu_s"] = round(worker_cpu, 1)
    # Cores busy on average during the stage, by part (2.0 = both cores).
    figures["cores_busy"] = {
        part: round((cpu_after[part] - cpu_before[part]) / wall, 2)
        for part in cpu_before
    }
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--release", type=int, default=1_000, help="sample size")
    parser.add_argument(
        "--full-stub",
        action="store_true",
        help="the tests' threaded stub instead of bench/lean_stub.py",
    )
    parser.add_argument(
        "--search-latency", type=float, default=0.1, help="seconds per search"
    )
    parser.add_argument(
        "--search-concurrency",
        type=int,
        default=64,
        help="the search service's queries in flight, over all workers",
    )
    args = parser.parse_args()
    if not settings.REDIS_URL or not settings.CELERY_BROKER_URL.startswith("redis"):
        sys.exit("Set REDIS_URL and CELERY_BROKER_URL (redis://) for the bench.")
    call_command("migrate", verbosity=0)
    nonce = f"{int(time.time())}"
    benchmark = do_create_benchmark(
        name="Construction bench", slug=f"construction-bench-{nonce}"
    )
    sources = -(-args.candidates // QUESTIONS)
    started = time.perf_counter()
    make_sources(benchmark, sources, nonce)
    import_s = time.perf_counter() - started
    stub = openai_stub if args.full_stub else lean_stub
    base_url, stop_stub = stub.start_in_subprocess(
        latency=LATENCY, max_in_flight=CAP, responder=responder, api_key="bench-key"
    )
    endpoint, _ = Endpoint.objects.update_or_create(
        name="bench-construction",
        defaults={
            "base_url": base_url,
            "model": "bench-writer",
            "api_key_env": "BENCH_STUB_API_KEY",
            "max_concurrency": CAP,
            "rpm_limit": None,
            # Stage 5 asks in thinking mode, as the paper's does.
            "thinking_switch": Endpoint.ThinkingSwitch.PARAMETER,
            "thinking_on": {"enable_thinking": True},
        },
    )
    if args.full_stub:
        search_url, stop_search = start_search_stub(args.search_latency)
    else:
        search_url, stop_search = lean_stub.start_in_subprocess(
            lean_stub.LeanSearchStub,
            responder=partial(search_results, latency=args.search_latency),
        )
    service = do_save_search_service(
        f"bench-searx-{nonce}",
        adapter="searxng",
        base_url=search_url,
        max_concurrency=args.search_concurrency,
    )
    search_capacity = args.search_concurrency / args.search_latency
    # Messages left by tests or a killed worker would reach the bench's worker.
    clear_broker()
    worker = start_worker(args.workers, "construction-bench")
    results = [{"stage": "import sources", "units": sources, "wall_s": import_s}]
    try:
        wait_for_worker()
        results.append(
            run_stage(
                benchmark,
                "generation",
                base_url,
                worker,
                endpoint=endpoint,
                template=default_template("generation"),
                questions_per_source=QUESTIONS,
            )
        )
        results.append(run_stage(benchmark, "dedup", base_url, worker, threshold=0.9))
        results.append(
            run_stage(
                benchmark,
                "quality",
                base_url,
                worker,
                endpoint=endpoint,
                template=default_template("quality_check"),
            )
        )
        results.append(
            run_stage(
                benchmark,
                "search",
                base_url,
                worker,
                search_url=search_url,
                endpoint=endpoint,
                template=default_template("search_queries"),
                verifier_template=default_template("search_verification"),
                search_service=service,
            )
        )
        results[-1]["share_of_search_capacity"] = round(
            results[-1]["searches_per_s"] / search_capacity, 3
        )
        results.append(
            run_stage(
                benchmark,
                "deep",
                base_url,
                worker,
                search_url=search_url,
                endpoint=endpoint,
                template=default_template("deep_claims"),
                verifier_template=default_template("deep_verification"),
                search_service=service,
            )
        )
        results[-1]["share_of_search_capacity"] = round(
            results[-1]["searches_per_s"] / search_capacity, 3
        )
        started = time.perf_counter()
        opened = do_open_pool(benchmark)
        _label_pool(benchmark)
        sample = do_draw_release_sample(benchmark, args.release, seed=1)
        results.append(
            {
                "stage": "release sample",
                "units": opened,
                "drawn": sample.drawn,
                "wall_s": round(time.perf_counter() - started, 2),
            }
        )
        results.append(run_stage(benchmark, "exact_dedup", base_url, worker))
        results.append(run_stage(benchmark, "dangling", base_url, worker))
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)
        stop_stub()
        stop_search()
    print(
        f"{args.candidates} candidates from {sources} sources, {args.workers} worker "
        f"processes; stub: {int(LATENCY * 1000)} ms, {CAP} in flight = capacity "
        f"{CAPACITY:.0f} calls/s; target ≥ {TARGET_SHARE:.0%} of it; search: "
        f"{int(args.search_latency * 1000)} ms a query, ≤ "
        f"{args.search_concurrency} in flight = capacity "
        f"{search_capacity:.0f} queries/s"
    )
    for figures in results:
        print("  " + json.dumps(figures, ensure_ascii=False))
    llm = [f for f in results if "calls" in f]
    calls = sum(f["calls"] for f in llm)
    wall = sum(f["wall_s"] for f in llm)
    print(
        f"LLM stages together: {calls} calls in {wall:.1f} s = {calls / wall:.1f} "
        f"calls/s, {calls / wall / CAPACITY:.1%} of capacity"
    )
    # Search and deep verification wait for the web between their two calls
    # per candidate; the other LLM stages only call the model.
    model_only = [f for f in llm if "searches" not in f]
    calls = sum(f["calls"] for f in model_only)
    wall = sum(f["wall_s"] for f in model_only)
    print(
        f"LLM stages without searches: {calls} calls in {wall:.1f} s = "
        f"{calls / wall:.1f} calls/s, {calls / wall / CAPACITY:.1%} of capacity"
    )
    funnel = [
        (row.stage, row.entered, row.passed, row.rejected, row.pending)
        for row in funnel_rows(benchmark.pk)
        if row.group == "all" and row.ran
    ]
    print(f"funnel (stage, in, out, rejected, pending): {funnel}")
    print(f"flags waiting for review: {pending_flags(benchmark.pk).count()}")
    print(f"load average: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


def _label_pool(benchmark) -> None:
    """Imported capability and industry labels for the draft items, spread
    over three of each, so the release sample has strata to keep."""
    from construction.models import Candidate

    labels = {
        code: list(
            Label.objects.filter(
                dimension__benchmark=benchmark, dimension__code=code
            ).order_by("position")[:3]
        )
        for code in ("capability", "industry")
    }
    items = Candidate.objects.filter(
        source__benchmark=benchmark, item__isnull=False
    ).values_list("item_id", flat=True)
    do_set_final_labels(
        [
            (item_id, labels[code][n % 3], "imported")
            for n, item_id in enumerate(items)
            for code in labels
        ]
    )


if __name__ == "__main__":
    main()
