"""The gateway's HTTP engine: the calls of one `run_requests` session, made on an
asyncio loop in a helper thread.

The session (judging/llm/gateway.py) prepares requests, claims their records and
hands the calls to make to an `Engine` as `PreparedCall`s; the engine puts one
`CallResult` per call on the session's queue, and the session records it. The
making is all here: a lane per endpoint (its client, its limiter from limits.py,
as many worker coroutines as the endpoint may have calls in flight), retries with
back-off and Retry-After within the call's deadline, re-asks of a reply its
validator refuses, and the words of each failure. Nothing here touches the
database; the session's thread does. AsyncOpenAI runs with max_retries=0: the
retry loop is ours.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import queue
import random
import ssl
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from django.conf import settings
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

REASK_TEXT = (
    "Your reply could not be used: {error} Reply again with only the JSON object "
    "described above, nothing else."
)


def limit_key(endpoint: Endpoint) -> str:
    # The creation time makes the key unique to this row even when a database is
    # rebuilt and ids are reused, so stale adaptive caps never carry over.
    return f"{endpoint.pk}-{int(endpoint.created_at.timestamp() * 1000)}"


@dataclass
class PreparedCall:
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
class CallResult:
    """What one `PreparedCall` came to: the reply and its parse, or the failure.
    Not yet on record: the session writes it into the call's `LLMCall` row."""

    prepared: PreparedCall
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


class Engine:
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

    def submit(self, items: list[PreparedCall]) -> None:
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

    def _add(self, items: list[PreparedCall]) -> None:
        if self.stopped:
            return
        for item in items:
            lane = self._lane(item.endpoint)
            if lane is None:
                self.results.put(
                    CallResult(
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
                    result = CallResult(
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
        self, client, limiter, item: PreparedCall, lease: _Lease
    ) -> CallResult:
        messages = list(item.messages)
        result = CallResult(item, LLMCall.Status.FAILED)
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
