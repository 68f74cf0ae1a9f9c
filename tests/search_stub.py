"""A real HTTP server on 127.0.0.1 that speaks SearxNG's JSON search API.

    GET /search?q=<query>&format=json
    → {"query": …, "number_of_results": n, "results": [{"url", "title",
       "content", "engine", "score", …}], "answers": [], "suggestions": [],
       "unresponsive_engines": []}

Tests drive it through construction.search.client. Results come from a responder
(query → list of (url, title, content) or a `SearchReply`) or from scripts per
query marker; it can be told to misbehave: HTTP errors (with Retry-After), a body
that is not JSON, every engine unresponsive, replies slower than the client's
time-out, a required bearer key, answers that never end (`SearchReply(fault=…)`,
tests/slow_bodies.py: a trickle of one byte every `interval` seconds, an endless
body, keep-alive comments only, a 1 GiB body). A format other than json gets 403,
as SearxNG answers when the format is not enabled. Every request is recorded; GET
/stub/stats returns the counters (with the most requests it answered at once).

    with SearchStub(responder=lambda q: [("https://a.example/1", "A", "…")]) as s:
        service = do_save_search_service("t", adapter="searxng",
                                         base_url=s.base_url)
        ...
        assert s.request_count == 3
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests import slow_bodies


@dataclass
class SearchReply:
    """What the stub sends for one query: `results` as (url, title, content);
    `status` other than 200 sends an error page; `raw` is sent as the body as it
    is; `unresponsive` lists engines that failed; `delay` in seconds; `fault` one of
    tests/slow_bodies.MODES, `interval` seconds apart."""

    results: list[tuple[str, str, str]] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: str | None = None
    unresponsive: list[str] = field(default_factory=list)
    delay: float = 0.0
    fault: str = ""
    interval: float = 1.0


Responder = Callable[[str], "SearchReply | list"]


def no_results(query: str) -> SearchReply:
    return SearchReply()


@dataclass
class RecordedSearch:
    query: str
    status: int
    headers: Message  # looked up by name whatever its case, as HTTP does


class SearchStub:
    def __init__(self, *, responder: Responder = no_results, api_key: str = ""):
        self.responder = responder
        self.api_key = api_key
        self.requests: list[RecordedSearch] = []
        self.asked: Counter[str] = Counter()
        self._scripts: list[tuple[str, list[SearchReply]]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._stopped = threading.Event()
        self.in_flight = 0
        self.peak_in_flight = 0

    def script(self, marker: str, *replies: SearchReply) -> None:
        """Queries containing `marker` get `replies` in order; the last repeats."""
        with self._lock:
            self._scripts.append((marker, list(replies)))

    def clear_scripts(self) -> None:
        with self._lock:
            self._scripts.clear()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the stub first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def request_count(self) -> int:
        return len(self.requests)

    def queries(self) -> list[str]:
        return [request.query for request in self.requests]

    def stats(self) -> dict:
        with self._lock:
            return {
                "requests": len(self.requests),
                "distinct_queries": len(self.asked),
                "repeated_queries": sum(n - 1 for n in self.asked.values()),
                "in_flight": self.in_flight,
                "peak_in_flight": self.peak_in_flight,
            }

    def start(self, host: str = "127.0.0.1", port: int = 0) -> SearchStub:
        self._stopped.clear()
        handler = type("BoundHandler", (_Handler,), {"stub": self})
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}
        )
        thread.daemon = True
        thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()  # ends never-ending answers still being sent
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> SearchStub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _choose(self, query: str) -> SearchReply:
        with self._lock:
            for marker, queue in self._scripts:
                if marker in query:
                    return queue.pop(0) if len(queue) > 1 else queue[0]
        reply = self.responder(query)
        return reply if isinstance(reply, SearchReply) else SearchReply(results=reply)

    def _record(self, query: str, status: int, headers) -> None:
        with self._lock:
            self.requests.append(RecordedSearch(query, status, headers))
            self.asked[query] += 1


class _Handler(BaseHTTPRequestHandler):
    stub: SearchStub
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - silence per-request logs
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/stub/stats":
            self._send(200, json.dumps(self.stub.stats()))
            return
        if url.path.rstrip("/") != "/search":
            self._send(404, "Not found", "text/plain")
            return
        params = parse_qs(url.query)
        query = (params.get("q") or [""])[0]
        stub = self.stub
        if stub.api_key and self.headers.get("Authorization") != (
            f"Bearer {stub.api_key}"
        ):
            stub._record(query, 401, self.headers)
            self._send(401, "Unauthorized", "text/plain")
            return
        if (params.get("format") or [""])[0] != "json":
            stub._record(query, 403, self.headers)
            self._send(403, "Forbidden", "text/plain")
            return
        # In flight until its answer starts: a client cannot send its next
        # query on the same slot before then.
        with stub._lock:
            stub.in_flight += 1
            stub.peak_in_flight = max(stub.peak_in_flight, stub.in_flight)
        try:
            reply = stub._choose(query)
            if reply.delay:
                time.sleep(reply.delay)
        finally:
            with stub._lock:
                stub.in_flight -= 1
        try:
            if reply.fault:
                text = json.dumps(searxng_answer(query, reply), ensure_ascii=False)
                whole = slow_bodies.send(
                    self,
                    reply.fault,
                    status=reply.status,
                    body=text.encode(),
                    unit=b'{"results": [] ',
                    interval=reply.interval,
                    stopped=stub._stopped,
                )
                stub._record(query, reply.status if whole else 499, self.headers)
                return
            if reply.status != 200:
                self._send(reply.status, "Stub error", "text/plain", reply.headers)
            elif reply.raw is not None:
                self._send(200, reply.raw)
            else:
                answer = searxng_answer(query, reply)
                self._send(200, json.dumps(answer, ensure_ascii=False))
        except (BrokenPipeError, ConnectionResetError):
            stub._record(query, 499, self.headers)
            return
        stub._record(query, reply.status, self.headers)

    def _send(self, status, text, content_type="application/json", headers=None):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def searxng_answer(query: str, reply: SearchReply) -> dict:
    return {
        "query": query,
        "number_of_results": len(reply.results),
        "results": [
            {
                "url": url,
                "title": title,
                "content": content,
                "engine": "stub",
                "engines": ["stub"],
                "positions": [position],
                "score": 1.0 / position,
                "category": "general",
            }
            for position, (url, title, content) in enumerate(reply.results, start=1)
        ],
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [[name, "timeout"] for name in reply.unresponsive],
    }
