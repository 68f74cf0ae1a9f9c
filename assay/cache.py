"""Django's Redis cache with one `redis.Redis` client per connection pool.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every cache
call; each build fills a table of ~200 response callbacks, about 0.1 ms of CPU, and
an annotator's submit+next makes five cache calls (bench/queue_bench.py). The client
holds no per-call state (the pool owns the connections), so one per pool serves
every call.
"""

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


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


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
