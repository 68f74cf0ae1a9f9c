"""What a fault test checks of a real worker besides its run: no transaction left
open in PostgreSQL, the worker's memory, and that it still takes the next task."""

from pathlib import Path

from django.db import connection

IDLE_SECONDS = 2


def open_transactions() -> list[str]:
    """Queries of other sessions on the test database that have sat idle inside a
    transaction for IDLE_SECONDS or more (a row lock held across network I/O,
    say); a short transaction between two of its statements is not one."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT query FROM pg_stat_activity WHERE datname = current_database() "
            "AND state LIKE 'idle in transaction%%' AND pid <> pg_backend_pid() "
            "AND state_change < now() - make_interval(secs => %s)",
            [IDLE_SECONDS],
        )
        return [row[0] for row in cursor.fetchall()]


def peak_rss_bytes(pid: int) -> int:
    """The most resident memory the process and its children (the pool
    processes of a Celery worker) have each held: the largest VmHWM."""
    peaks = []
    for status in [Path(f"/proc/{pid}/status"), *_children_status(pid)]:
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) * 1024)
    return max(peaks)


def _children_status(pid: int) -> list[Path]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    found = []
    for child in children:
        found.append(Path(f"/proc/{child}/status"))
        found.extend(_children_status(int(child)))
    return found
