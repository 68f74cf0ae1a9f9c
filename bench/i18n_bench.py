"""Page cost of the item browser and the grading screen, per interface language
(#30: translating the interface must not make pages slower, ≤ 5 %).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/assay_bench_i18n \\
      SECRET_KEY=bench ALLOWED_HOSTS=testserver \\
      .venv/bin/python bench/i18n_bench.py [--repeat 300] [--warmup 5] \\
      [--repo PATH] [--languages en,zh-hans] [--pages NAME,…] \\
      [--instructions [--dumps DIR]]

Migrates the database and loads the demo once (`load_demo`), then, as the demo
expert, requests through Django's test client — middleware, view, queries and
template — the item browser (no filter, and one capability) and the grading
screen (the page, and the HTMX POST that takes a task and renders it; the task
stays held, so every round renders the same screen). Rounds alternate the pages.

Two measures:

- by default, p50 / p95 per page and language of the wall time and of this
  process's CPU time (the application's own work; the database's is the same
  before and after);
- `--instructions`: the CPU instructions each request executes, counted by
  valgrind's callgrind (`valgrind` and a C compiler with valgrind's headers are
  needed). The bench runs itself under callgrind with instrumentation off, warms
  up, then marks each measured request with callgrind's client requests
  (`bench/callgrind_marks.c`, loaded with ctypes): the count is of the request
  alone, and it does not move with the load of a shared machine (Python's hash
  seed is fixed, and the garbage collector starts each request from zero). The
  per-request dumps stay in `--dumps` for `callgrind_annotate`.

Both also print the number of SQL queries each page makes.

`--repo` runs another checkout's code against the same database, e.g. the commit
before #30 in a detached worktree (which knows only English: its pages ignore the
`Accept-Language` header, so its "zh-hans" rows are English pages): the "before"
figures.
"""

import argparse
import ctypes
import gc
import os
import pathlib
import re
import statistics
import sys
import time

import callgrind

BENCH = pathlib.Path(__file__).resolve()
parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--repeat", type=int, default=300)
parser.add_argument("--warmup", type=int, default=5)
parser.add_argument("--repo", default=str(BENCH.parents[1]))
parser.add_argument("--languages", default="en,zh-hans")
parser.add_argument("--pages", help="only these pages (comma-separated names)")
parser.add_argument(
    "--instructions",
    action="store_true",
    help="count CPU instructions per request under callgrind instead of timing",
)
parser.add_argument("--dumps", help="directory for callgrind's per-request dumps")
# Internal: set when the bench runs itself under callgrind (the marks' library).
parser.add_argument("--marks", help=argparse.SUPPRESS)
ARGS = parser.parse_args()

sys.path.insert(0, ARGS.repo)
os.chdir(ARGS.repo)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")
os.environ.setdefault("DEBUG", "0")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Q  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

HTMX = {"HTTP_HX_REQUEST": "true"}


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share / 100 * (len(ordered) - 1)))]


def prepare():
    from benchmark.models import Benchmark

    call_command("migrate", verbosity=0)
    if not Benchmark.objects.filter(slug="industrybench-demo").exists():
        call_command("load_demo", allow_without_debug=True, verbosity=0)


def expert_and_pages():
    from annotation.models import Campaign

    expert = get_user_model().objects.get(username="expert")
    campaign = (
        Campaign.objects.filter(kind="grading", status="open")
        .filter(Q(assignees=expert) | Q(assignees=None))
        .order_by("pk")
        .first()
    )
    grade = f"/annotation/campaigns/{campaign.pk}/grade/"
    pages = {
        "item browser": ("get", "/b/industrybench-demo/items/", {}),
        "item browser by capability": (
            "get",
            "/b/industrybench-demo/items/?capability=fault_diagnosis",
            {},
        ),
        "grading screen": ("get", grade, {}),
        "grading task (HTMX)": ("post", grade, {"action": "next"}),
    }
    if ARGS.pages:
        pages = {name: pages[name] for name in ARGS.pages.split(",")}
    return expert, pages


def languages():
    """The languages to request; code without interface languages is asked in
    each too (it ignores the header and answers in English)."""
    known = {code for code, _name in getattr(settings, "LANGUAGES", [])}
    asked = ARGS.languages.split(",")
    return [language for language in asked if not known or language in known]


def request(client, page):
    method, url, data = page
    response = getattr(client, method)(url, data, **(HTMX if method == "post" else {}))
    assert response.status_code == 200, (url, response.status_code)
    return response


def signed_in_client(expert, language):
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(expert)
    return client


def print_queries(expert, pages):
    for language in languages():
        client = signed_in_client(expert, language)
        for name, page in pages.items():
            request(client, page)
            with CaptureQueriesContext(connection) as queries:
                request(client, page)
            print(f"{language:8} {name:26} {len(queries)} SQL queries")


def time_pages(expert, pages):
    for language in languages():
        client = signed_in_client(expert, language)
        times = {name: [] for name in pages}
        cpu = {name: [] for name in pages}
        for round_ in range(ARGS.repeat + ARGS.warmup):
            for name, page in pages.items():
                started, cpu_started = time.perf_counter(), time.process_time()
                request(client, page)
                elapsed = (time.perf_counter() - started) * 1000
                cpu_elapsed = (time.process_time() - cpu_started) * 1000
                if round_ >= ARGS.warmup:  # the first rounds warm caches and imports
                    times[name].append(elapsed)
                    cpu[name].append(cpu_elapsed)
        for name, values in times.items():
            print(
                f"{language:8} {name:26} wall p50 {statistics.median(values):6.1f} "
                f"p95 {percentile(values, 95):6.1f} ms · CPU p50 "
                f"{statistics.median(cpu[name]):6.1f} p95 "
                f"{percentile(cpu[name], 95):6.1f} ms"
            )


def keep_progress_cached(expert):
    """Under callgrind a round takes seconds, so the grading screen's progress
    counters (cached for a minute) would be recounted at whichever rounds their
    minute ends — the same code before and after #30, but a count that moves with
    the machine's speed. They are counted afresh once, in the warm-up, and kept for
    the run."""
    from django.core.cache import cache

    from annotation import progress
    from annotation.models import Campaign

    progress.PROGRESS_CACHE_SECONDS = 3600
    for campaign in Campaign.objects.all():
        cache.delete(progress._shape_key(campaign.pk))
        cache.delete(progress._done_key(campaign.pk))
        cache.delete(progress._pace_key(campaign.pk, expert.pk))


def mark_requests(expert, pages):
    """Under callgrind: warm up uninstrumented, then zero the counts before each
    measured request and dump them after it, the dump named for the request."""
    marks = ctypes.CDLL(ARGS.marks)
    keep_progress_cached(expert)
    clients = {language: signed_in_client(expert, language) for language in languages()}
    for client in clients.values():
        for _round in range(ARGS.warmup):
            for page in pages.values():
                request(client, page)
    marks.marks_start_instrumentation()
    for language, client in clients.items():
        for round_ in range(ARGS.repeat):
            for name, page in pages.items():
                # Each request starts with the collector's counts at zero: the
                # collections it runs are those of its own allocations, not ones
                # earlier requests left almost due.
                gc.collect()
                marks.marks_zero()
                request(client, page)
                marks.marks_dump(f"{language}|{name}|{round_}".encode())


def count_instructions(pages):
    """Run this bench under callgrind (`mark_requests`) and read its dumps."""
    dumps = callgrind.dumps_folder(ARGS.dumps, "i18n-callgrind-")
    arguments = [
        f"--repo={ARGS.repo}",
        f"--repeat={ARGS.repeat}",
        f"--warmup={ARGS.warmup}",
        f"--languages={ARGS.languages}",
        *([f"--pages={ARGS.pages}"] if ARGS.pages else []),
        f"--marks={callgrind.marks_library(dumps)}",
    ]
    callgrind.run(dumps, BENCH, arguments)
    counts = {}
    for dump in dumps.glob("callgrind.out.*.*"):
        text = dump.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if trigger and total:
            language, name, _round = trigger.group(1).split("|")
            counts.setdefault((language, name), []).append(int(total.group(1)))
    for language in languages():
        for name in pages:
            values = counts[(language, name)]
            print(
                f"{language:8} {name:26} instructions p50 "
                f"{statistics.median(values) / 1e6:7.2f} M  p95 "
                f"{percentile(values, 95) / 1e6:7.2f} M  mean "
                f"{statistics.fmean(values) / 1e6:7.2f} M  ({len(values)} requests)"
            )
    print(f"dumps: {dumps}")


def main() -> int:
    if ARGS.marks:
        mark_requests(*expert_and_pages())
        return 0
    prepare()
    expert, pages = expert_and_pages()
    print(f"code: {ARGS.repo}  rounds: {ARGS.repeat}")
    print_queries(expert, pages)
    if ARGS.instructions:
        count_instructions(pages)
    else:
        time_pages(expert, pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
