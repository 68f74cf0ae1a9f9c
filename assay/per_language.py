"""What is translated once per interface language and kept: a screen's key
meanings and rubric texts, a template's literal `{% translate %}` (#30: pages must
not get slower for being translated; docs/BENCHMARKS.md).

Kept values are forgotten when the settings that choose or load the catalogues
change (tests overriding them), as Django forgets its own translations.
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
def forget(*, setting, **kwargs):
    if setting in {"LANGUAGES", "LANGUAGE_CODE", "LOCALE_PATHS", "USE_I18N"}:
        for cache in _caches:
            cache.clear()
