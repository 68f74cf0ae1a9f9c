"""The language of management commands (#30): the operator's, as the standard
gettext environment names it, so that `LANG=zh_CN.UTF-8 manage.py …` answers in
Chinese — messages, errors, refusals and `--help` alike.

Every command of Assay's apps is an `AssayCommand`; tests/i18n checks that none is
a bare BaseCommand."""

import json
import os
import unicodedata
from collections.abc import Mapping

from django.conf import settings
from django.core.management.base import BaseCommand, DjangoHelpFormatter
from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext as _

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


def _settled(text):
    """A lazy translation as a plain string in the active language; anything else
    (None, a plain string, a tuple of metavars) as it is."""
    return str(text) if isinstance(text, Promise) else text


# Punctuation a line may not start with, and punctuation it may not end with
# (the CJK line-breaking rules, kinsoku, in their simplest form).
NO_LINE_START = frozenset("，。、；：？！）》」』】〉’”,.;:?!)%")
NO_LINE_END = frozenset("（《「『【〈‘“(")


def is_wide(char: str) -> bool:
    """Does `char` take two columns of a terminal (CJK ideographs, full-width
    punctuation)?"""
    return unicodedata.east_asian_width(char) in "WF"


def columns(text: str) -> int:
    """The terminal columns `text` takes."""
    return sum(2 if is_wide(char) else 1 for char in text)


def _units(word: str) -> list[str]:
    """A word without spaces cut where a line may break: between two characters
    of which one is wide (Chinese has no spaces), never before closing or after
    opening punctuation. A run of narrow characters stays whole."""
    units = [word[0]]
    for char in word[1:]:
        previous = units[-1][-1]
        breakable = (
            (is_wide(char) or is_wide(previous))
            and char not in NO_LINE_START
            and previous not in NO_LINE_END
        )
        if breakable:
            units.append(char)
        else:
            units[-1] += char
    return units


def wrap_columns(text: str, width: int) -> list[str]:
    """`text`'s words (split on whitespace) in lines of at most `width` terminal
    columns, filled greedily; a unit wider than a line has a line of its own."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        for position, unit in enumerate(_units(word)):
            joined = line + (" " if line and position == 0 else "") + unit
            if line and columns(joined) > width:
                lines.append(line)
                line = unit
            else:
                line = joined
    if line:
        lines.append(line)
    return lines


class HelpFormatter(DjangoHelpFormatter):
    """argparse wraps help by characters, so a Chinese line (two columns a
    character, no spaces) ran twice as wide as the terminal. Text with a wide
    character is wrapped by columns; other text as argparse does."""

    def _split_lines(self, text, width):
        if not any(is_wide(char) for char in text):
            return super()._split_lines(text, width)
        return wrap_columns(text, width)

    def _fill_text(self, text, width, indent):
        if not any(is_wide(char) for char in text):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in wrap_columns(text, width))


class AssayCommand(BaseCommand):
    """A management command that speaks the operator's language
    (`operator_language`) whoever calls it — manage.py, call_command — and leaves
    the caller's language as it was. CommandError messages must be translated when
    raised (gettext, not gettext_lazy): manage.py prints them after `execute`.
    Its `help` and its arguments' help texts are gettext_lazy (a class attribute is
    evaluated at import); `create_parser` translates them."""

    def create_parser(self, prog_name, subcommand, **kwargs):
        """The parser of `manage.py CMD --help`, `manage.py help CMD` and
        call_command, its texts in the operator's language. They are made plain
        strings here, under the override: argparse formats them later, outside it,
        and with re, which a lazy string does not pass. argparse's own words
        ("usage:", "options:") are Python's gettext domain, not ours."""
        kwargs.setdefault("formatter_class", HelpFormatter)
        with translation.override(operator_language()):
            parser = super().create_parser(prog_name, subcommand, **kwargs)
            parser.description = _settled(parser.description)
            for action in parser._actions:
                action.help = _settled(action.help)
                action.metavar = _settled(action.metavar)
        return parser

    def execute(self, *args, **options):
        with translation.override(operator_language()):
            return super().execute(*args, **options)

    def write_changes(self, before: Mapping | None, after: Mapping) -> None:
        """What a command that saves a row by name (`add_endpoint`,
        `add_search_service`) changed on one that existed: an option a re-run
        leaves out takes its default, and the operator reads which settings that
        put back."""
        if before is None:
            return
        changes = changed_settings(before, after)
        if not changes:
            self.stdout.write(_("Nothing changed."))
            return
        self.stdout.write(_("Changed from what was saved:"))
        for change in changes:
            self.stdout.write(f"  {change}")


def _shown(value) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def changed_settings(before: Mapping, after: Mapping) -> list[str]:
    """ "field: old → new" for each setting that differs from what was saved."""
    return [
        f"{field}: {_shown(before[field])} → {_shown(value)}"
        for field, value in after.items()
        if before[field] != value
    ]
