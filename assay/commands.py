"""The language of management commands (#30): the operator's, as the standard
gettext environment names it, so that `LANG=zh_CN.UTF-8 manage.py …` answers in
Chinese — messages, errors and refusals alike.

Every command of Assay's apps is an `AssayCommand`; tests/i18n checks that none is
a bare BaseCommand."""

import os
from collections.abc import Mapping

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import translation

# The C library's names for "no locale": messages untranslated.
NO_LOCALE = {"C", "POSIX"}


def _locale_name(value: str) -> str:
    """ "zh_CN.UTF-8@euro" -> "zh_CN": the language and territory of a locale name."""
    return value.split(".", 1)[0].split("@", 1)[0]


def operator_language(environ: Mapping[str, str] = os.environ) -> str:
    """The interface language that the environment asks messages in, by GNU
    gettext's rules: the first of LC_ALL, LC_MESSAGES and LANG that is set names
    the locale; unless that is C or POSIX, LANGUAGE (a colon-separated list of
    preferences) comes before it. Each name is matched to LANGUAGES as a browser's
    Accept-Language is (zh_CN and zh_SG -> zh-hans, ru_RU -> ru, vi_VN -> vi,
    en_US -> en); LANGUAGE_CODE when none matches."""
    locale = next(
        (
            environ[name]
            for name in ("LC_ALL", "LC_MESSAGES", "LANG")
            if environ.get(name)
        ),
        "",
    )
    if not locale or _locale_name(locale) in NO_LOCALE:
        return settings.LANGUAGE_CODE
    for name in [*environ.get("LANGUAGE", "").split(":"), locale]:
        code = translation.to_language(_locale_name(name.strip()))
        if not code or code.upper() in NO_LOCALE:
            continue
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


class AssayCommand(BaseCommand):
    """A management command that speaks the operator's language
    (`operator_language`) whoever calls it — manage.py, call_command — and leaves
    the caller's language as it was. CommandError messages must be translated when
    raised (gettext, not gettext_lazy): manage.py prints them after `execute`."""

    def execute(self, *args, **options):
        with translation.override(operator_language()):
            return super().execute(*args, **options)
