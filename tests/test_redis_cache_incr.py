"""The Redis cache's `incr` (one Lua script instead of Django's EXISTS then INCRBY)
keeps Django's meaning: a key that is not cached raises ValueError and stays
uncached — a campaign's progress count that expired is recounted on its next read,
never restarted from one (annotation/progress.py)."""

import uuid

import pytest
from django.conf import settings

from assay.cache import NamespacedRedisCache


@pytest.fixture
def redis_cache():
    if not settings.REDIS_URL:
        pytest.fail("The Redis cache tests need REDIS_URL=redis://…")
    cache = NamespacedRedisCache(
        settings.REDIS_URL, {"KEY_PREFIX": f"incr{uuid.uuid4().hex[:8]}:cache"}
    )
    yield cache
    cache.clear()


def test_incr_adds_to_a_cached_count(redis_cache):
    redis_cache.set("done", 41, 60)
    assert redis_cache.incr("done") == 42
    assert redis_cache.incr("done", 8) == 50
    assert redis_cache.get("done") == 50


def test_incr_of_an_uncached_key_raises_and_caches_nothing(redis_cache):
    with pytest.raises(ValueError):
        redis_cache.incr("done")
    assert redis_cache.get("done") is None


def test_incr_keeps_the_keys_expiry(redis_cache):
    redis_cache.set("done", 1, 60)
    redis_cache.incr("done")
    client = redis_cache._cache.get_client("done")
    assert 0 < client.ttl(redis_cache.make_and_validate_key("done")) <= 60
