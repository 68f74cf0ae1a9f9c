"""Django's Redis cache, cleared by its own keys only, with one Redis client per
connection pool.

Django's `RedisCache.clear()` empties the whole Redis database (FLUSHDB): the LLM
limits' keys, a broker sharing the database, and every other instance's or test
run's cache (settings.REDIS_NAMESPACE) with it. Here `clear()` deletes the keys
under this cache's KEY_PREFIX, nothing else.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every cache
call; each build fills a table of ~200 response callbacks, about 0.1 ms of CPU, and
an annotator's submit+next makes five cache calls (bench/queue_bench.py). The client
holds no per-call state (the pool owns the connections), so one per pool serves
every call.

Django's `incr` is two round trips, EXISTS and then INCRBY; a work screen's submit
counts every first label into its campaign's progress (annotation/progress.py), so
here one Lua script does both, with the same result: ValueError for a key that is
not cached, never a count restarted from the increment.
"""

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

BATCH = 1000

# KEYS[1]'s value plus ARGV[1], or nil when the key is not cached.
INCR_IF_CACHED = """
if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return false
"""


class ReusedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client

    def incr(self, key, delta):
        value = self.get_client(key, write=True).eval(INCR_IF_CACHED, 1, key, delta)
        if value is None:
            raise ValueError(f"Key '{key}' not found.")
        return value


class NamespacedRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient

    def clear(self) -> bool:
        client = self._cache.get_client(None, write=True)
        # Django's keys are "KEY_PREFIX:version:key"; the prefix is a checked name
        # (settings.env_name) and "cache", so it holds no glob character.
        keys = client.scan_iter(match=f"{self.key_prefix}:*", count=BATCH)
        batch = []
        for key in keys:
            batch.append(key)
            if len(batch) == BATCH:
                client.unlink(*batch)
                batch = []
        if batch:
            client.unlink(*batch)
        return True
