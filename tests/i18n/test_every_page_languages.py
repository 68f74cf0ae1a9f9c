"""Every page × every role in each translated language and in English (#30).

In `zh-hans`, `ru` and `vi` (each role's saved interface language, no
Accept-Language) a page fails when it shows an English piece of a string the
catalogue translates: a string left untranslated, one evaluated in English before
the request's language was known, or English concatenated around a translated
fragment. The pieces are the
catalogue's msgids cut at placeholders and markup, less those a translation keeps
and the one list of allowed English (`tests.i18n.catalogues.ALLOWED_ENGLISH`);
figures (SVG) and data shown as recorded (`data-recorded`) stay as they are.

In `en` every page must still open, nothing of the catalogue's machinery may show
through (a `%(name)s` left in, the Chinese of a translated string), and the pages
show the English pieces the Chinese ones translate — so a piece no page renders
cannot pass for a translated one. Downloads are the same bytes in either language.

The URL names come from the every-page test (`tests/test_every_page.py`); the pages
of a work screen are also shown with a task taken (the POST its page sends)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from benchmark.language import do_set_interface_language
from benchmark.roles import Role
from tests.i18n.catalogues import (
    CUTS,
    english_left,
    english_patterns,
    entries,
    page_texts,
    stale_catalogues,
)
from tests.test_every_page import ROWS, demo_world

pytestmark = pytest.mark.django_db(transaction=True)


# Work screens show a task only after the page's own POST asks for one.
WORK_SCREENS = ("annotation:grade", "annotation:adjudicate", "annotation:review")
# Download pages (URL name -> the formats to fetch, by their URL's last part).
DOWNLOADS = {
    "judging:table_download": ["", "tex"],
    "judging:robustness_download": [""],
    "construction:funnel_csv": [""],
    "construction:funnel_svg": [""],
}
CJK = re.compile(r"[\u4e00-\u9fff]")


def visit_every_page(language: str, check):
    """Open every URL name (and the work screens with a task) as every role, the
    role's interface language set to `language`; `check(name, response)` returns
    its problems."""
    call_command("load_demo", allow_without_debug=True, verbosity=0)
    world = demo_world()
    problems, opened = [], 0
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
                    opened += 1
                    problems += [(role, name, p) for p in check(name, response)]
    assert opened > 300  # every role saw the pages its role opens
    return problems


def test_the_catalogues_are_compiled():
    assert stale_catalogues() == [], "run `make messages` (make run / make test do)"


# The interface languages whose catalogues are complete.
TRANSLATED = ("zh-hans", "ru", "vi")


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_catalogue_translates_every_string(language):
    assert [e.msgid for e in entries(language) if not e.translated] == []
    assert [e.msgid for e in entries(language, "djangojs") if not e.translated] == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_page_shows_no_english_string_of_the_catalogue(settings, language):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    patterns = english_patterns(language)

    def check(name, response):
        html = response.content.decode()
        found = english_left(html, patterns)
        if "<html" in html and f'lang="{language}"' not in html:
            found.append(f"<html> is not lang={language}")
        if response.get("Content-Language") != language:
            found.append(f"Content-Language {response.get('Content-Language')}")
        return found

    problems = visit_every_page(language, check)
    assert not problems, "\n".join(map(str, problems))


def test_every_page_in_english_opens_with_the_catalogue_out_of_sight(settings):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    chinese = {
        text
        for entry in entries("zh-hans")
        for text in entry.translations
        if len(text) >= 4
        and not CUTS.search(text)
        and text not in (entry.msgid, entry.plural)  # product names stay as they are
    }
    english = english_patterns("zh-hans")
    seen_in_english = set()

    def check(name, response):
        html = response.content.decode()
        seen_in_english.update(english_left(html, english))
        # A named placeholder of the catalogue left unfilled.
        found = re.findall(r"%\(\w+\)[sd]", html)
        found += [t for t in page_texts(html, latin_only=False) if t in chinese]
        if "<html" in html and '<html lang="en">' not in html:
            found.append("<html> is not lang=en")
        return found

    problems = visit_every_page("en", check)
    assert not problems, "\n".join(map(str, problems))
    # The English pages show the pieces the Chinese ones are checked for: the
    # probes are real page text, not strings no page renders.
    assert len(seen_in_english) > 300


def test_downloads_are_the_same_in_either_language(settings):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    call_command("load_demo", allow_without_debug=True, verbosity=0)
    world = demo_world()
    manager = get_user_model().objects.get(username=Role.MANAGER)
    chinese = Client(headers={"accept-language": "zh-hans"})
    english = Client(headers={"accept-language": "en"})
    chinese.force_login(manager)
    english.force_login(manager)
    for name, formats in DOWNLOADS.items():
        url = reverse(name, kwargs=ROWS[name](world))
        for fmt in formats:
            address = url.replace(".csv", f".{fmt}") if fmt else url
            zh, en = chinese.get(address), english.get(address)
            assert zh.status_code == en.status_code == 200, (name, fmt)
            # matplotlib's SVG ids differ between two drawings: compare text.
            if name.endswith("_svg"):
                assert not CJK.search(zh.content.decode()), name
            else:
                assert zh.content == en.content, (name, fmt)
