"""The one report cache: a report is filed under a key made of everything it reads
(its version parts), so an entry is never stale and nothing expires by time except
superseded versions, which the expiry only keeps from piling up.

Each report says what it reads — the leaderboard its runs' `scores_version`s and
label checksums, the agreement reports their label versions, the robustness report
its runs, variants and answer keys — and this module does the rest, once: the
digest, the namespace, the get-or-build and the expiry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache

# Keys change with the data; the expiry only clears superseded versions.
REPORT_CACHE_SECONDS = 24 * 3600

Built = TypeVar("Built")


def version_key(namespace: str, *parts) -> str:
    """A cache key for `namespace` that changes whenever any of `parts` (their
    repr: tuples, numbers, strings, dates) changes."""
    return f"{namespace}:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def cached(key: str, build: Callable[[], Built]) -> Built:
    """What `build()` returns, from the cache while `key` is the same."""
    found = cache.get(key)
    if found is None:
        found = build()
        cache.set(key, found, REPORT_CACHE_SECONDS)
    return found
