"""Two Assay instances — or the `make test` runs of two checkouts — share one Redis
under two REDIS_NAMESPACEs: clearing one's cache leaves the other's keys (Django's
own clear() empties the whole database), and Celery's queues are under the
namespace too."""

import uuid

import pytest
import redis
from django.conf import settings

from assay.cache import NamespacedRedisCache
from assay.celery import app
from tests.judging.labelling_fixtures import clear_broker


@pytest.fixture
def raw_redis():
    if not settings.REDIS_URL:
        pytest.fail("The namespace tests need REDIS_URL=redis://…")
    client = redis.Redis.from_url(settings.REDIS_URL)
    yield client
    client.close()


def test_clearing_one_namespaces_cache_leaves_another_namespaces_keys(raw_redis):
    run = uuid.uuid4().hex[:8]
    mine = NamespacedRedisCache(settings.REDIS_URL, {"KEY_PREFIX": f"a{run}:cache"})
    theirs = NamespacedRedisCache(settings.REDIS_URL, {"KEY_PREFIX": f"b{run}:cache"})
    limits_key = f"b{run}:assay:limits:1-1:cap"
    raw_redis.set(limits_key, "3")
    for number in range(1500):  # more than one SCAN batch
        mine.set(f"report-{number}", number)
    theirs.set("report-0", "kept")
    try:
        mine.clear()
        assert mine.get("report-0") is None and mine.get("report-1499") is None
        assert theirs.get("report-0") == "kept"
        assert raw_redis.get(limits_key) == b"3"
    finally:
        theirs.clear()
        raw_redis.delete(limits_key)


def test_a_queued_task_waits_under_the_namespace():
    """The real workers' broker: what this run queues is in its namespace's list,
    where another run's worker (listening under its own namespace) never looks."""
    if not settings.CELERY_BROKER_URL.startswith("redis"):
        pytest.fail("The broker test needs CELERY_BROKER_URL=redis://…")
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    clear_broker()
    try:
        app.send_task("assay.no_such_task")
        assert broker.llen(f"{settings.REDIS_KEY_PREFIX}celery") == 1
    finally:
        clear_broker()
        broker.close()
