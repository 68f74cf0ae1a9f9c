"""The Redis limiter's lease script: a swap is one round trip that never exceeds the
cap, and a worker that keeps swapping lets a waiting worker in after HOLD_SECONDS."""

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings

from judging.llm import limits
from judging.llm.limits import LimitSpec, RedisLimiter


@pytest.fixture(autouse=True)
def needs_redis():
    if not settings.REDIS_URL:
        pytest.fail("The limiter tests need REDIS_URL=redis://…")


def spec(max_concurrency=1):
    return LimitSpec(
        key=f"test-{uuid.uuid4().hex}",
        max_concurrency=max_concurrency,
        rpm=None,
        lease_seconds=20,
    )


async def in_flight(limiter) -> int:
    return await limiter.client.zcard(limiter._keys[0])


def run_in_own_loop(scenario):
    """asyncio.run on a thread of its own, as the gateway runs its loop: the main
    thread may already have a running loop (Playwright's sync API keeps one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, scenario()).result()


def test_a_swap_releases_and_acquires_in_one_round_trip():
    async def scenario():
        client = limits.redis_client_for_loop()
        limiter = RedisLimiter(client, spec(max_concurrency=1))
        calls = 0
        script = limiter._lease

        async def counted(**kwargs):
            nonlocal calls
            calls += 1
            return await script(**kwargs)

        limiter._lease = counted
        first = await limiter.acquire()
        second = await limiter.acquire((first, "ok"))
        assert calls == 2 and second != first
        assert limiter.held == {second}
        assert await in_flight(limiter) == 1
        await limiter.release(second, "ok")
        assert await in_flight(limiter) == 0
        await client.aclose()

    run_in_own_loop(scenario)


class StoppedClock:
    """The limiter's clock (`limits.time`), moved only by the test: whether the
    hold has run out never depends on how fast a loaded machine runs the test."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_a_worker_that_keeps_swapping_lets_a_waiting_one_in(monkeypatch):
    clock = StoppedClock()
    monkeypatch.setattr(limits, "time", clock)

    async def scenario():
        client = limits.redis_client_for_loop()
        shared = spec(max_concurrency=1)
        busy, waiting = RedisLimiter(client, shared), RedisLimiter(client, shared)
        token = await busy.acquire()
        got = []

        async def wait_for_a_slot():
            got.append(await waiting.acquire())
            await waiting.release(got[-1], "ok")

        waiter = asyncio.create_task(wait_for_a_slot())
        # Within the hold, each swap keeps the slot, however often the waiting
        # limiter polls in between.
        for _ in range(30):
            await asyncio.sleep(0.01)
            token = await busy.acquire((token, "ok"))
            assert await in_flight(busy) == 1
        assert not got, "the waiting limiter got the slot before the hold ran out"
        # Past it, the busy one lets go and polls like the waiting one, which gets
        # the slot within a few rounds (each round's winner is random).
        for _ in range(300):
            if got:
                break
            clock.now += limits.HOLD_SECONDS
            token = await busy.acquire((token, "ok"))
            await asyncio.sleep(0.01)
        assert got, "the waiting limiter never got the slot"
        await waiter
        await busy.release(token, "ok")
        await client.aclose()

    run_in_own_loop(scenario)


def test_more_redis_round_trips_at_once_than_connections_wait_their_turn():
    """Three providers × 64 calls in flight all talk to the limiter; redis-py's
    default pool raised "Too many connections" past 100 and failed calls. The
    limiter's client waits for a free connection instead."""

    async def main():
        client = limits.redis_client_for_loop()
        try:
            key = f"test-empty-{uuid.uuid4().hex}"
            # Each BLPOP holds its connection for 0.1 s: 200 at once need waiting.
            results = await asyncio.gather(
                *(client.blpop([key], timeout=0.1) for _ in range(200))
            )
        finally:
            await client.aclose()
        return results

    assert run_in_own_loop(main) == [None] * 200
