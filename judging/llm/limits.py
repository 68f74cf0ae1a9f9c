"""Per-endpoint limits that hold across every worker: requests in flight and requests
per minute, with an in-flight cap that adapts to the provider (AIMD).

With REDIS_URL set, the state lives in Redis and is changed only by atomic Lua
scripts, so any number of worker processes on any number of hosts share one budget:

- in flight: a sorted set of lease tokens scored by their expiry, renewed while the
  call runs; a worker that dies mid-call leaks nothing, its leases expire within
  LLM_LEASE_SECONDS;
- the adaptive cap: cut to 70 % (at most once a second) when the provider answers
  429, raised by 1/cap per successful call (so by one per "round" of calls) back up
  to the endpoint's max_concurrency. Not halved: with three endpoints declared at 64
  on one provider that serves 64, halving reached 68 % of the provider's rate with
  10 % of requests answered 429; 70 % reaches 80 % with under 2 % (BENCHMARKS.md);
- requests per minute: a token bucket refilled at rpm/60 per second holding at most
  three seconds' worth, so bursts stay small.

Without Redis (the embedded demo: one worker host) the same rules run in-process.
"""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
import uuid
from dataclasses import dataclass

from django.conf import settings

CUT_FACTOR = 0.7  # see the module docstring
CUT_INTERVAL = 1.0
BURST_SECONDS = 3.0
POLL_SECONDS = (0.01, 0.03)
HOLD_SECONDS = 2.0


@dataclass(frozen=True)
class LimitSpec:
    """The limits of one endpoint, read once from its row."""

    key: str
    max_concurrency: int
    rpm: int | None
    lease_seconds: float


def burst_capacity(rpm: int) -> float:
    return max(1.0, rpm * BURST_SECONDS / 60)


LEASE_LUA = """
-- Release ARGV[6] (if given) with outcome ARGV[7], then acquire ARGV[4] (if given):
-- a worker moving on to its next call does both in one round trip.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local maxc = tonumber(ARGV[1])
local cap = tonumber(redis.call('GET', KEYS[2]) or maxc)
if cap > maxc then cap = maxc end
if ARGV[6] ~= '' then
  redis.call('ZREM', KEYS[1], ARGV[6])
  local changed = cap
  if ARGV[7] == 'rate_limited' then
    local last = tonumber(redis.call('GET', KEYS[4]) or 0)
    if now - last >= tonumber(ARGV[9]) then
      changed = math.max(1, cap * tonumber(ARGV[8]))
      redis.call('SET', KEYS[4], tostring(now), 'EX', 3600)
    end
  elseif ARGV[7] == 'ok' and cap < maxc then
    changed = math.min(maxc, cap + 1 / cap)
  end
  if changed ~= cap then
    cap = changed
    redis.call('SET', KEYS[2], tostring(cap), 'EX', 3600)
  end
end
if ARGV[4] == '' then
  return {0, '0', tostring(cap)}
end
local rpm = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local burst = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= math.max(1, math.floor(cap)) then
  return {0, '0', tostring(cap)}
end
if rpm > 0 then
  local b = redis.call('HMGET', KEYS[3], 'tokens', 'ts')
  local tokens = tonumber(b[1]) or burst
  local ts = tonumber(b[2]) or now
  tokens = math.min(burst, tokens + (now - ts) * rpm / 60)
  if tokens < 1 then
    redis.call('HSET', KEYS[3], 'tokens', tostring(tokens), 'ts', tostring(now))
    return {0, tostring((1 - tokens) * 60 / rpm), tostring(cap)}
  end
  redis.call('HSET', KEYS[3], 'tokens', tostring(tokens - 1), 'ts', tostring(now))
  redis.call('EXPIRE', KEYS[3], 3600)
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[4])
redis.call('EXPIRE', KEYS[1], math.ceil(lease) + 60)
return {1, '0', tostring(cap)}
"""

RENEW_LUA = """
local t = redis.call('TIME')
local expiry = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[i])
end
return #ARGV - 1
"""


class RedisLimiter:
    """Cross-worker limits for one endpoint, shared through Redis.

    A call costs one round trip: `acquire(previous=...)` releases the lease of the
    call just finished and takes the next one in the same script. Coroutines of one
    process that find no free slot queue behind a single poller, so a process polls
    Redis at most once per POLL_SECONDS per endpoint however many are waiting.
    """

    def __init__(self, client, spec: LimitSpec):
        self.client = client
        self.spec = spec
        prefix = f"{settings.REDIS_KEY_PREFIX}assay:limits:{spec.key}"
        self._keys = [
            f"{prefix}:inflight",
            f"{prefix}:cap",
            f"{prefix}:bucket",
            f"{prefix}:cut_at",
        ]
        self._lease = client.register_script(LEASE_LUA)
        self._renew = client.register_script(RENEW_LUA)
        self._poller = asyncio.Lock()
        self._held_since: dict[str, float] = {}
        self.held: set[str] = set()

    async def _run(self, token: str, previous: tuple[str, str] | None):
        rpm = self.spec.rpm or 0
        old_token, outcome = previous or ("", "")
        self.held.discard(old_token)
        granted, wait, cap = await self._lease(
            keys=self._keys,
            args=[
                self.spec.max_concurrency,
                rpm,
                self.spec.lease_seconds,
                token,
                burst_capacity(rpm) if rpm else 0,
                old_token,
                outcome,
                CUT_FACTOR,
                CUT_INTERVAL,
            ],
        )
        if int(granted):
            self.held.add(token)
        return int(granted), float(wait), float(cap)

    async def acquire(self, previous: tuple[str, str] | None = None) -> str:
        """A lease on one slot; `previous` (token, outcome) is released first.

        A worker may pass its slot from one call to the next for HOLD_SECONDS; then
        it lets go and waits a poll interval like everyone else, so that a process
        that joins late (a new chunk, a second worker) gets its share of the slots
        instead of starving behind one that keeps swapping.
        """
        token = uuid.uuid4().hex
        if previous is not None:
            began = self._held_since.pop(previous[0], 0.0)
            if time.monotonic() - began < HOLD_SECONDS:
                granted, _, _ = await self._run(token, previous)
                if granted:
                    self._held_since[token] = began
                    return token
            else:
                await self._run("", previous)
                await asyncio.sleep(random.uniform(*POLL_SECONDS))
        async with self._poller:
            while True:
                granted, wait, _ = await self._run(token, None)
                if granted:
                    self._held_since[token] = time.monotonic()
                    return token
                await asyncio.sleep(max(wait, random.uniform(*POLL_SECONDS)))

    async def keep_leases(self) -> None:
        """Extend the leases of calls still in flight, so that only a dead worker's
        leases expire (within `lease_seconds`) and free their slots."""
        while True:
            await asyncio.sleep(self.spec.lease_seconds / 3)
            if self.held:
                await self._renew(
                    keys=self._keys[:1],
                    args=[self.spec.lease_seconds, *self.held],
                )

    async def release(self, token: str, outcome: str) -> float:
        self._held_since.pop(token, None)
        _, _, cap = await self._run("", (token, outcome))
        return cap

    async def current_cap(self) -> float:
        raw = await self.client.get(self._keys[1])
        return (
            min(float(raw), self.spec.max_concurrency)
            if raw
            else float(self.spec.max_concurrency)
        )


class _LocalState:
    def __init__(self, max_concurrency: int):
        self.cap = float(max_concurrency)
        self.cut_at = 0.0
        self.in_flight: set[str] = set()
        self.tokens: float | None = None
        self.refilled_at = time.monotonic()


class LocalLimiter:
    """The same rules in-process, for a single worker host without Redis."""

    _states: dict[str, _LocalState] = {}
    _lock = threading.Lock()

    def __init__(self, spec: LimitSpec):
        self.spec = spec
        with self._lock:
            self.state = self._states.setdefault(
                spec.key, _LocalState(spec.max_concurrency)
            )

    def _try_acquire(self, token: str) -> tuple[bool, float]:
        state, spec = self.state, self.spec
        with self._lock:
            cap = min(state.cap, spec.max_concurrency)
            if len(state.in_flight) >= max(1, math.floor(cap)):
                return False, 0.0
            if spec.rpm:
                burst = burst_capacity(spec.rpm)
                now = time.monotonic()
                tokens = burst if state.tokens is None else state.tokens
                tokens = min(burst, tokens + (now - state.refilled_at) * spec.rpm / 60)
                state.refilled_at = now
                if tokens < 1:
                    state.tokens = tokens
                    return False, (1 - tokens) * 60 / spec.rpm
                state.tokens = tokens - 1
            state.in_flight.add(token)
            return True, 0.0

    async def acquire(self, previous: tuple[str, str] | None = None) -> str:
        """A slot; `previous` (token, outcome) is released first."""
        if previous is not None:
            await self.release(*previous)
        token = uuid.uuid4().hex
        while True:
            granted, wait = self._try_acquire(token)
            if granted:
                return token
            await asyncio.sleep(max(wait, random.uniform(*POLL_SECONDS)))

    async def release(self, token: str, outcome: str) -> float:
        state, spec = self.state, self.spec
        with self._lock:
            state.in_flight.discard(token)
            cap = min(state.cap, spec.max_concurrency)
            if outcome == "rate_limited":
                now = time.monotonic()
                if now - state.cut_at >= CUT_INTERVAL:
                    cap = max(1.0, cap * CUT_FACTOR)
                    state.cut_at = now
            elif outcome == "ok" and cap < spec.max_concurrency:
                cap = min(spec.max_concurrency, cap + 1 / cap)
            state.cap = cap
            return cap

    async def current_cap(self) -> float:
        return min(self.state.cap, self.spec.max_concurrency)

    async def keep_leases(self) -> None:
        """In-process slots die with the process; nothing to renew."""


def make_limiter(spec: LimitSpec, redis_client=None):
    """A Redis-backed limiter when REDIS_URL is set, else an in-process one."""
    if redis_client is not None:
        return RedisLimiter(redis_client, spec)
    return LocalLimiter(spec)


# Limiter round trips take well under a millisecond: a few connections serve
# hundreds of calls in flight.
REDIS_CONNECTIONS = 32


def redis_client_for_loop():
    """An asyncio Redis client for the running event loop, or None without Redis.

    Its pool waits for a free connection instead of failing: every call in flight
    (three endpoints × 64, say) talks to the limiter, and redis-py's default pool
    raises "Too many connections" past 100 — which failed calls at three-provider
    scale."""
    if not settings.REDIS_URL:
        return None
    import redis.asyncio

    pool = redis.asyncio.BlockingConnectionPool.from_url(
        settings.REDIS_URL,
        max_connections=REDIS_CONNECTIONS,
        timeout=settings.LLM_REQUEST_TIMEOUT,
    )
    return redis.asyncio.Redis.from_pool(pool)
