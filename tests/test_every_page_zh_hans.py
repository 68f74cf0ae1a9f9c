"""Every page of judging, construction and api × every role, in Simplified Chinese
(#30): with the demo loaded and `Accept-Language: zh-hans`, no English text that the
zh_Hans catalogue translates is left on the page, so the catalogue is actually used
(a string shown without `{% translate %}`/`gettext`, or rendered outside the active
language, fails here).

The probes are the catalogue's own msgids, cut at placeholders and HTML tags. A piece
that its Chinese translation keeps (CSV, GB/T, Fleiss' κ…) is no probe, nor is a
text of base.html or of the other apps' menus in it, whose translation is those
apps' concern; figures (SVG) stay English like the downloads. The same pages
in English must still show the English text: the probe is checked against that too,
so a probe that never reaches a page cannot pass for a translated one. Downloads
(CSV, LaTeX, the funnel figure) stay the same in either language."""

import gettext
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from benchmark.roles import Role
from construction.demo import CONSTRUCTION_SLUG
from tests.test_every_page import ROWS, demo_world

pytestmark = [pytest.mark.django_db(transaction=True)]

NAMESPACES = ("judging:", "construction:", "api:")
FOREIGN_TEMPLATES = ("base.html", "benchmark/_nav.html", "annotation/_nav.html")
ZH = {"accept-language": "zh-hans"}
CJK = re.compile(r"[\u4e00-\u9fff]")
# Download pages (URL name -> the formats to fetch, by their URL's last part).
DOWNLOADS = {
    "judging:table_download": ["", "tex"],
    "judging:robustness_download": [""],
    "construction:funnel_csv": [""],
    "construction:funnel_svg": [""],
}
EN = {"accept-language": "en"}
CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES"
# Texts the zh_Hans catalogue translates that may stay English on a Chinese page:
# names a person typed into the demo data, which the interface does not translate.
# Texts allowed on one page only: data that reads like an interface string.
ALLOWED_ON = {
    # The built-in prompt templates' notes ("Answer prompt for … items", "…SV check
    # against the source text"), data in the ledger like the prompts themselves.
    "judging:start_evaluation": {"Answer prompt", "SV check", "system"},
    # The demo's recorded call error ("the SV judge's reply was not valid JSON"),
    # quoted in a pending item's problem.
    "judging:evaluation_run": {"SV judge"},
    # The audit log names each record's model as Django names it (ContentType),
    # and a record by the name it was given (a campaign's "Translation review · run
    # 1", named when the run ended).
    "api:audit_log": {
        "Endpoints",
        "Search service",
        "API tokens",
        "Labels",
        "Translation review",
    },
}
ALLOWED = {
    # A search-verification stage's stored reason for its decision (ledger data,
    # written once in English like the prompts), shown as recorded.
    "No search result",
}
VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "col", "source"}
TEMPLATE_TAG = re.compile(r"\{[%{#].*?[%}#]\}")
PLACEHOLDER = re.compile(r"%\(\w+\)[sdr]|%[sd]|%%")
SPLIT = re.compile(r"<[^>]*>|&\w+;|" + PLACEHOLDER.pattern)
LETTERS = re.compile(r"[A-Za-z]{2,}")
EDGES = " \n\t·—–:;,.()[]“”\"'→←‹›…|/?!×"


class Texts(HTMLParser):
    """The text nodes of a page and the attribute values a person reads."""

    # A figure is a paper artefact, English in every interface like the downloads;
    # an element marked data-recorded shows data as it was recorded (the audit
    # log's before → after).
    SKIPPED = {"script", "style", "svg"}
    READ_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.texts, self.skipping, self.skipping_recorded = [], 0, 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self.skipping += 1
        elif tag not in VOID and (
            self.skipping_recorded or "data-recorded" in dict(attrs)
        ):
            self.skipping_recorded += 1
        self.texts += [v for k, v in attrs if k in self.READ_ATTRIBUTES and v]

    def handle_endtag(self, tag):
        if tag in self.SKIPPED and self.skipping:
            self.skipping -= 1
        elif self.skipping_recorded and tag not in VOID:
            self.skipping_recorded -= 1

    def handle_data(self, data):
        if not self.skipping and not self.skipping_recorded and data.strip():
            self.texts.append(data)


def page_texts(html: str) -> list[str]:
    parser = Texts()
    parser.feed(html)
    return [" ".join(text.split()) for text in parser.texts]


def pieces(text: str) -> set[str]:
    found = set()
    for piece in SPLIT.split(text):
        piece = " ".join(piece.split()).strip(EDGES)
        if LETTERS.search(piece):
            found.add(piece)
    return found


def other_apps_texts() -> set[str]:
    """Texts of the other apps' templates every page includes (base.html, their
    menus): their translation is the other apps' concern."""
    templates = Path(settings.BASE_DIR) / "templates"
    return {
        piece
        for name in FOREIGN_TEMPLATES
        for text in page_texts(TEMPLATE_TAG.sub("<x>", (templates / name).read_text()))
        for piece in pieces(text)
    }


def compiled_catalogue() -> dict:
    call_command("compilemessages", locale=["zh_Hans"], verbosity=0)
    with open(CATALOGUE / "django.mo", "rb") as mo:
        return gettext.GNUTranslations(mo)._catalog


def probes() -> set[str]:
    """Pieces of every translated msgid that its translation does not keep."""
    catalogue = compiled_catalogue()
    translations = " ".join(str(v) for v in catalogue.values())
    foreign = other_apps_texts()
    found = set()
    for key, translation in catalogue.items():
        msgid = key[0] if isinstance(key, tuple) else key
        if not msgid or translation == msgid:
            continue
        found |= {
            p for p in pieces(msgid) if p not in translations and p not in foreign
        }
    return found - ALLOWED


def matcher(probes: set[str]):
    """Finds the probes a page shows: a one-word probe as a whole text, a longer
    one as a run of whole words inside a text."""
    words = {probe for probe in probes if " " not in probe}
    phrases = sorted(probes - words, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w])(?:" + "|".join(map(re.escape, phrases)) + r")(?![\w])"
    )

    def left_in_english(texts: list[str]) -> set[str]:
        hits = {text.strip(EDGES) for text in texts} & words
        hits.update(pattern.findall("\n".join(texts)))
        return hits

    return left_in_english


def pages(world):
    for name, kwargs in ROWS.items():
        if name.startswith(NAMESPACES):
            yield name, reverse(name, kwargs=kwargs(world))


def test_every_page_of_judging_construction_and_api_is_in_chinese(settings):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    call_command("load_demo", allow_without_debug=True, verbosity=0)
    assert get_user_model().objects.filter(username=Role.MANAGER).exists()
    world = demo_world()
    assert world["construction"] == CONSTRUCTION_SLUG
    chinese_probes = probes()
    assert len(chinese_probes) > 500  # the catalogue was found and read
    left_in_english = matcher(chinese_probes)
    untranslated, seen_in_english, opened = [], set(), 0
    for role in Role.values:
        user = get_user_model().objects.get(username=role)
        chinese = Client(raise_request_exception=False, headers=ZH)
        english = Client(raise_request_exception=False, headers=EN)
        chinese.force_login(user)
        english.force_login(user)
        for name, url in pages(world):
            response = chinese.get(url)
            assert response.status_code < 500, (role, name)
            if "text/html" not in response.get("Content-Type", ""):
                continue
            opened += 1
            html = response.content.decode()
            assert response.get("Content-Language") == "zh-hans", name
            texts = page_texts(html)
            shown = left_in_english(texts) - ALLOWED_ON.get(name, set())
            for probe in sorted(shown):
                where = next((text for text in texts if probe in text), "")
                untranslated.append((role, name, probe, where[:120]))
            if role == Role.MANAGER:
                english_page = english.get(url).content.decode()
                seen_in_english |= left_in_english(page_texts(english_page))
    assert opened > 100
    # The English pages show the strings the Chinese ones translate: the probes
    # are real page text, not strings no page renders.
    assert len(seen_in_english) > 300
    assert untranslated == [], "\n".join(map(str, untranslated))
    # Downloads are the same bytes in either interface language.
    chinese.force_login(get_user_model().objects.get(username=Role.MANAGER))
    english.force_login(get_user_model().objects.get(username=Role.MANAGER))
    for name, url in pages(world):
        if name in DOWNLOADS:
            for fmt in DOWNLOADS[name]:
                address = url.replace(".csv", f".{fmt}") if fmt else url
                zh, en = chinese.get(address), english.get(address)
                assert zh.status_code == en.status_code == 200, (name, fmt)
                # matplotlib's SVG ids differ between two drawings: compare text.
                if name.endswith("_svg"):
                    assert not CJK.search(zh.content.decode()), name
                else:
                    assert zh.content == en.content, (name, fmt)
