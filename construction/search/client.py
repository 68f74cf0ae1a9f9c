"""Sending search queries (worker side only; a web request never calls this).

`search_all(service, queries)` answers each query from its `SearchCall` record
when one is ok, and sends the rest (a `SearchStream` sends them as they are
added, for a caller that has them one by one) — at most SEARCH_CONCURRENCY at
once, each
try within SEARCH_TIMEOUT_SECONDS whole (connecting and every read: a service that
trickles is cut off, assay/outbound.py) and an answer of at most
SEARCH_MAX_BODY_BYTES, tried up to SEARCH_MAX_ATTEMPTS times — through the
service's adapter. Time-outs, connection errors, 429, 5xx and an answer the
adapter cannot read are tried again after an exponential back-off; other statuses
(400, 401, 403, 404) fail at once. The outcome of every query sent is recorded,
ok with its top results or failed with the reason, and a failed one is sent again
by the next call that needs it. HTTP runs in threads; the ORM stays on the
caller's thread.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from concurrent.futures import (
    FIRST_COMPLETED,
    Future,
    ThreadPoolExecutor,
)
from concurrent.futures import (
    wait as futures_wait,
)
from dataclasses import dataclass

import httpx2
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from assay import outbound
from assay.targets import connectable
from construction.search.adapters import ADAPTERS, SearchError, top_hits
from construction.search.models import SearchCall, SearchService

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

    `add` answers from the record what is recorded ok and queues the rest for the
    pool (SEARCH_CONCURRENCY threads, so at most that many in flight); a query is
    sent at most once per stream, whoever adds it. `collect` records the answers
    that are in (on the caller's thread) and returns their records. After `stop`,
    queued queries are not sent; leaving the block waits for the ones in flight
    and records them (they were sent)."""

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
        self.futures: dict[Future, str] = {}
        self.stopped = threading.Event()

    def __enter__(self):
        # No redirects: SEARCH_SERVICE_HOSTS names where queries may go. Every
        # connection goes to an address checked as the base URL was when saved,
        # resolved once for it (assay/targets.py: DNS rebinding).
        self.client = outbound.client(
            seconds=settings.SEARCH_TIMEOUT_SECONDS,
            max_bytes=settings.SEARCH_MAX_BODY_BYTES,
            addresses=connectable(
                settings.SEARCH_SERVICE_HOSTS,
                "SEARCH_SERVICE_HOSTS",
                "search service URL",
            ),
            follow_redirects=False,
        )
        self.pool = ThreadPoolExecutor(settings.SEARCH_CONCURRENCY)
        return self

    def __exit__(self, *exc_info):
        self.stop()
        self.pool.shutdown(wait=True)
        self.collect()
        self.client.close()

    @property
    def sending(self) -> int:
        return len(self.futures)

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
            )
            if call.status == SearchCall.Status.OK
        }
        to_send = [q for q in queries if q not in known]
        if self.problem and to_send:
            answers = [Answer(False, [], self.problem, 0, 0) for _ in to_send]
            known.update(_record(self.service, to_send, answers))
        elif to_send:
            for query in to_send:
                self.futures[self.pool.submit(self._ask, query)] = query
        return known

    def collect(self, wait: float = 0) -> dict[str, SearchCall]:
        if wait and self.futures:
            done, _ = futures_wait(
                self.futures, timeout=wait, return_when=FIRST_COMPLETED
            )
        else:
            done = [future for future in self.futures if future.done()]
        answered = {}
        for future in done:
            query = self.futures.pop(future)
            if future.result() is not None:
                answered[query] = future.result()
        if not answered:
            return {}
        return _record(self.service, list(answered), list(answered.values()))

    def _ask(self, query: str) -> Answer | None:
        if self.stopped.is_set():
            return None
        return ask(
            self.client, self.adapter, self.service.base_url, query, self.api_key
        )


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
    return {
        call.query: call
        for call in SearchCall.objects.filter(
            service=service, query_hash__in=[row.query_hash for row in rows]
        )
    }


def ask(client: httpx2.Client, adapter, base_url: str, query: str, api_key: str):
    """One query with its retries; an Answer, never an exception."""
    started = time.monotonic()
    error = ""
    for attempt in range(1, settings.SEARCH_MAX_ATTEMPTS + 1):
        wait = None
        request = adapter.request(base_url, query, api_key)
        try:
            response = client.get(
                request.url, params=request.params, headers=request.headers
            )
        except httpx2.TimeoutException:
            error = f"Timed out after {settings.SEARCH_TIMEOUT_SECONDS} s"
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
                    return Answer(True, top_hits(hits), "", attempt, _ms(started))
            else:
                error = f"HTTP {status}: {response.text[:200]}"
                if status != 429 and status < 500 and status not in (408, 409):
                    return Answer(False, [], error, attempt, _ms(started))
                wait = _retry_after(response)
        if attempt < settings.SEARCH_MAX_ATTEMPTS:
            base = settings.SEARCH_BACKOFF_BASE_MS / 1000 * 2 ** (attempt - 1)
            time.sleep(max(wait or 0, random.uniform(0, base)))
    tries = settings.SEARCH_MAX_ATTEMPTS
    return Answer(
        False, [], f"{error} (gave up after {tries} tries)", tries, _ms(started)
    )


def _retry_after(response) -> float | None:
    try:
        return min(float(response.headers["Retry-After"]), RETRY_AFTER_CAP_SECONDS)
    except (KeyError, ValueError):
        return None


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
