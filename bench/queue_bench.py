"""Review-queue benchmark: 100,000 tasks, 20 annotators doing submit+next over HTTP.

    .venv/bin/python bench/queue_bench.py [--tasks 100000] [--annotators 20]
        [--seconds 60] [--overlap 2] [--workers 4] [--port 8765] [--orm]

Needs DATABASE_URL (PostgreSQL; the script works in a database of its own named
<name>_bench, created and migrated on first use, items and responses kept for the
next run) and REDIS_URL like the tests. It seeds a new grading campaign, starts
gunicorn on 127.0.0.1 against the real views, and lets each simulated annotator
POST its grade to the expert screen (HTMX), which records it and answers with the
next task. Server-side time per submit+next is
gunicorn's own request time (%(D)s); client time is reported too. Afterwards it checks
that no task was held or labelled beyond the overlap and that every submission the
server accepted is stored.
"""

import argparse
import http.client
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TASK_RE = re.compile(rb'data-task="(\d*)"')
FORM = "application/x-www-form-urlencoded"


def bench_database_url() -> str:
    url = urlparse(os.environ["DATABASE_URL"])
    if not url.scheme.startswith("postgres"):
        sys.exit("The queue benchmark needs PostgreSQL (DATABASE_URL=postgres://…).")
    name = url.path.lstrip("/") + "_bench"
    return urlunparse(url._replace(path="/" + name))


def ensure_database(url: str):
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def seed(tasks: int, annotators: int, overlap: int):
    """Items, one simulated run's responses and a new grading campaign over all of
    them; items and responses of an earlier run of the script are reused."""
    from django.core.management import call_command
    from django.test import Client

    from annotation.actions import do_create_campaign
    from annotation.models import Campaign
    from benchmark.actions import do_create_user
    from benchmark.models import Benchmark, Item
    from judging.evaluation.models import EvaluationRun, Response

    call_command("migrate", verbosity=0)
    benchmark = Benchmark.objects.filter(slug="queue-bench").first()
    if benchmark is None or benchmark.items.count() != tasks:
        if benchmark is not None:
            benchmark.delete()
        benchmark = _seed_items(tasks)
    run = EvaluationRun.objects.get(benchmark=benchmark)
    item_ids = list(
        Item.objects.filter(benchmark=benchmark)
        .order_by("id")
        .values_list("id", flat=True)
    )
    response_ids = dict(Response.objects.filter(run=run).values_list("item_id", "id"))
    people = [
        do_create_user(f"bench{i:02d}", "bench-password", "expert")
        for i in range(annotators)
    ]
    campaign = do_create_campaign(
        benchmark,
        name="Bench grading",
        kind=Campaign.Kind.GRADING,
        overlap=overlap,
        assignees=people,
        ask_safety=True,
        tasks=[
            {"item_id": item_id, "response_id": response_ids[item_id]}
            for item_id in item_ids
        ],
    )
    sessions = []
    for person in people:
        client = Client()
        client.force_login(person)
        sessions.append(client.cookies["sessionid"].value)
    return campaign.pk, sessions


def _seed_items(tasks: int):
    from benchmark.actions import do_create_benchmark
    from benchmark.models import Item, Rendering
    from judging.evaluation.models import EvaluationRun, Response

    benchmark = do_create_benchmark(name="Queue bench", slug="queue-bench")
    Item.objects.bulk_create(
        (
            Item(benchmark=benchmark, external_id=f"B{i:06d}", difficulty="medium")
            for i in range(tasks)
        ),
        batch_size=5000,
    )
    item_ids = list(
        Item.objects.filter(benchmark=benchmark)
        .order_by("id")
        .values_list("id", flat=True)
    )
    renderings = Rendering.objects.bulk_create(
        (
            Rendering(
                item_id=item_id,
                language="zh",
                question=f"问题 {item_id}: M{item_id % 30} 螺栓的强度等级?",
                answer="8.8 级",
                origin=Rendering.Origin.SOURCE,
            )
            for item_id in item_ids
        ),
        batch_size=5000,
    )
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name="bench-model",
        language="zh",
        origin=EvaluationRun.Origin.SIMULATED,
        status=EvaluationRun.Status.COMPLETE,
    )
    # As in real runs, each response names the rendering its question came from.
    Response.objects.bulk_create(
        (
            Response(
                run=run,
                item_id=rendering.item_id,
                rendering=rendering,
                text=f"Answer {rendering.item_id}",
                status=Response.Status.ANSWERED,
            )
            for rendering in renderings
        ),
        batch_size=5000,
    )
    return benchmark


def set_up_django(*, create: bool) -> None:
    """Django on the bench database (created and migrated first when `create`), as
    gunicorn's processes and the in-process runs (`--profile`, the instruction
    counts of queue_instructions.py, through the test client) see it."""
    url = bench_database_url()
    if create:
        ensure_database(url)
    os.environ.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="assay.settings",
        DB_CONN_MAX_AGE="600",
        DEBUG="0",
        LOG_LEVEL="WARNING",
    )
    os.environ.setdefault("SECRET_KEY", "bench-only-secret")
    os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
    import django

    django.setup()


def deployed_gunicorn_flags() -> list[str]:
    """The flags of DEPLOY.md's `ExecStart=…/gunicorn assay.wsgi:application …`
    after the application, without those the bench sets itself: it measures the
    server as deployed."""
    text = (ROOT / "docs/DEPLOY.md").read_text()
    match = re.search(
        r"ExecStart=\S+/gunicorn assay\.wsgi:application((?:.*\\\n)+.*)", text
    )
    if match is None:
        sys.exit("docs/DEPLOY.md has no gunicorn ExecStart line")
    flags = shlex.split(match.group(1).replace("\\\n", " "))
    own = {"--bind", "--workers", "--timeout", "--access-logfile"}
    kept, skip = [], False
    for flag in flags:
        if skip:
            skip = False
        elif flag in own:
            skip = True
        else:
            kept.append(flag)
    return kept


def cpu_seconds(pids) -> float:
    """User + system CPU of these processes so far (Linux /proc)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def server_pids(server_pid: int) -> dict[str, list[int]]:
    """gunicorn's processes (its session) and the PostgreSQL backends serving the
    bench database, whose CPU is the server's side of every request."""
    from django.db import connection

    gunicorn = [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _session_of(entry.name) == server_pid
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        postgres = [pid for (pid,) in cursor.fetchall()]
    return {"gunicorn": gunicorn, "postgres": postgres}


def _session_of(pid: str) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (FileNotFoundError, IndexError, ValueError):
        return None


class Clock:
    """Starts the measured period once every annotator has loaded its first task,
    noting the CPU time used so far by the server's processes and this client."""

    def __init__(self, parties: int, seconds: int, server_pid: int):
        self.seconds = seconds
        self.server_pid = server_pid
        self.deadline = None
        self.cpu_before: dict[str, float] = {}
        self.barrier = threading.Barrier(parties, action=self.start)

    def start(self):
        self.cpu_before = self.cpu()
        self.deadline = time.monotonic() + self.seconds

    def cpu(self) -> dict[str, float]:
        pids = server_pids(self.server_pid)
        return {
            "gunicorn": cpu_seconds(pids["gunicorn"]),
            "postgres": cpu_seconds(pids["postgres"]),
            "client": time.process_time(),
        }


class Annotator(threading.Thread):
    def __init__(self, port, path, session, clock, index):
        super().__init__(daemon=True)
        self.port, self.path, self.session = port, path, session
        self.clock, self.index = clock, index
        self.latencies: list[float] = []
        self.accepted: list[int] = []
        self.errors: list[str] = []

    def run(self):
        try:
            self.annotate()
        except Exception as error:  # reported with the results
            self.errors.append(repr(error))
            self.clock.barrier.abort()

    def annotate(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        cookie = f"sessionid={self.session}"
        conn.request("GET", self.path, headers={"Cookie": cookie})
        page = conn.getresponse()
        body = page.read()
        csrf = re.search(r"csrftoken=([^;]+)", page.getheader("Set-Cookie") or "")
        if page.status != 200 or not csrf:
            self.errors.append(f"GET {page.status}")
            self.clock.barrier.abort()
            return
        headers = {
            "Cookie": f"{cookie}; csrftoken={csrf.group(1)}",
            "X-CSRFToken": csrf.group(1),
            "HX-Request": "true",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        # Opening the screen only shows a held lease; the page asks for a task.
        conn.request("POST", self.path, body="action=next", headers=headers)
        body = conn.getresponse().read()
        task = TASK_RE.search(body).group(1)
        if not task:
            self.errors.append("no task on the first page: " + body[-300:].decode())
        step = 0
        try:
            self.clock.barrier.wait()
        except threading.BrokenBarrierError:
            return
        while task and time.monotonic() < self.clock.deadline:
            step += 1
            form = {
                "task": task.decode(),
                "score": str((self.index + step) % 4),
                "safety": "sv"[step % 2],
                "elapsed_ms": "1500",
            }
            started = time.perf_counter()
            conn.request("POST", self.path, body=urlencode(form), headers=headers)
            response = conn.getresponse()
            body = response.read()
            self.latencies.append(time.perf_counter() - started)
            if response.status != 200:
                self.errors.append(f"POST {response.status}: {body[:200]!r}")
                break
            self.accepted.append(int(task))
            task = TASK_RE.search(body).group(1)
        conn.close()


def profile(campaign_id: int, sessions: list[str], requests: int):
    """Statements and CPU of one submit+next, in process through the test client
    (no HTTP): the annotators post in turn, urlencoded with the CSRF token as the
    HTTP clients do; Python CPU per request (`time.process_time`) and the
    PostgreSQL backend's CPU (/proc) per request, after a warm-up."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    path = f"/annotation/campaigns/{campaign_id}/grade/"
    people = []
    for session in sessions:
        client = Client(enforce_csrf_checks=True)
        client.cookies["sessionid"] = session
        client.get(path, headers={"HX-Request": "true"})
        headers = {
            "HX-Request": "true",
            "X-CSRFToken": client.cookies["csrftoken"].value,
        }
        first = client.post(path, "action=next", content_type=FORM, headers=headers)
        people.append([client, headers, TASK_RE.search(first.content).group(1)])

    def submit_and_next(step):
        client, headers, task = people[step % len(people)]
        form = {"task": task.decode(), "score": str(step % 4), "safety": "sv"[step % 2]}
        response = client.post(
            path, urlencode(form), content_type=FORM, headers=headers
        )
        assert response.status_code == 200, response.content[:300]
        people[step % len(people)][2] = TASK_RE.search(response.content).group(1)

    for step in range(60):
        submit_and_next(step)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    cpu = []
    postgres_before = cpu_seconds([backend])
    for step in range(requests):
        started = time.process_time()
        submit_and_next(step)
        cpu.append((time.process_time() - started) * 1000)
    postgres_ms = (cpu_seconds([backend]) - postgres_before) * 1000 / requests
    with CaptureQueriesContext(connection) as queries:
        submit_and_next(requests)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"test client, {requests} submit+next: {len(queries)} statements; CPU ms "
        f"per request: Python p50 {statistics.median(cpu):.1f} mean "
        f"{statistics.mean(cpu):.1f}, PostgreSQL mean {postgres_ms:.1f}; "
        f"load average {load}"
    )
    return queries


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--overlap", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--orm",
        action="store_true",
        help="claim and first-label write through the ORM path (reviewqueue/overlap.py)"
        " instead of the plain SQL",
    )
    parser.add_argument(
        "--profile",
        type=int,
        metavar="N",
        help="only time N submit+next in process (test client) and print SQL counts",
    )
    args = parser.parse_args()

    set_up_django(create=True)
    began = time.perf_counter()
    campaign_id, sessions = seed(args.tasks, args.annotators, args.overlap)
    print(f"seeded {args.tasks:,} tasks in {time.perf_counter() - began:.0f} s")
    if args.profile:
        for query in profile(campaign_id, sessions, args.profile):
            print("  ", query["sql"][:160])
        return

    access_log = Path(tempfile.mkdtemp()) / "access.log"
    server = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            "bench.queue_orm_wsgi" if args.orm else "assay.wsgi",
            "--bind",
            f"127.0.0.1:{args.port}",
            "--workers",
            str(args.workers),
            "--access-logfile",
            str(access_log),
            "--timeout",
            "300",
            "--access-logformat",
            "%(m)s %(U)s %(s)s %(D)s",
            *deployed_gunicorn_flags(),
        ],
        cwd=ROOT,
        env=os.environ,
        start_new_session=True,
    )
    try:
        for _ in range(100):
            try:
                http.client.HTTPConnection("127.0.0.1", args.port, timeout=1).request(
                    "GET", "/login/"
                )
                break
            except OSError:
                time.sleep(0.2)
        path = f"/annotation/campaigns/{campaign_id}/grade/"
        clock = Clock(len(sessions), args.seconds, server.pid)
        annotators = [
            Annotator(args.port, path, session, clock, index)
            for index, session in enumerate(sessions)
        ]
        for annotator in annotators:
            annotator.start()
        for annotator in annotators:
            annotator.join()
        cpu_after = clock.cpu()
        cpu = {name: cpu_after[name] - clock.cpu_before[name] for name in cpu_after}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=120)

    server_ms = [
        int(line.split()[3]) / 1000
        for line in access_log.read_text().splitlines()
        if line.startswith("POST ")
    ]
    client_ms = [s * 1000 for a in annotators for s in a.latencies]
    accepted = [(i, t) for i, a in enumerate(annotators) for t in a.accepted]
    errors = [e for a in annotators for e in a.errors]
    report(args, campaign_id, server_ms, client_ms, accepted, errors, cpu)


def report(args, campaign_id, server_ms, client_ms, accepted, errors, cpu):
    from django.db.models import Count

    from annotation.models import Assignment, GradingLabel, Task

    over_labelled = (
        GradingLabel.objects.filter(task__campaign_id=campaign_id, is_latest=True)
        .values("task")
        .annotate(n=Count("id"))
        .filter(n__gt=args.overlap)
        .count()
    )
    submitted = Assignment.objects.filter(
        campaign_id=campaign_id, status=Assignment.Status.SUBMITTED
    )
    over_held = (
        submitted.values("task").annotate(n=Count("id")).filter(n__gt=args.overlap)
    ).count()
    twice_by_one = (
        submitted.values("task", "user").annotate(n=Count("id")).filter(n__gt=1)
    ).count()
    stored = GradingLabel.objects.filter(task__campaign_id=campaign_id).count()
    counted = sum(
        Task.objects.filter(campaign_id=campaign_id).values_list(
            "label_count", flat=True
        )
    )
    print(
        f"annotators {args.annotators}, {args.seconds} s, overlap {args.overlap}, "
        f"gunicorn workers {args.workers} ({' '.join(deployed_gunicorn_flags())})"
    )
    print(
        f"submit+next requests: {len(server_ms):,} "
        f"({len(server_ms) / args.seconds:.0f}/s)"
    )
    for name, values in (("server", server_ms), ("client", client_ms)):
        if values:
            print(
                f"{name} ms: p50 {percentile(values, 50):.1f}  "
                f"p95 {percentile(values, 95):.1f}  p99 {percentile(values, 99):.1f}  "
                f"max {max(values):.1f}  mean {statistics.mean(values):.1f}"
            )
    requests = max(len(client_ms), 1)
    per_request = ", ".join(
        f"{name} {1000 * used / requests:.1f}" for name, used in cpu.items()
    )
    totals = ", ".join(f"{name} {used:.0f}" for name, used in cpu.items())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"CPU ms per submit+next: {per_request} (CPU s in the period: {totals}; "
        f"{os.cpu_count()} cores x {args.seconds} s); load average {load}"
    )
    print(
        f"accepted by the server: {len(accepted):,}; labels stored: {stored:,}; "
        f"label_count sum: {counted:,}"
    )
    print(
        f"tasks labelled beyond overlap: {over_labelled}; tasks submitted by more "
        f"than overlap: {over_held}; same person twice: {twice_by_one}"
    )
    print(f"errors: {len(errors)} {errors[:3]}")
    ok = (
        not errors
        and over_labelled == over_held == twice_by_one == 0
        and stored == len(accepted) == counted
    )
    print("integrity:", "OK" if ok else "FAILED")
    return ok


if __name__ == "__main__":
    main()
