"""Every page × every role in Simplified Chinese and in English (#30).

In `zh-hans` (each role's saved interface language, no Accept-Language) a page
fails when it shows an English source string of the catalogue: a string left
untranslated, or one evaluated in English before the request's language was known.
In `en` every page must still open and nothing of the catalogue's machinery may show
through (a `%(name)s` left in, the Chinese of a translated string).

The URL names come from the every-page test (`tests/test_every_page.py`); the pages
of a review screen are also shown with a task taken (the POST its page sends)."""

import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from benchmark.language import do_set_interface_language
from benchmark.roles import Role
from tests.i18n.catalogues import entries, stale_catalogues
from tests.test_every_page import ROWS, demo_world

pytestmark = pytest.mark.django_db(transaction=True)

# The URL names whose pages must be wholly Chinese. The judging, construction and
# API pages are translated on another branch (i18napps); at its merge this becomes
# every URL name ("" matches them all).
ZH_CHECKED_URL_PREFIXES = ("benchmark:", "annotation:", "login", "logout")

# Texts that stay as they are in every language: product and tool names, file
# formats, code identifiers, units.
ALLOWED_ENGLISH = {
    "Assay",
    "API",
    "CSV",
    "JSON",
    "JSONL",
    "LaTeX",
    "Text",  # never shown alone: the report's download link is translated
    "Label Studio",
    "Argilla",
    "IndustryBench",
    "GB/T",
}

# Work screens show a task only after the page's own POST asks for one.
WORK_SCREENS = ("annotation:grade", "annotation:adjudicate", "annotation:review")

# Attributes a person reads (or hears from a screen reader).
READ_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt"}


class _Texts(HTMLParser):
    """The texts a person reads on a page: text nodes outside scripts and styles,
    and the read attributes."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in READ_ATTRIBUTES and value:
                self.texts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.texts.append(data)


def page_texts(html: str, latin_only: bool = True) -> list[str]:
    parser = _Texts()
    parser.feed(html)
    texts = (" ".join(text.split()) for text in parser.texts)
    return [text for text in texts if text and (not latin_only or LATIN.search(text))]


LATIN = re.compile("[A-Za-z]{2}")
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%%|<[^>]+>")


def english_patterns():
    """(texts, fragments): the whole English strings of the catalogue, and of those
    with placeholders or markup their longest literal piece (three words or more),
    as one regular expression."""
    whole, pieces = set(), set()
    for entry in entries("zh-hans"):
        if entry.context == "role":
            continue  # the demo's users are named after their roles
        for english in filter(None, (entry.msgid, entry.plural)):
            if english in ALLOWED_ENGLISH:
                continue
            parts = [p.strip(" .,:;()—") for p in PLACEHOLDER.split(english)]
            if len(parts) == 1:
                whole.add(" ".join(english.split()))
            else:
                longest = max(parts, key=len)
                if len(longest.split()) >= 3:
                    pieces.add(longest)
    pattern = re.compile(
        "|".join(map(re.escape, sorted(pieces, key=len, reverse=True)))
    )
    return whole, pattern


def english_left(html: str, whole, pattern) -> list[str]:
    return [
        text
        for text in page_texts(html)
        if text in whole or text.strip(" .,:;()—·›‹←→") in whole or pattern.search(text)
    ]


def visit_every_page(language: str, check):
    """Open every URL name (and the work screens with a task) as every role, the
    role's interface language set to `language`; `check(name, response)` returns
    its problems."""
    call_command("load_demo", allow_without_debug=True, verbosity=0)
    world = demo_world()
    problems = []
    for role in Role.values:
        user = get_user_model().objects.get(username=role)
        do_set_interface_language(user, language)
        client = Client(raise_request_exception=False)
        client.force_login(user)
        for name, kwargs in ROWS.items():
            if name == "logout":
                continue  # it would end the session the next pages need
            url = reverse(name, kwargs=kwargs(world))
            responses = [client.get(url)]
            if name in WORK_SCREENS and responses[0].status_code == 200:
                responses.append(client.post(url, {"action": "next"}))
            for response in responses:
                if response.status_code >= 500:
                    problems.append((role, name, response.status_code))
                elif response.get("Content-Type", "").startswith("text/html"):
                    problems += [(role, name, p) for p in check(name, response)]
    return problems


def test_the_catalogues_are_compiled():
    assert stale_catalogues() == [], "run `make messages` (make run / make test do)"


def test_the_chinese_catalogue_translates_every_string():
    assert [e.msgid for e in entries("zh-hans") if not e.translated] == []
    assert [e.msgid for e in entries("zh-hans", "djangojs") if not e.translated] == []


def test_every_page_in_chinese_shows_no_english_string_of_the_catalogue(settings):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    whole, pattern = english_patterns()

    def check(name, response):
        if not name.startswith(ZH_CHECKED_URL_PREFIXES):
            return []
        html = response.content.decode()
        found = english_left(html, whole, pattern)
        if "<html" in html and 'lang="zh-hans"' not in html:
            found.append("<html> is not lang=zh-hans")
        return found

    problems = visit_every_page("zh-hans", check)
    assert not problems, "\n".join(map(str, problems))


def test_every_page_in_english_opens_with_the_catalogue_out_of_sight(settings):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    chinese = {
        text
        for entry in entries("zh-hans")
        for text in entry.translations
        if len(text) >= 4 and not PLACEHOLDER.search(text)
    }

    def check(name, response):
        html = response.content.decode()
        # A named placeholder of the catalogue left unfilled.
        found = re.findall(r"%\(\w+\)[sd]", html)
        found += [t for t in page_texts(html, latin_only=False) if t in chinese]
        if "<html" in html and '<html lang="en">' not in html:
            found.append("<html> is not lang=en")
        return found

    problems = visit_every_page("en", check)
    assert not problems, "\n".join(map(str, problems))
