"""What is translated once per interface language and kept: a screen's key
meanings and rubric texts, a template's literal `{% translate %}` (#30: pages must
not get slower for being translated; docs/BENCHMARKS.md).

Kept values are forgotten whenever a setting changes (tests overriding one): the
catalogues' settings, but also the URLs and static files a kept fragment names.
"""

import functools

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.translation import get_language

_caches: list[dict] = []


def language_cache() -> dict:
    """A dict to key by language, emptied with the catalogues."""
    cache: dict = {}
    _caches.append(cache)
    return cache


def per_language(function):
    """`function(*args)` computed once per active language and arguments (which
    must be hashable and few: module-level constants, flags)."""
    results = language_cache()

    @functools.wraps(function)
    def kept(*args):
        key = (get_language(), *args)
        try:
            return results[key]
        except KeyError:
            value = results[key] = function(*args)
            return value

    return kept


@receiver(setting_changed)
def forget(**kwargs):
    for cache in _caches:
        cache.clear()
