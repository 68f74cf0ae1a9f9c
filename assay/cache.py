"""Django's Redis cache, cleared by its own keys only.

Django's `RedisCache.clear()` empties the whole Redis database (FLUSHDB): the LLM
limits' keys, a broker sharing the database, and every other instance's or test
run's cache (settings.REDIS_NAMESPACE) with it. Here `clear()` deletes the keys
under this cache's KEY_PREFIX, nothing else.
"""

from django.core.cache.backends.redis import RedisCache

BATCH = 1000


class NamespacedRedisCache(RedisCache):
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
