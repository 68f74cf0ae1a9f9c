"""A web export of any size arrives whole under the documented web server: gunicorn
started with docs/DEPLOY.md's own flags (only the address, the worker count and a
short --timeout changed) streams a JSONL export to a client that stalls in the
middle of it for longer than --timeout. A sync worker is killed mid-download there
(its heartbeat waits for the response to end): the file arrives cut, no error."""

import io
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from benchmark.actions import do_create_user
from benchmark.importing import do_import_items
from tests.benchmark.importing_helpers import industrybench_csv, industrybench_row
from tests.judging.labelling_fixtures import database_url_of_tests, wait_until

ROOT = Path(settings.BASE_DIR)
TIMEOUT = 5
ITEMS = 60


def documented_gunicorn_args() -> list[str]:
    """The flags of DEPLOY.md's `ExecStart=…/gunicorn assay.wsgi:application …`."""
    text = (ROOT / "docs/DEPLOY.md").read_text()
    match = re.search(
        r"ExecStart=\S+/gunicorn (assay\.wsgi:application(?:.*\\\n)+.*)", text
    )
    assert match, "DEPLOY.md has no gunicorn ExecStart line"
    return shlex.split(match.group(1).replace("\\\n", " "))


def with_flags(args: list[str], **values: str) -> list[str]:
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        name = arg.lstrip("-").replace("-", "_")
        if arg.startswith("--") and name in values:
            skip = True
            continue
        out.append(arg)
    for name, value in values.items():
        out += [f"--{name.replace('_', '-')}", value]
    return out


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def slow_download(port: int, path: str, session: str) -> bytes:
    """Take the first bytes, then stall for twice the worker --timeout, as a slow
    link would, before reading the rest: the server is still sending then."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n"
            f"Cookie: {settings.SESSION_COOKIE_NAME}={session}\r\n\r\n".encode()
        )
        received = bytearray(sock.recv(8192))
        time.sleep(2 * TIMEOUT)
        while chunk := sock.recv(2**20):
            received += chunk
    return bytes(received)


@pytest.fixture
def served(transactional_db, tmp_path):
    port = free_port()
    args = with_flags(
        documented_gunicorn_args(),
        bind=f"127.0.0.1:{port}",
        workers="1",
        timeout=str(TIMEOUT),
        access_logfile="/dev/null",
        # Its own control socket: another test run may be serving beside it.
        control_socket=str(tmp_path / "gunicorn.ctl"),
    )
    # Loaded once before the fork: a worker's own start-up on a busy test machine
    # could take longer than the short --timeout.
    args.append("--preload")
    env = {**os.environ, "DATABASE_URL": database_url_of_tests(), "DEBUG": "0"}
    process = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), *args],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )

    def listening():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    try:
        wait_until(listening, 60, "gunicorn did not start")
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.worker
def test_a_long_export_download_arrives_whole(served):
    # ~7 MB of JSONL: more than the kernel's socket buffers hold, so the worker
    # is still sending while the client stalls past --timeout.
    rows = [
        industrybench_row(f"ID{n:04d}", knowledge_text=f"{n} " + "知识" * 20000)
        for n in range(ITEMS)
    ]
    do_import_items(io.BytesIO(industrybench_csv(rows)), slug="big")
    client = Client()
    client.force_login(do_create_user("boss", "x" * 12, "manager"))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    url = reverse("benchmark:export_download", args=["big", "jsonl"])

    answer = slow_download(served, url, session)

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].endswith(b" 200 OK"), head[:200]
    lines = body.decode().splitlines()
    assert len(body) > 6_000_000
    assert len(lines) == ITEMS
    assert [json.loads(line)["id"] for line in lines] == [
        f"ID{n:04d}" for n in range(ITEMS)
    ]
