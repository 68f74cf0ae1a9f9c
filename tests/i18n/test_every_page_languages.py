"""Every page × every role in each translated language and in English (#30).

In `zh-hans`, `ru` and `vi` (each role's saved interface language, no
Accept-Language) a page fails when it shows an English source string of the
catalogue: a string left untranslated, or one evaluated in English before the
request's language was known.
In `en` every page must still open and nothing of the catalogue's machinery may show
through (a `%(name)s` left in, the Chinese of a translated string).

The URL names come from the every-page test (`tests/test_every_page.py`); the pages
of a review screen are also shown with a task taken (the POST its page sends)."""

import re

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils.text import capfirst

from benchmark.language import do_set_interface_language
from benchmark.roles import Role
from tests.i18n.catalogues import (
    PLACEHOLDER,
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

    # The audit log names the kinds of what changed by their models' names, which
    # Assay's models do not translate (the admin's vocabulary): left out there.
    model_names = {
        capfirst(name)
        for model in django_apps.get_models()
        for name in (model._meta.verbose_name, model._meta.verbose_name_plural)
    }

    def check(name, response):
        html = response.content.decode()
        found = english_left(html, patterns)
        if name == "api:audit_log":
            found = [text for text in found if text not in model_names]
        if "<html" in html and f'lang="{language}"' not in html:
            found.append(f"<html> is not lang={language}")
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
        and not PLACEHOLDER.search(text)
        and text not in (entry.msgid, entry.plural)  # product names stay as they are
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
