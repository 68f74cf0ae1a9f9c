"""A lean OpenAI-protocol stub for the throughput benches: one asyncio loop in its own
process, non-streamed POST /v1/chat/completions over real HTTP/1.1 (keep-alive),
the same latency, in-flight cap (429 with Retry-After beyond it), API key check and
GET /stub/stats counters as tests/openai_stub.py.

Why a second stub: the tests' stub (a thread per connection, with every scripted
misbehaviour) tops out near 183 calls/s at 300 ms latency and 64 in flight on this
2-core machine even for a bare aiohttp client — below the benches' 192 calls/s
target — so it measured itself rather than the gateway. This one adds a few ms per
call; the tests keep using the full stub.

    base_url, stop = start_in_subprocess(latency=0.3, max_in_flight=64,
                                         responder=module_level_function)
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.openai_stub import request_key, serve_in_subprocess
from tests.search_stub import searxng_answer


class LoopServer:
    """HTTP/1.1 with keep-alive on one asyncio loop; a subclass answers each
    request (`respond`) and counts what it answers."""

    base_path = ""

    def __init__(self):
        self.requests = 0
        self.in_flight = 0
        self.peak_in_flight = 0

    def entered(self) -> None:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    async def serve(self, reader, writer) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *lines = head.decode("latin-1").split("\r\n")
                method, path, _ = request_line.split(" ", 2)
                headers = {}
                for line in lines:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length else b""
                status, payload, extra = await self.respond(method, path, headers, raw)
                data = json.dumps(payload, ensure_ascii=False).encode()
                head_out = [
                    f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
                    "Content-Type: application/json",
                    f"Content-Length: {len(data)}",
                    *(f"{name}: {value}" for name, value in extra.items()),
                ]
                writer.write(("\r\n".join(head_out) + "\r\n\r\n").encode() + data)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def respond(self, method, path, headers, raw):
        raise NotImplementedError


class LeanStub(LoopServer):
    base_path = "/v1"

    def __init__(
        self,
        *,
        latency: float,
        max_in_flight: int | None,
        responder: Callable[[dict], Any],
        api_key: str | None = None,
    ):
        super().__init__()
        self.latency = latency
        self.max_in_flight = max_in_flight
        self.responder = responder
        self.api_key = api_key
        self.answered: Counter[str] = Counter()
        self.capped = 0

    def stats(self) -> dict:
        return {
            "requests": self.requests,
            "answered": sum(self.answered.values()),
            "distinct_answered": len(self.answered),
            "duplicate_answers": sum(n - 1 for n in self.answered.values()),
            "capped_429": self.capped,
            "peak_in_flight": self.peak_in_flight,
            "in_flight": self.in_flight,
        }

    async def respond(self, method, path, headers, raw):
        if method == "GET" and path == "/stub/stats":
            return 200, self.stats(), {}
        if method != "POST" or path.rstrip("/") != "/v1/chat/completions":
            return 404, _error(f"Unknown path {path}", "not_found"), {}
        body = json.loads(raw)
        self.requests += 1
        if body.get("stream"):
            return 400, _error("The lean stub does not stream", "stub_error"), {}
        if self.api_key is not None and (
            headers.get("authorization") != f"Bearer {self.api_key}"
        ):
            return 401, _error("Incorrect API key provided.", "invalid_api_key"), {}
        if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
            self.capped += 1
            return (
                429,
                _error("Too many requests in flight.", "rate_limit_exceeded"),
                {"Retry-After": "0"},
            )
        self.entered()
        try:
            reply = self.responder(body)
            # A tests' stub Reply is accepted; only its content is used.
            content = reply if isinstance(reply, str) else reply.content
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        self.answered[request_key(body)] += 1
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body["messages"])
        return 200, _completion(body, content, prompt_chars), {}


def _completion(body: dict, content: str, prompt_chars: int) -> dict:
    prompt_tokens, completion_tokens = prompt_chars // 4 + 1, len(content) // 4 + 1
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class LeanSearchStub(LoopServer):
    """SearxNG's JSON search API, GET /search?q=…&format=json, on the same loop:
    `responder` maps a query to a tests' `SearchReply` (its results and delay),
    with the counters of tests/search_stub.py's GET /stub/stats. The tests' stub
    starts a thread and a connection per query, which on this 2-core machine took
    CPU from the workers it measures."""

    def __init__(self, *, responder: Callable[[str], Any]):
        super().__init__()
        self.responder = responder
        self.asked: Counter[str] = Counter()

    def stats(self) -> dict:
        return {
            "requests": self.requests,
            "distinct_queries": len(self.asked),
            "repeated_queries": sum(n - 1 for n in self.asked.values()),
            "in_flight": self.in_flight,
            "peak_in_flight": self.peak_in_flight,
        }

    async def respond(self, method, path, headers, raw):
        url = urlsplit(path)
        if method == "GET" and url.path == "/stub/stats":
            return 200, self.stats(), {}
        if method != "GET" or url.path != "/search":
            return 404, {"error": f"Unknown path {url.path}"}, {}
        params = parse_qs(url.query)
        if params.get("format") != ["json"]:
            return 403, {"error": "Only the json format is enabled"}, {}
        query = params.get("q", [""])[0]
        self.requests += 1
        self.asked[query] += 1
        self.entered()
        try:
            reply = self.responder(query)
            await asyncio.sleep(reply.delay)
        finally:
            self.in_flight -= 1
        return 200, searxng_answer(query, reply), {}


def _error(message: str, code: str) -> dict:
    return {"error": {"message": message, "type": code, "param": None, "code": code}}


def _serve(conn, stub_class: type[LoopServer], kwargs: dict) -> None:
    async def main() -> None:
        stub = stub_class(**kwargs)
        server = await asyncio.start_server(stub.serve, "127.0.0.1", 0, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        conn.send(f"http://127.0.0.1:{port}{stub_class.base_path}")
        # Serve until the parent asks us to stop (or dies).
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)
        server.close()

    asyncio.run(main())


def start_in_subprocess(stub_class: type[LoopServer] | None = None, **kwargs):
    """Run a LeanStub (or `stub_class`) in its own process; returns (base_url,
    stop). `responder` must pickle (a module-level function, or a partial of one)
    and return the reply text (or a tests' stub Reply)."""
    return serve_in_subprocess(_serve, stub_class or LeanStub, kwargs)
