"""Sending search queries (worker side only; a web request never calls this).

`search_all(service, queries)` answers each query from its `SearchCall` record
when one is ok, and sends the rest (a `SearchStream` sends them as they are
added, for a caller that has them one by one) — at most the service's
`max_concurrency` in flight at once over every worker process and host (the
gateway's limiter, judging.llm.limits: leases in Redis, the cap cut on a 429 and
regained by successes), each try within SEARCH_TIMEOUT_SECONDS whole (connecting
and every read: a service that trickles is cut off, assay/outbound.py) and an
answer of at most SEARCH_MAX_BODY_BYTES, tried up to SEARCH_MAX_ATTEMPTS times —
through the service's adapter. Time-outs, connection errors, 429, 5xx and an
answer the adapter cannot read are tried again after an exponential back-off;
other statuses (400, 401, 403, 404) fail at once. The outcome of every query sent
is recorded, ok with its top results or failed with the reason, and a failed one
is sent again by the next call that needs it.

A stream's queries run on an asyncio loop in a helper thread (the limiter is
async, as the gateway's calls use it): each waits there for a slot of the
service's limit and is sent on the same loop, through an aiohttp client
(assay/outbound.py) that connects only to the addresses checked for the service's
host (assay/targets.py: DNS rebinding) — as many in flight as the service allows.
A thread per exchange and the hand-off to it cost a quarter more worker CPU per
query (docs/BENCHMARKS.md, #29). The ORM stays on the caller's thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import queue
import random
import threading
import time
from dataclasses import dataclass

import httpx2
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from assay import outbound
from assay.targets import connectable
from construction.search.adapters import ADAPTERS, SearchError, top_hits
from construction.search.models import SearchCall, SearchService
from judging.llm.limits import LimitSpec, make_limiter, redis_client_for_loop

logger = logging.getLogger(__name__)

ERROR_CHARS = 500
RETRY_AFTER_CAP_SECONDS = 30


def query_hash(query: str) -> str:
    return hashlib.sha256(query.encode()).hexdigest()


@dataclass(frozen=True)
class Answer:
    ok: bool
    results: list[dict]
    error: str
    attempts: int
    latency_ms: int


def search_all(
    service: SearchService, queries: list[str], *, should_stop=lambda: False
) -> dict[str, SearchCall]:
    """query → its record (ok or failed); queries left unsent because
    `should_stop` said so are missing."""
    with SearchStream(service) as stream:
        records = stream.add(queries)
        while stream.sending:
            if should_stop():
                stream.stop()
            records.update(stream.collect(wait=STOP_CHECK_SECONDS))
        records.update(stream.collect())
    return records


STOP_CHECK_SECONDS = 0.5


class SearchStream:
    """Queries sent as they come in, each as soon as it is added.

        with SearchStream(service) as stream:
            known = stream.add(queries)      # the ok records, at once
            ...
            answered = stream.collect()      # the records of answers now in

    `add` answers from the record what is recorded ok and hands the rest to the
    stream's loop, which sends each as soon as the service's limit has a slot for
    it; a query is sent at most once per stream, whoever adds it. `collect`
    records the answers that are in (on the caller's thread) and returns their
    records. After `stop`, queued queries are not sent; leaving the block waits
    for the ones in flight and records them (they were sent)."""

    def __init__(self, service: SearchService):
        self.service = service
        self.adapter = ADAPTERS.get(service.adapter)
        self.api_key = (
            os.environ.get(service.api_key_env, "") if service.api_key_env else ""
        )
        self.problem = ""
        if self.adapter is None:
            self.problem = f"No search adapter {service.adapter!r} on this worker."
        elif service.api_key_env and not self.api_key:
            self.problem = f"{service.api_key_env} is not set on the worker."
        self.started: set[str] = set()
        self.sending = 0  # queries handed to the loop whose answer is not collected
        self.answers: queue.Queue[tuple[str, Answer | None]] = queue.Queue()
        self.stopped = threading.Event()
        self.crashed: BaseException | None = None
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def __enter__(self):
        self._thread = threading.Thread(
            target=self._run, name="search-stream", daemon=True
        )
        self._thread.start()
        self._ready.wait()
        if self.crashed is not None:
            raise RuntimeError("The search stream did not start") from self.crashed
        return self

    def __exit__(self, *exc_info):
        self.stop()
        self._call_soon(self._finish)
        self._thread.join()
        self.collect()

    def stop(self) -> None:
        self.stopped.set()

    def add(self, queries: list[str]) -> dict[str, SearchCall]:
        queries = [q for q in dict.fromkeys(queries) if q not in self.started]
        self.started.update(queries)
        if not queries:
            return {}
        known = {
            call.query: call
            for call in SearchCall.objects.filter(
                service=self.service,
                query_hash__in=[query_hash(q) for q in queries],
                status=SearchCall.Status.OK,
            )
        }
        to_send = [q for q in queries if q not in known]
        if self.problem and to_send:
            answers = [Answer(False, [], self.problem, 0, 0) for _ in to_send]
            known.update(_record(self.service, to_send, answers))
        elif to_send:
            self.sending += len(to_send)
            if not self._call_soon(self._queue, to_send):
                for query in to_send:  # the loop has ended: nothing will send them
                    self.answers.put((query, None))
        return known

    def collect(self, wait: float = 0) -> dict[str, SearchCall]:
        answered = {}
        timeout = wait if wait and self.sending else 0
        while True:
            try:
                query, answer = (
                    self.answers.get(timeout=timeout)
                    if timeout
                    else self.answers.get_nowait()
                )
            except queue.Empty:
                break
            timeout = 0
            self.sending -= 1
            if answer is not None:
                answered[query] = answer
        if not answered:
            return {}
        return _record(self.service, list(answered), list(answered.values()))

    # -- on the loop's thread ----------------------------------------------------

    def _call_soon(self, callback, *args) -> bool:
        loop = self._loop
        if loop is None or loop.is_closed():
            return False
        try:
            loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            return False  # the loop closed in between
        return True

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # noqa: BLE001 - reported to the caller
            self.crashed = error
            logger.exception("The search stream's loop failed")
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        self._pending: asyncio.Queue[str] = asyncio.Queue()
        self._workers = 0
        self._tasks: set[asyncio.Task] = set()
        redis = redis_client_for_loop()
        self.limiter = make_limiter(
            LimitSpec(
                key=self.service.limit_key,
                max_concurrency=self.service.max_concurrency,
                rpm=None,
                lease_seconds=settings.LLM_LEASE_SECONDS,
            ),
            redis,
        )
        keeper = asyncio.create_task(self.limiter.keep_leases())
        # No redirects: SEARCH_SERVICE_HOSTS names where queries may go. Every
        # connection goes to an address checked as the base URL was when saved,
        # resolved once for it (assay/targets.py: DNS rebinding).
        client = outbound.async_client(
            seconds=settings.SEARCH_TIMEOUT_SECONDS,
            max_bytes=settings.SEARCH_MAX_BODY_BYTES,
            connections=self.service.max_concurrency,
            addresses=connectable(
                settings.SEARCH_SERVICE_HOSTS,
                "SEARCH_SERVICE_HOSTS",
                "search service URL",
            ),
            follow_redirects=False,
        )
        self.get = client.get
        self._ready.set()
        try:
            await self._done.wait()
            while self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
        finally:
            keeper.cancel()
            await client.aclose()
            if redis is not None:
                await redis.aclose()

    def _finish(self) -> None:
        self._done.set()

    def _queue(self, queries: list[str]) -> None:
        for query in queries:
            self._pending.put_nowait(query)
        wanted = min(self.service.max_concurrency, self._pending.qsize())
        while self._workers < wanted:
            self._workers += 1
            task = asyncio.create_task(self._worker())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _worker(self) -> None:
        lease = Lease()
        try:
            while True:
                try:
                    query = self._pending.get_nowait()
                except asyncio.QueueEmpty:
                    return
                answer = None
                if not self.stopped.is_set():
                    try:
                        answer = await ask(
                            self.get,
                            self.adapter,
                            self.service.base_url,
                            query,
                            self.api_key,
                            self.limiter,
                            lease,
                            self.stopped,
                        )
                    except Exception as error:  # noqa: BLE001 - recorded, never lost
                        logger.exception("A search query failed unexpectedly")
                        answer = Answer(False, [], f"Unexpected error: {error!r}", 0, 0)
                self.answers.put((query, answer))
        finally:
            # Counted down before any await: `_queue` must never count on a
            # worker that has already seen the queue empty.
            self._workers -= 1
            if lease.held is not None:
                await self.limiter.release(*lease.take())


class Lease:
    """The slot a stream's worker holds between two queries: (token, outcome)."""

    held: tuple[str, str] | None = None

    def take(self) -> tuple[str, str] | None:
        held, self.held = self.held, None
        return held


def _record(service, queries, answers) -> dict[str, SearchCall]:
    now = timezone.now()
    retrieved = now.isoformat(timespec="seconds")
    rows = [
        SearchCall(
            service=service,
            query=query,
            query_hash=query_hash(query),
            status=SearchCall.Status.OK if answer.ok else SearchCall.Status.FAILED,
            results=[{**hit, "retrieved_at": retrieved} for hit in answer.results],
            error=answer.error[:ERROR_CHARS],
            attempts=answer.attempts,
            latency_ms=answer.latency_ms,
            retrieved_at=now,
        )
        for query, answer in zip(queries, answers, strict=True)
    ]
    with transaction.atomic():
        SearchCall.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["service", "query_hash"],
            update_fields=[
                "status",
                "results",
                "error",
                "attempts",
                "latency_ms",
                "retrieved_at",
            ],
        )
    # The rows as written (the upsert sets every field and returns the ids): read
    # back, their results were decoded from JSON again, a third of a searching
    # stage's database CPU per query (bench/construction_bench.py).
    return {row.query: row for row in rows}


async def ask(
    get,
    adapter,
    base_url: str,
    query: str,
    api_key: str,
    limiter,
    lease: Lease,
    stopped: threading.Event,
) -> Answer:
    """One query with its retries (`get` sends one GET), each try on a slot of
    the service's limit; an Answer, never an exception. After a success the slot
    stays in `lease`, so the worker's next query swaps it for a new one in one
    round trip."""
    started = time.monotonic()
    error = ""
    for attempt in range(1, settings.SEARCH_MAX_ATTEMPTS + 1):
        wait = None
        request = adapter.request(base_url, query, api_key)
        token = await limiter.acquire(lease.take())
        outcome = "error"
        try:
            response = await get(
                request.url, params=request.params, headers=request.headers
            )
        except httpx2.TimeoutException as exc:
            error = _timeout_or_connection_error(exc)
        except outbound.BodyTooLarge as exc:
            # The service would send the same again: no retry.
            error = f"{exc} (SEARCH_MAX_BODY_BYTES)."
            return Answer(False, [], error, attempt, _ms(started))
        except outbound.TargetRefused as exc:
            return Answer(False, [], str(exc), attempt, _ms(started))
        except httpx2.HTTPError as exc:
            error = f"Connection error: {type(exc).__name__}: {exc}"
        else:
            status = response.status_code
            if status == 200:
                try:
                    hits = adapter.parse(response.json())
                except ValueError:
                    error = "The answer is not JSON."
                except SearchError as exc:
                    error = str(exc)
                else:
                    outcome = "ok"
                    lease.held = (token, outcome)
                    return Answer(True, top_hits(hits), "", attempt, _ms(started))
            else:
                error = f"HTTP {status}: {response.text[:200]}"
                if status == 429:
                    outcome = "rate_limited"
                elif status < 500 and status not in (408, 409):
                    return Answer(False, [], error, attempt, _ms(started))
                wait = _retry_after(response)
        finally:
            if outcome != "ok":
                await limiter.release(token, outcome)
        if attempt < settings.SEARCH_MAX_ATTEMPTS and not stopped.is_set():
            base = settings.SEARCH_BACKOFF_BASE_MS / 1000 * 2 ** (attempt - 1)
            await asyncio.sleep(max(wait or 0, random.uniform(0, base)))
        elif stopped.is_set():
            return Answer(False, [], f"{error} (stopped)", attempt, _ms(started))
    tries = settings.SEARCH_MAX_ATTEMPTS
    return Answer(
        False, [], f"{error} (gave up after {tries} tries)", tries, _ms(started)
    )


def _timeout_or_connection_error(error: httpx2.TimeoutException) -> str:
    # The aiohttp transport reports a dropped connection as a ConnectTimeout too.
    cause = error.__cause__
    if (
        isinstance(cause, Exception)
        and not isinstance(error, outbound.DeadlineExceeded)
        and not isinstance(cause, TimeoutError)
    ):
        return f"Connection error: {type(cause).__name__}: {cause}"
    return f"Timed out after {settings.SEARCH_TIMEOUT_SECONDS} s"


def _retry_after(response) -> float | None:
    try:
        return min(float(response.headers["Retry-After"]), RETRY_AFTER_CAP_SECONDS)
    except (KeyError, ValueError):
        return None


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
