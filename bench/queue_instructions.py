"""CPU instructions per review-queue submit+next, in process, counted by callgrind.

    .venv/bin/python bench/queue_instructions.py [--tasks 20000] [--warmup 40]
        [--requests 30] [--dumps DIR]

`queue_bench.py --profile`'s loop (the bench annotators post in turn through the
test client, CSRF enforced, urlencoded like the HTTP clients), counted in
instructions rather than timed, because the machine's load moves CPU times more
than the cuts they measure: the campaign is seeded first (same database and
DATABASE_URL/REDIS_URL as queue_bench.py; seeding under valgrind would take too
long), then this script runs itself under valgrind's callgrind with
instrumentation off, warms up, and marks each counted request with
`bench/callgrind_marks.c` (zeroed before, dumped after), as `i18n_bench.py
--instructions` does. The grading screen's progress counters are kept cached for
the run (a request under callgrind takes a second; their recount is not the hot
path). Needs `valgrind` and a C compiler with valgrind's headers.
"""

import argparse
import ctypes
import gc
import json
import os
import re
import statistics
from pathlib import Path
from urllib.parse import urlencode

import callgrind
import queue_bench

BENCH = Path(__file__).resolve()


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=40)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--dumps", help="directory for callgrind's per-request dumps")
    # Internal: set when the script runs itself under callgrind.
    parser.add_argument("--seeded", help=argparse.SUPPRESS)
    parser.add_argument("--marks", help=argparse.SUPPRESS)
    return parser.parse_args()


def mark_requests(args):
    """Under callgrind: warm up uninstrumented, then count each request alone."""
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation import progress

    seeded = json.loads(Path(args.seeded).read_text())
    marks = ctypes.CDLL(args.marks)
    progress.PROGRESS_CACHE_SECONDS = 3600
    cache.delete(progress._shape_key(seeded["campaign"]))
    cache.delete(progress._done_key(seeded["campaign"]))
    path = f"/annotation/campaigns/{seeded['campaign']}/grade/"
    people = []
    for session in seeded["sessions"]:
        client = Client(enforce_csrf_checks=True)
        client.cookies["sessionid"] = session
        client.get(path, headers={"HX-Request": "true"})
        headers = {
            "HX-Request": "true",
            "X-CSRFToken": client.cookies["csrftoken"].value,
        }
        first = client.post(
            path, "action=next", content_type=queue_bench.FORM, headers=headers
        )
        people.append([client, headers, queue_bench.TASK_RE.search(first.content)[1]])

    def submit_and_next(step):
        client, headers, task = people[step % len(people)]
        form = {"task": task.decode(), "score": str(step % 4), "safety": "sv"[step % 2]}
        response = client.post(
            path, urlencode(form), content_type=queue_bench.FORM, headers=headers
        )
        assert response.status_code == 200, response.content[:300]
        people[step % len(people)][2] = queue_bench.TASK_RE.search(response.content)[1]

    for step in range(args.warmup):
        submit_and_next(step)
    marks.marks_start_instrumentation()
    for step in range(args.warmup, args.warmup + args.requests):
        # Each request starts with the collector's counts at zero (i18n_bench.py).
        gc.collect()
        marks.marks_zero()
        submit_and_next(step)
        marks.marks_dump(b"submit+next")
    with CaptureQueriesContext(connection) as queries:
        submit_and_next(args.warmup + args.requests)
    print(f"statements per submit+next: {len(queries)}")


def count_instructions(args):
    # The run under callgrind derives the bench database's name as this one does.
    environment = dict(os.environ)
    queue_bench.set_up_django(create=True)
    campaign_id, sessions = queue_bench.seed(args.tasks, args.annotators, overlap=2)
    dumps = callgrind.dumps_folder(args.dumps, "queue-callgrind-")
    seeded = dumps / "seeded.json"
    seeded.write_text(json.dumps({"campaign": campaign_id, "sessions": sessions}))
    arguments = [
        f"--warmup={args.warmup}",
        f"--requests={args.requests}",
        f"--seeded={seeded}",
        f"--marks={callgrind.marks_library(dumps)}",
    ]
    callgrind.run(dumps, BENCH, arguments, environment)
    counts = []
    for dump in dumps.glob("callgrind.out.*.*"):
        text = dump.read_text(errors="replace")
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if total and "Client Request: submit+next" in text:
            counts.append(int(total[1]) / 1e6)
    counts.sort()
    quartile = len(counts) // 4
    print(
        f"instructions per submit+next: p50 {statistics.median(counts):.2f} M, "
        f"p25 {counts[quartile]:.2f} M, p75 {counts[-1 - quartile]:.2f} M "
        f"({len(counts)} requests)"
    )
    print(f"dumps: {dumps}")


def main():
    args = arguments()
    if args.marks:
        queue_bench.set_up_django(create=False)
        mark_requests(args)
    else:
        count_instructions(args)


if __name__ == "__main__":
    main()
