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

Threads: the HTTP calls run on an asyncio loop in a helper thread (the `Engine` of
judging/llm/engine.py: lanes, limits, retries, re-asks). All database work stays on
the calling thread, so the caller's connection and transaction rules apply unchanged.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction

from judging.llm import records
from judging.llm.engine import CallResult, Engine, PreparedCall
from judging.llm.models import Endpoint, LLMCall, PromptTemplate
from judging.llm.outputs import OutputValidator
from judging.llm.prompts import render_messages
from judging.llm.replies import CONTENT_FILTER

FLUSH_SECONDS = 0.5
FEED_SECONDS = 0.05
FLUSH_MAX = 500
STOP_CHECK_SECONDS = 1.0
WAIT_POLL_SECONDS = 0.5


EMBEDDING_PURPOSE = "embedding"


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


def prepare(
    requests: Sequence[LLMRequest], scope: str | None
) -> tuple[list[PreparedCall], dict[Hashable, str]]:
    """Render and hash each request; identical requests share one PreparedCall.

    Returns the prepared list and, for requests that cannot even be rendered, the
    error by key.
    """
    by_identity: dict[tuple[str, str], PreparedCall] = {}
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
        by_identity[identity] = PreparedCall(
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
        self.engine: Engine | None = None
        self.thread: threading.Thread | None = None
        # A follow-up identical to a call in flight waits for that call instead of
        # paying for it twice (prepare() merges identical requests only per batch).
        self.in_flight: dict[tuple[str, str], PreparedCall] = {}
        # Requests whose identical call another live session is making.
        self.waiting: dict[tuple[str, str], PreparedCall] = {}
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

    def _engine(self) -> Engine:
        if self.engine is None:
            self.engine = Engine(self.results)
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

    def _write(self, batch: list[CallResult]) -> list[LLMRequest]:
        for result in batch:
            item = result.prepared
            self.in_flight.pop((item.hash, item.scope), None)
        return _write_batch(batch, self.stats, self.on_results)


def _drain(results: queue.Queue, *, timeout: float) -> list[CallResult]:
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


def _write_batch(batch: list[CallResult], stats, on_results) -> list[LLMRequest]:
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


def run_one(request: LLMRequest, *, scope: str | None = None) -> LLMCall:
    """Convenience for a single call (test connection, a one-off); blocks."""
    calls: list[LLMCall] = []
    run_requests(
        [request],
        scope=scope,
        on_results=lambda o: calls.extend(outcome.call for outcome in o),
    )
    return calls[0]
