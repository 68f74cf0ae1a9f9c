"""The gateway's records of its calls (`LLMCall` rows): claimed before a call is
sent, written when its answer is in. See judging/llm/GATEWAY.md, "Paid once".

A request about to be sent gets its row first — status `sent`, the messages, an
idempotency key (sent to the provider as the `Idempotency-Key` header) and the
session sending it — committed before the HTTP request leaves. So:

- a request whose row is `ok` or `unparseable` is served from it, never sent;
- a request whose row is `sent` by a session that is alive (another chunk of the
  run, another worker: identical prompts of different items) waits for that call
  and is served its record;
- a request whose row is `sent` by a session that is gone (a killed worker) was in
  flight at the kill: it is sent again *with the same idempotency key*, so a
  provider that honours the key answers it from its own record instead of making
  and charging for it again;
- a `failed` row is claimed and made again, under a new key.

A session proves it is alive by a cache key (Redis when REDIS_URL is set) renewed
while it runs and dropped when it ends; its rows outlive it only as `sent` calls
that may have reached the provider.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from judging.llm.models import LLMCall

SERVED = {LLMCall.Status.OK, LLMCall.Status.UNPARSEABLE}
IDEMPOTENCY_HEADER = "Idempotency-Key"


def new_token() -> str:
    return uuid.uuid4().hex


def session_seconds() -> int:
    """How long a session counts as alive after its last sign of life."""
    return max(3 * settings.LLM_LEASE_SECONDS, 6)


def keep_alive(token: str) -> None:
    cache.set(f"llm-session:{token}", 1, timeout=session_seconds())


def end_session(token: str) -> None:
    cache.delete(f"llm-session:{token}")


def is_alive(token: str) -> bool:
    return bool(token) and cache.get(f"llm-session:{token}") is not None


@dataclass
class Claims:
    cached: list = field(default_factory=list)  # (item, LLMCall) to serve
    to_make: list = field(default_factory=list)  # items whose row is ours now
    waiting: list = field(default_factory=list)  # items another live session sends
    resent: int = 0  # calls in flight at a kill, taken up with their key


def claim(items, token: str, *, serve_failed: bool = False) -> Claims:
    """Sort prepared requests by their records, taking the rows of those this
    session will send; committed on return. `serve_failed`: a failed record is
    served (the call waited for failed) instead of made again."""
    claims = Claims()
    with transaction.atomic():
        rows = _rows_of(items)
        new = [item for item in items if (item.hash, item.scope) not in rows]
        for item in new:
            item.idempotency_key = new_token()
        LLMCall.objects.bulk_create(
            [_sent_row(item, token) for item in new], ignore_conflicts=True
        )
        rows.update(_rows_of(new))
        for item in items:
            row = rows.get((item.hash, item.scope))
            if row is None:  # released by its session in between: ask again
                claims.waiting.append(item)
            elif row.status in SERVED or (
                serve_failed and row.status == LLMCall.Status.FAILED
            ):
                claims.cached.append((item, row))
            elif row.sent_by == token and row.idempotency_key == item.idempotency_key:
                item.call_id, item.taken_from = row.pk, "new"
                claims.to_make.append(item)
            elif row.status == LLMCall.Status.FAILED:
                if _take(row, token, new_token(), item, "failed"):
                    claims.to_make.append(item)
                else:
                    claims.waiting.append(item)
            elif is_alive(row.sent_by):
                claims.waiting.append(item)
            elif _take(row, token, row.idempotency_key, item, "orphan"):
                claims.to_make.append(item)
                claims.resent += 1
            else:
                claims.waiting.append(item)
    return claims


def _rows_of(items) -> dict[tuple[str, str], LLMCall]:
    found = {}
    by_scope: dict[str, list[str]] = {}
    for item in items:
        by_scope.setdefault(item.scope, []).append(item.hash)
    for scope, hashes in by_scope.items():
        for start in range(0, len(hashes), 2000):
            for call in LLMCall.objects.filter(
                scope=scope, request_hash__in=hashes[start : start + 2000]
            ):
                found[(call.request_hash, call.scope)] = call
    return found


def _row(item, **fields) -> LLMCall:
    """The row of a prepared request, with `fields` besides its identity."""
    return LLMCall(
        endpoint=item.endpoint,
        template=item.template,
        purpose=item.purpose,
        scope=item.scope,
        request_hash=item.hash,
        model=item.model,
        params=item.params,
        messages=item.messages,
        idempotency_key=item.idempotency_key,
        **fields,
    )


def _sent_row(item, token: str) -> LLMCall:
    return _row(item, status=LLMCall.Status.SENT, sent_by=token)


def answered_row(item, **written) -> LLMCall:
    """The claimed row of `item` (its `call_id`) with the answer's fields
    (WRITTEN_FIELDS but `sent_by`), for `save`."""
    return _row(item, pk=item.call_id, sent_by="", **written)


def _take(row: LLMCall, token: str, key: str, item, taken_from: str) -> bool:
    """Take a failed or orphaned row for this session, unless another session
    took it first."""
    taken = LLMCall.objects.filter(
        pk=row.pk, status=row.status, sent_by=row.sent_by
    ).update(status=LLMCall.Status.SENT, sent_by=token, idempotency_key=key)
    if taken:
        item.call_id, item.idempotency_key, item.taken_from = row.pk, key, taken_from
    return bool(taken)


WRITTEN_FIELDS = [
    "raw_response",
    "reasoning_text",
    "parsed_output",
    "parse_errors",
    "input_tokens",
    "output_tokens",
    "latency_ms",
    "attempts",
    "status",
    "error",
    "finish_reason",
    "cost",
    "sent_by",
]


def save(rows: list[LLMCall]) -> list[LLMCall]:
    """Write finished calls (`answered_row`s) over their claimed rows (committed
    on return); the stored records, in order."""
    with transaction.atomic():
        # INSERT … ON CONFLICT (id) DO UPDATE: one statement per batch, where
        # bulk_update's CASE WHEN per row and field cost about 4 ms of worker
        # CPU per call (bench/construction_bench.py, py-spy).
        LLMCall.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["id"],
            update_fields=WRITTEN_FIELDS,
        )
        stored = LLMCall.objects.in_bulk([row.pk for row in rows])
    return [stored[row.pk] for row in rows]


def release(items, token: str) -> None:
    """A session ends with calls it claimed but never sent (it was stopped): rows
    it created go, failures it took are failures again. Calls it did send stay
    `sent` — they may have reached the provider — and the next session to need
    them sends them again with their key."""
    claimed = [item for item in items if item.call_id]
    unsent = [item for item in claimed if not item.started]
    mine = LLMCall.objects.filter(
        pk__in=[item.call_id for item in claimed],
        sent_by=token,
        status=LLMCall.Status.SENT,
    )
    with transaction.atomic():
        mine.filter(
            pk__in=[item.call_id for item in unsent if item.taken_from == "new"]
        ).delete()
        mine.filter(
            pk__in=[item.call_id for item in unsent if item.taken_from == "failed"]
        ).update(status=LLMCall.Status.FAILED, sent_by="")
        mine.update(sent_by="")


def storable(value):
    """`value` with what no database column can hold taken out: NUL characters
    (PostgreSQL refuses them in text and JSON) and lone surrogates (not UTF-8),
    in strings and inside lists and dicts."""
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [storable(element) for element in value]
    if isinstance(value, dict):
        return {storable(key): storable(element) for key, element in value.items()}
    return value
