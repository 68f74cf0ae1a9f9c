"""The LLM gateway: every LLM call in Assay goes through `run_requests`.

    outcomes = run_requests(
        [LLMRequest(key=item.pk, endpoint=judge, template=template,
                    variables={...}, validate=score_validator(0, 3)) for item in …],
        on_results=save_my_results,      # called with lists of CallOutcome
        should_stop=lambda: run_was_cancelled(run_id),
    )

A request with `embedding_input` is an /v1/embeddings call instead: the same
cache, limits, retries and records, its vector in the call's `parsed_output`.

It renders each prompt, serves requests already recorded (the cache), makes the rest
concurrently under each endpoint's limits, retries what can be retried, re-asks
unparseable replies, records every call as an `LLMCall` row and hands the outcomes to
`on_results` in the same transaction, batch by batch. See judging/llm/GATEWAY.md.

Threads: the HTTP calls run on an asyncio loop in a helper thread (AsyncOpenAI with
max_retries=0; the retry loop is ours). All database work stays on the calling
thread, so the caller's connection and transaction rules apply unchanged.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import os
import queue
import random
import ssl
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx2
import openai
from django.conf import settings
from django.db import transaction
from openai._vendor.httpx_aiohttp import AiohttpTransport

from assay import outbound
from judging.llm import records
from judging.llm.limits import LimitSpec, make_limiter, redis_client_for_loop
from judging.llm.models import (
    Endpoint,
    LLMCall,
    PromptTemplate,
    api_key_env_allowed,
)
from judging.llm.outputs import OutputError, OutputValidator
from judging.llm.prompts import render_messages
from judging.llm.replies import (
    CONTENT_FILTER,
    REFUSAL_ERROR_CODES,
    provider_message,
    read_completion,
    read_embedding,
    reasoning_of,
    refusal_code,
)

logger = logging.getLogger(__name__)

FAIL_FAST_STATUSES = {400, 401, 403, 404, 422}
RATE_LIMIT_BUDGET_FACTOR = 4
FLUSH_SECONDS = 0.5
FEED_SECONDS = 0.05
FLUSH_MAX = 500
STOP_CHECK_SECONDS = 1.0
WAIT_POLL_SECONDS = 0.5


EMBEDDING_PURPOSE = "embedding"


REASK_TEXT = (
    "Your reply could not be used: {error} Reply again with only the JSON object "
    "described above, nothing else."
)


@dataclass(frozen=True)
class LLMRequest:
    """One logical call. `key` is yours: it comes back on the outcome.

    Give a `template` and its `variables`, or ready `messages` (then `purpose` names
    the cache scope). `validate` parses the reply text or raises OutputError; None
    accepts any text. `params` override the endpoint's default parameters; `model`
    replaces the endpoint's model id (a separate thinking model, say).

    `embedding_input`: text to embed; the request is then an /v1/embeddings call
    (no template or messages, purpose "embedding") and its parsed output the
    vector. Of the endpoint's parameters only its extra body is sent.

    `sample` numbers independent samples of one request (an evaluation run's
    trials): it is part of the request's identity, so sample 2 is never served
    sample 1's record, and is not sent.
    """

    key: Hashable
    endpoint: Endpoint
    template: PromptTemplate | None = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    messages: Sequence[Mapping[str, str]] | None = None
    purpose: str = ""
    validate: OutputValidator | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    model: str = ""
    embedding_input: str | None = None
    sample: int = 0


@dataclass(frozen=True)
class CallOutcome:
    key: Hashable
    call: LLMCall
    cached: bool

    @property
    def ok(self) -> bool:
        return self.call.status == LLMCall.Status.OK

    @property
    def provider_refused(self) -> bool:
        """The provider, not the model, declined: a `content_filter` finish or an
        HTTP error saying its content filter refused the request."""
        return self.call.finish_reason == CONTENT_FILTER


@dataclass
class GatewayStats:
    requested: int = 0
    cached: int = 0
    made: int = 0
    ok: int = 0
    unparseable: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal = Decimal(0)
    stopped: bool = False
    seconds: float = 0.0
    resent: int = 0  # calls in flight at a kill, sent again with their key
    joined: int = 0  # requests that waited for another session's identical call

    def count(self, call: LLMCall, cached: bool) -> None:
        self.cached += cached
        self.made += not cached
        if call.status == LLMCall.Status.OK:
            self.ok += 1
        elif call.status == LLMCall.Status.UNPARSEABLE:
            self.unparseable += 1
        else:
            self.failed += 1
        if not cached:
            self.input_tokens += call.input_tokens
            self.output_tokens += call.output_tokens
            self.cost += call.cost or 0


def request_hash(
    endpoint: Endpoint,
    model: str,
    messages: Sequence[Mapping],
    params: Mapping,
    sample: int = 0,
    *,
    embedding: bool = False,
):
    """sha256 of the exact request: provider URL, model, parameters, messages,
    the sample number when it is not the first, and, for an embeddings call,
    which API (so every earlier chat request's hash stays)."""
    identity = {
        "base_url": endpoint.base_url.rstrip("/"),
        "model": model,
        "params": params,
        "messages": messages,
    }
    if sample:
        identity["sample"] = sample
    if embedding:
        identity["api"] = "embeddings"
    canonical = json.dumps(
        identity,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def call_cost(endpoint: Endpoint, input_tokens: int, output_tokens: int):
    if endpoint.price_input_per_1k is None and endpoint.price_output_per_1k is None:
        return None
    return (
        (endpoint.price_input_per_1k or 0) * input_tokens
        + (endpoint.price_output_per_1k or 0) * output_tokens
    ) / 1000


def limit_key(endpoint: Endpoint) -> str:
    # The creation time makes the key unique to this row even when a database is
    # rebuilt and ids are reused, so stale adaptive caps never carry over.
    return f"{endpoint.pk}-{int(endpoint.created_at.timestamp() * 1000)}"


@dataclass
class _Prepared:
    """A request ready to send; several keys may share it (identical requests)."""

    keys: list[Hashable]
    endpoint: Endpoint
    model: str
    template: PromptTemplate | None
    purpose: str
    scope: str
    hash: str
    messages: list[dict]
    params: dict
    validate: OutputValidator | None
    embedding: bool = False
    # Its LLMCall row, claimed before sending (judging/llm/records.py): "new",
    # "failed" (made again) or "orphan" (in flight at a kill, sent again).
    call_id: int | None = None
    idempotency_key: str = ""
    taken_from: str = ""
    started: bool = False  # picked up by the engine (maybe sent)


@dataclass
class _Result:
    prepared: _Prepared
    status: str
    raw: str = ""
    reasoning: str = ""
    parsed: Any = None
    parse_errors: list = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    attempts: int = 0
    error: str = ""
    finish_reason: str = ""


def prepare(
    requests: Sequence[LLMRequest], scope: str | None
) -> tuple[list[_Prepared], dict[Hashable, str]]:
    """Render and hash each request; identical requests share one _Prepared.

    Returns the prepared list and, for requests that cannot even be rendered, the
    error by key.
    """
    by_identity: dict[tuple[str, str], _Prepared] = {}
    errors: dict[Hashable, str] = {}
    for request in requests:
        embedding = request.embedding_input is not None
        purpose = request.template.purpose if request.template else request.purpose
        try:
            if embedding:
                messages = [{"role": "input", "content": request.embedding_input}]
                purpose = EMBEDDING_PURPOSE
            elif request.messages is not None:
                messages = [dict(m) for m in request.messages]
            else:
                messages = render_messages(request.template, request.variables)
        except KeyError as error:
            errors[request.key] = str(error)
            continue
        params = {**_endpoint_params(request.endpoint, embedding), **request.params}
        model = request.model or request.endpoint.model
        digest = request_hash(
            request.endpoint,
            model,
            messages,
            params,
            request.sample,
            embedding=embedding,
        )
        call_scope = scope or purpose or "adhoc"
        identity = (digest, call_scope)
        if identity in by_identity:
            by_identity[identity].keys.append(request.key)
            continue
        by_identity[identity] = _Prepared(
            keys=[request.key],
            endpoint=request.endpoint,
            model=model,
            template=request.template,
            purpose=purpose,
            scope=call_scope,
            hash=digest,
            messages=messages,
            params=params,
            validate=request.validate,
            embedding=embedding,
        )
    return list(by_identity.values()), errors


def _endpoint_params(endpoint: Endpoint, embedding: bool) -> dict:
    """The endpoint's default request parameters; an embeddings call takes only
    its extra body (temperature and max_tokens mean nothing there)."""
    params = endpoint.default_params
    if embedding:
        return {"extra_body": params["extra_body"]} if "extra_body" in params else {}
    return params


def run_requests(
    requests: Sequence[LLMRequest],
    *,
    on_results: OnResults | None = None,
    scope: str | None = None,
    should_stop: Callable[[], bool] | None = None,
    feed: Feed | None = None,
) -> GatewayStats:
    """Make (or serve from the record) every request; see the module docstring.

    `scope` None shares the cache per purpose: an identical request made before is
    not paid for again. A run that wants fresh calls passes its own scope string
    (e.g. "labelling-run-12"); calls are then recorded, and on resume served, within
    that scope only. `on_results` runs inside the transaction that writes the batch's
    LLMCall rows, on the calling thread; the requests it returns (say, the judge's
    call for an answer just received) are made by the same engine beside the calls
    still in flight, so one provider's latency need not idle the others.
    `should_stop` is checked about once a second; when it returns True, calls not
    yet made are abandoned.

    `feed` brings requests that become ready outside the gateway (say, after a web
    search): it is called on the calling thread about every FEED_SECONDS while the
    session runs and returns the requests ready now (maybe none), or None once it
    will bring no more; the session ends when nothing is in flight and the feed
    has said None (or the run is stopped).
    """
    started = time.monotonic()
    session = _Session(on_results, scope, should_stop, feed)
    try:
        session.submit(requests)
        session.collect()
    finally:
        session.close()
    session.stats.seconds = time.monotonic() - started
    return session.stats


OnResults = Callable[[list["CallOutcome"]], "Sequence[LLMRequest] | None"]
Feed = Callable[[], "Sequence[LLMRequest] | None"]


class _Session:
    """One `run_requests` call, on the caller's thread: prepares and serves requests
    (the first ones and every follow-up), hands the rest to one engine, and writes
    its results batch by batch."""

    def __init__(self, on_results, scope, should_stop, feed=None):
        self.on_results = on_results
        self.scope = scope
        self.should_stop = should_stop
        self.feed = feed
        self.stats = GatewayStats()
        self.results: queue.Queue = queue.Queue()
        self.engine: _Engine | None = None
        self.thread: threading.Thread | None = None
        # A follow-up identical to a call in flight waits for that call instead of
        # paying for it twice (prepare() merges identical requests only per batch).
        self.in_flight: dict[tuple[str, str], _Prepared] = {}
        # Requests whose identical call another live session is making.
        self.waiting: dict[tuple[str, str], _Prepared] = {}
        self.token = records.new_token()
        records.keep_alive(self.token)
        self.alive_at = time.monotonic()

    def submit(self, requests: Sequence[LLMRequest]) -> None:
        while requests:
            self.stats.requested += len(requests)
            prepared, render_errors = prepare(requests, self.scope)
            if render_errors:
                raise ValueError(
                    "Cannot render prompts: "
                    + "; ".join(f"{k}: {v}" for k, v in list(render_errors.items())[:5])
                )
            fresh = []
            for item in prepared:
                identity = (item.hash, item.scope)
                joined = self.in_flight.get(identity) or self.waiting.get(identity)
                if joined is not None:
                    joined.keys.extend(item.keys)
                else:
                    fresh.append(item)
            requests = self._claimed(records.claim(fresh, self.token))

    def _claimed(self, claims: records.Claims) -> list[LLMRequest]:
        """Send what is ours to send, wait for what another session sends, serve
        the rest; the follow-ups of what was served."""
        self.stats.resent += claims.resent
        for item in claims.waiting:
            if (item.hash, item.scope) not in self.waiting:
                self.stats.joined += len(item.keys)
            self.waiting[(item.hash, item.scope)] = item
        for item, _ in claims.cached:
            self.waiting.pop((item.hash, item.scope), None)
        if claims.to_make:
            for item in claims.to_make:
                self.waiting.pop((item.hash, item.scope), None)
                self.in_flight[(item.hash, item.scope)] = item
            self._engine().submit(claims.to_make)
        return self._serve_cached(claims.cached)

    def _serve_cached(self, cached_calls) -> list[LLMRequest]:
        if not cached_calls:
            return []
        outcomes = [
            CallOutcome(key=key, call=call, cached=True)
            for item, call in cached_calls
            for key in item.keys
        ]
        for _, call in cached_calls:
            self.stats.count(call, cached=True)
        if self.on_results is None:
            return []
        with transaction.atomic():
            return list(self.on_results(outcomes) or [])

    def _engine(self) -> _Engine:
        if self.engine is None:
            self.engine = _Engine(self.results)
            self.thread = threading.Thread(
                target=self.engine.run, name="llm-gateway", daemon=True
            )
            self.thread.start()
        return self.engine

    def collect(self) -> None:
        """Write results until every call is in, the run is stopped, or the engine
        fails."""
        last_stop_check = last_wait_check = time.monotonic()
        while (self.in_flight or self.waiting or self.feed) and not (
            self.engine is not None and self.engine.stopped
        ):
            if self.in_flight:
                quick = self.feed or self.waiting
                batch = _drain(
                    self.results, timeout=FEED_SECONDS if quick else FLUSH_SECONDS
                )
                if batch:
                    self.submit(self._write(batch))
            else:
                time.sleep(FEED_SECONDS)
            now = time.monotonic()
            if now - self.alive_at > records.session_seconds() / 3:
                records.keep_alive(self.token)
                self.alive_at = now
            if self.waiting and now - last_wait_check > WAIT_POLL_SECONDS:
                last_wait_check = now
                waited = records.claim(
                    list(self.waiting.values()), self.token, serve_failed=True
                )
                self.submit(self._claimed(waited))
            if self.feed:
                more = self.feed()
                if more is None:
                    self.feed = None
                else:
                    self.submit(list(more))
            if (
                self.should_stop
                and time.monotonic() - last_stop_check > STOP_CHECK_SECONDS
            ):
                last_stop_check = time.monotonic()
                if self.should_stop():
                    self.stats.stopped = True
                    self.feed = None
                    self.waiting.clear()
                    if self.engine is not None:
                        self.engine.stop()
        if self.engine is not None and self.engine.crashed:
            raise RuntimeError(
                "The gateway's event loop failed"
            ) from self.engine.crashed

    def close(self) -> None:
        try:
            if self.engine is None:
                return
            self.engine.stop()
            self.thread.join(timeout=10)
            # Calls finishing while we stopped are recorded too: they were paid for.
            leftover = _drain(self.results, timeout=0)
            if leftover:
                self._write(leftover)
            records.release(list(self.in_flight.values()), self.token)
        finally:
            records.end_session(self.token)

    def _write(self, batch: list[_Result]) -> list[LLMRequest]:
        for result in batch:
            item = result.prepared
            self.in_flight.pop((item.hash, item.scope), None)
        return _write_batch(batch, self.stats, self.on_results)


def _drain(results: queue.Queue, *, timeout: float) -> list[_Result]:
    batch = []
    deadline = time.monotonic() + timeout
    while len(batch) < FLUSH_MAX:
        wait = deadline - time.monotonic()
        try:
            batch.append(
                results.get(timeout=wait) if wait > 0 else results.get_nowait()
            )
        except queue.Empty:
            break
    return batch


def _write_batch(batch: list[_Result], stats, on_results) -> list[LLMRequest]:
    """Record the batch's calls (committed first: a reply paid for is on record
    before anything else can fail), then hand their outcomes to `on_results` in a
    transaction of its own; returns the follow-up requests it asked for."""
    rows = []
    for result in batch:
        item = result.prepared
        rows.append(
            records.answered_row(
                item,
                raw_response=records.storable(result.raw),
                reasoning_text=records.storable(result.reasoning),
                parsed_output=records.storable(result.parsed),
                parse_errors=records.storable(result.parse_errors),
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                latency_ms=result.latency_ms,
                attempts=result.attempts,
                status=result.status,
                error=records.storable(result.error),
                finish_reason=result.finish_reason[:40],
                cost=call_cost(
                    item.endpoint, result.input_tokens, result.output_tokens
                ),
            )
        )
    calls = records.save(rows)
    outcomes = []
    for result, call in zip(batch, calls, strict=True):
        stats.count(call, cached=False)
        outcomes.extend(
            CallOutcome(key=key, call=call, cached=False)
            for key in result.prepared.keys
        )
    if on_results is None:
        return []
    with transaction.atomic():
        return list(on_results(outcomes) or [])


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process, built as the SDK builds its own
    (its HTTP library's defaults): building one loads the CA bundle, about 75 ms of
    CPU, and every engine opens a client per endpoint."""
    return httpx2.create_ssl_context()


class _Lease:
    """The slot a worker coroutine holds between two calls: (token, outcome)."""

    held: tuple[str, str] | None = None

    def take(self) -> tuple[str, str] | None:
        held, self.held = self.held, None
        return held


@dataclass
class _Lane:
    """One endpoint's share of the engine: its client, limiter and queue of calls,
    and how many worker coroutines are taking from that queue."""

    limiter: Any
    client: Any
    pending: asyncio.Queue
    max_workers: int
    workers: int = 0


class _Engine:
    """Runs prepared calls on an asyncio loop in its own thread. The caller thread
    `submit`s calls at any time until it `stop`s the engine."""

    def __init__(self, results: queue.Queue):
        self.results = results
        self.stopped = False
        self.crashed: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Event()
        self._lanes: dict[int, _Lane | None] = {}
        self._tasks: set[asyncio.Task] = set()
        self._closers: list[Callable] = []
        self.timeout = settings.LLM_REQUEST_TIMEOUT
        self.max_attempts = settings.LLM_MAX_ATTEMPTS
        self.parse_retries = settings.LLM_PARSE_RETRIES
        self.backoff_base = settings.LLM_BACKOFF_BASE_MS / 1000
        self.backoff_max = settings.LLM_BACKOFF_MAX_MS / 1000
        self.deadline = settings.LLM_CALL_DEADLINE_SECONDS
        self.max_reply_chars = settings.LLM_MAX_REPLY_CHARS
        self.max_body_bytes = settings.LLM_MAX_BODY_BYTES

    def run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # noqa: BLE001 - reported to the caller thread
            if not self.stopped:
                self.crashed = error
        finally:
            self.stopped = True
            self._started.set()

    def submit(self, items: list[_Prepared]) -> None:
        """From the caller thread: queue `items` on the loop."""
        self._started.wait()
        loop = self._loop
        if self.stopped or loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._add, items)
        except RuntimeError:
            pass  # the loop closed in between; the caller sees `stopped`

    def stop(self) -> None:
        self.stopped = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._finish)
            except RuntimeError:
                pass  # the loop closed in between

    def _finish(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._done.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        self._redis = redis_client_for_loop()
        self._started.set()
        try:
            await self._done.wait()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
        finally:
            for close in reversed(self._closers):
                await close()
            if self._redis is not None:
                await self._redis.aclose()

    def _add(self, items: list[_Prepared]) -> None:
        if self.stopped:
            return
        for item in items:
            lane = self._lane(item.endpoint)
            if lane is None:
                self.results.put(
                    _Result(
                        item,
                        LLMCall.Status.FAILED,
                        error=f"The environment variable {item.endpoint.api_key_env} "
                        "holding this endpoint's API key is not set on the worker, "
                        "or its name does not match LLM_API_KEY_ENV_PATTERN.",
                    )
                )
                continue
            lane.pending.put_nowait(item)
            if lane.workers < lane.max_workers:
                lane.workers += 1
                task = asyncio.create_task(self._worker(lane))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    def _lane(self, endpoint: Endpoint) -> _Lane | None:
        """The endpoint's lane, opened on first use; None (and every call failed)
        when the worker has no API key for it."""
        if endpoint.pk in self._lanes:
            lane = self._lanes[endpoint.pk]
        else:
            lane = self._lanes[endpoint.pk] = self._open_lane(endpoint)
        return lane

    def _open_lane(self, endpoint: Endpoint) -> _Lane | None:
        api_key = (
            os.environ.get(endpoint.api_key_env, "")
            if api_key_env_allowed(endpoint.api_key_env)
            else ""
        )
        if not api_key:
            return None
        # The SDK's aiohttp transport (the `openai[aiohttp]` extra): its C parser
        # and connection pool cost a fraction of the CPU of the default pure-Python
        # one per call. Its time-outs are per read; assay.outbound bounds the whole
        # exchange and the bytes read.
        transport = outbound.AsyncBoundedTransport(
            AiohttpTransport(
                verify=_tls_context(), limits=openai.DEFAULT_CONNECTION_LIMITS
            ),
            seconds=self.timeout,
            max_bytes=self.max_body_bytes,
        )
        client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=api_key,
            max_retries=0,
            timeout=self.timeout,
            http_client=openai.DefaultAioHttpClient(transport=transport),
        )
        self._closers.append(client.close)
        limiter = make_limiter(
            LimitSpec(
                key=limit_key(endpoint),
                max_concurrency=endpoint.max_concurrency,
                rpm=endpoint.rpm_limit,
                lease_seconds=settings.LLM_LEASE_SECONDS,
            ),
            self._redis,
        )
        keeper = asyncio.create_task(limiter.keep_leases())

        async def stop_keeper():
            keeper.cancel()

        self._closers.append(stop_keeper)
        return _Lane(
            limiter=limiter,
            client=client,
            pending=asyncio.Queue(),
            max_workers=endpoint.max_concurrency,
        )

    async def _worker(self, lane: _Lane) -> None:
        lease = _Lease()
        try:
            while not self.stopped:
                try:
                    item = lane.pending.get_nowait()
                except asyncio.QueueEmpty:
                    return
                item.started = True
                try:
                    result = await self._call_and_parse(
                        lane.client, lane.limiter, item, lease
                    )
                except Exception as error:  # noqa: BLE001 - recorded, never lost
                    logger.exception("LLM call failed unexpectedly")
                    result = _Result(
                        item,
                        LLMCall.Status.FAILED,
                        error=f"Unexpected error: {error!r}",
                    )
                self.results.put(result)
        finally:
            # Counted down before any await: `_add` must never count on a worker
            # that has already seen its queue empty.
            lane.workers -= 1
            if lease.held is not None:
                await lane.limiter.release(*lease.take())

    async def _call_and_parse(
        self, client, limiter, item: _Prepared, lease: _Lease
    ) -> _Result:
        messages = list(item.messages)
        result = _Result(item, LLMCall.Status.FAILED)
        if item.embedding:
            reply = await self._call_with_retries(
                client, limiter, item, messages, lease, item.idempotency_key
            )
            result.attempts = reply["attempts"]
            result.latency_ms = reply["latency_ms"]
            result.input_tokens = reply["input_tokens"]
            result.error = reply["error"]
            if not reply["error"]:
                result.parsed = reply["vector"]
                result.status = LLMCall.Status.OK
            return result
        for ask in range(self.parse_retries + 1):
            # A re-ask is another request: it gets a key of its own (the same one
            # when it is made again after a kill).
            key = f"{item.idempotency_key}-{ask}" if ask else item.idempotency_key
            reply = await self._call_with_retries(
                client, limiter, item, messages, lease, key
            )
            result.attempts += reply["attempts"]
            result.latency_ms += reply["latency_ms"]
            result.input_tokens += reply["input_tokens"]
            result.output_tokens += reply["output_tokens"]
            result.finish_reason = reply.get("finish_reason", "")
            if reply["error"]:
                result.error = reply["error"]
                result.status = LLMCall.Status.FAILED
                return result
            result.raw = reply["content"]
            result.reasoning = reply["reasoning"]
            if len(result.raw) + len(result.reasoning) > self.max_reply_chars:
                size = len(result.raw) + len(result.reasoning)
                result.raw = result.raw[: self.max_reply_chars]
                result.reasoning = result.reasoning[: self.max_reply_chars]
                result.error = (
                    f"The reply has {size:,} characters, over LLM_MAX_REPLY_CHARS "
                    f"({self.max_reply_chars:,}); only its start is kept."
                )
                result.status = LLMCall.Status.FAILED
                return result
            if item.validate is None:
                result.parsed = reply["content"]
                result.status = LLMCall.Status.OK
                return result
            try:
                result.parsed = item.validate(reply["content"])
            except OutputError as error:
                result.parse_errors.append(
                    {"reply": reply["content"], "error": str(error)}
                )
                if result.finish_reason == CONTENT_FILTER:
                    break  # the provider declined: asking again changes nothing
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply["content"]},
                    {"role": "user", "content": REASK_TEXT.format(error=error)},
                ]
                continue
            result.status = LLMCall.Status.OK
            result.error = ""
            return result
        result.status = LLMCall.Status.UNPARSEABLE
        result.parsed = None
        result.error = (
            f"No usable reply after {self.parse_retries + 1} tries: "
            f"{result.parse_errors[-1]['error']}"
        )
        return result

    async def _call_with_retries(
        self, client, limiter, item, messages, lease, idempotency_key
    ) -> dict:
        """One HTTP exchange with retries; returns content or a final error.

        After a success the slot stays held in `lease`, so that the worker's next
        call swaps it for a new one in a single round trip to the limiter.
        """
        attempts = 0
        rate_limited = 0
        started = time.monotonic()
        params = dict(item.params)
        extra_body = params.pop("extra_body", None)
        while True:
            attempts += 1
            token = await limiter.acquire(lease.take())
            outcome = "error"
            try:
                # The call's deadline bounds the attempt in flight too, not only
                # the wait before the next one.
                with outbound.deadline(started + self.deadline):
                    reply = await self._exchange(
                        client, item, messages, params, extra_body, idempotency_key
                    )
                outcome = "ok"
                lease.held = (token, outcome)
                reply.update(
                    attempts=attempts,
                    latency_ms=int((time.monotonic() - started) * 1000),
                    error="",
                )
                return reply
            except openai.APIStatusError as error:
                status = error.status_code
                message = provider_message(error)
                if status == 429:
                    outcome = "rate_limited"
                    rate_limited += 1
                if status in FAIL_FAST_STATUSES:
                    failure = _failure(attempts, started, f"HTTP {status}: {message}")
                    if refusal_code(error) in REFUSAL_ERROR_CODES:
                        failure["finish_reason"] = CONTENT_FILTER
                    return failure
                retry_after = _retry_after(error.response.headers)
                last_error = f"HTTP {status}: {message}"
            except (openai.APIConnectionError, httpx2.HTTPError) as error:
                # APITimeoutError included; a streamed body's errors come unwrapped.
                retry_after = None
                bound = outbound.bound_error(error)
                if isinstance(bound, outbound.BodyTooLarge):
                    return _failure(
                        attempts,
                        started,
                        f"{bound} (LLM_MAX_BODY_BYTES: {self.max_body_bytes:,}).",
                    )
                if bound is not None and bound.narrowed:
                    last_error = (
                        "Timed out: no complete answer within "
                        f"LLM_CALL_DEADLINE_SECONDS ({self.deadline} s)"
                    )
                elif bound is not None:
                    last_error = (
                        f"Timed out after {self.timeout} s (no complete answer)"
                    )
                elif isinstance(error, openai.APITimeoutError):
                    last_error = _timeout_or_dropped(error, self.timeout)
                else:
                    last_error = f"Connection error: {_cause_of(error)}"
            except ValueError as error:
                # MalformedReply, and a body that is not JSON at all (two objects,
                # a cut-off one): the SDK's JSONDecodeError.
                retry_after = None
                last_error = f"Malformed response: {error}"
            finally:
                if outcome != "ok":
                    await limiter.release(token, outcome)
            backoff = random.uniform(
                0, min(self.backoff_max, self.backoff_base * 2 ** (attempts - 1))
            )
            wait = max(retry_after or 0.0, backoff)
            # 429s have a budget of their own, so that a rate-limited provider is
            # waited for, but not for ever; the deadline bounds any mix of faults.
            exhausted = (
                attempts - rate_limited >= self.max_attempts
                or rate_limited >= self.max_attempts * RATE_LIMIT_BUDGET_FACTOR
                or time.monotonic() + wait - started > self.deadline
            )
            if exhausted or self.stopped:
                return _failure(
                    attempts, started, f"{last_error} (gave up after {attempts} tries)"
                )
            await asyncio.sleep(wait)

    async def _exchange(
        self, client, item, messages, params, extra_body, idempotency_key
    ) -> dict:
        # Every try of one request carries its key: a provider that honours it
        # makes (and charges for) the request once.
        headers = (
            {records.IDEMPOTENCY_HEADER: idempotency_key} if idempotency_key else {}
        )
        if item.embedding:
            body = {
                "model": item.model,
                "input": messages[0]["content"],
                "encoding_format": "float",
                **params,
            }
            body.update(extra_body or {})
            data = await client.post(
                "/embeddings", body=body, cast_to=object, options={"headers": headers}
            )
            return read_embedding(data)
        if not item.endpoint.stream:
            # The SDK's generic POST: same client, errors and timeouts as
            # chat.completions.create, without its per-request walk over the params
            # and model construction — a third of the gateway's CPU per call.
            body = {"model": item.model, "messages": messages, **params}
            body.update(extra_body or {})
            data = await client.post(
                "/chat/completions",
                body=body,
                cast_to=object,
                options={"headers": headers},
            )
            return read_completion(data)
        create = client.chat.completions.create
        stream = await create(
            extra_headers=headers,
            model=item.model,
            messages=messages,
            extra_body=extra_body,
            stream=True,
            stream_options={"include_usage": True},
            **params,
        )
        content, reasoning, usage, finish_reason = [], [], None, ""
        async for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                finish_reason = choice.finish_reason or finish_reason
                delta = choice.delta
                if delta.content:
                    content.append(delta.content)
                reasoning_piece = reasoning_of(delta)
                if reasoning_piece:
                    reasoning.append(reasoning_piece)
        return {
            "content": "".join(content),
            "reasoning": "".join(reasoning),
            "input_tokens": usage.prompt_tokens if usage else 0,
            "output_tokens": usage.completion_tokens if usage else 0,
            "finish_reason": finish_reason,
        }


def _timeout_or_dropped(error: openai.APITimeoutError, timeout: float) -> str:
    """The SDK's aiohttp transport reports every dropped connection (a reset, a
    server that hangs up) as a time-out; say which it was."""
    cause = error
    while cause.__cause__ is not None or cause.__context__ is not None:
        cause = cause.__cause__ or cause.__context__
    if cause is error or isinstance(cause, TimeoutError):
        return f"Timed out after {timeout} s"
    return f"Connection error: {cause.__class__.__name__}: {cause}"


def _cause_of(error: Exception) -> str:
    """An SDK connection error names no cause ("Connection error."); say which."""
    cause = error.__cause__ or error.__context__
    if isinstance(error, openai.APIConnectionError) and cause is not None:
        return f"{cause.__class__.__name__}: {cause}"
    return str(error) or error.__class__.__name__


def _retry_after(headers) -> float | None:
    raw = headers.get("retry-after-ms")
    if raw:
        try:
            return float(raw) / 1000
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            return None
    return None


def _failure(attempts: int, started: float, error: str) -> dict:
    return {
        "content": "",
        "reasoning": "",
        "input_tokens": 0,
        "output_tokens": 0,
        "attempts": attempts,
        "latency_ms": int((time.monotonic() - started) * 1000),
        "error": error,
    }


def run_one(request: LLMRequest, *, scope: str | None = None) -> LLMCall:
    """Convenience for a single call (test connection, a one-off); blocks."""
    calls: list[LLMCall] = []
    run_requests(
        [request],
        scope=scope,
        on_results=lambda o: calls.extend(outcome.call for outcome in o),
    )
    return calls[0]
