"""What is translated once per language and kept (assay.per_language): a literal's
`{% translate %}` renders exactly as Django's own tag in every language, kept
values follow the active language and are forgotten with the catalogues, and the
header's language switch (a per-language fragment) marks the reader's language."""

import pytest
from django.template import Context, Engine, engines
from django.test import override_settings
from django.utils import translation

from assay.per_language import per_language

pytestmark = pytest.mark.django_db

TRANSLATE_CASES = [
    '{% translate "Log out" %}',
    '{% translate "Log out" as text %}[{{ text }}]',
    '{% translate "expert" context "role" %}',
    '{% translate "Log out" noop %}',
    "{% translate 'Log out' %}",
    '{% translate "100%% of <b>nothing</b>" %}',
    '{% translate "Log out"|upper %}',
]


def django_own(source: str, autoescape: bool) -> str:
    engine = Engine(libraries={"i18n": "django.templatetags.i18n"})
    return engine.from_string("{% load i18n %}" + source).render(
        Context(autoescape=autoescape)
    )


def ours(source: str, autoescape: bool) -> str:
    engine = engines["django"].engine
    return engine.from_string("{% load i18n %}" + source).render(
        Context(autoescape=autoescape)
    )


@pytest.mark.parametrize("source", TRANSLATE_CASES)
@pytest.mark.parametrize("language", ["en", "zh-hans", "ru"])
@pytest.mark.parametrize("autoescape", [True, False])
def test_a_remembered_translation_renders_as_djangos_tag(source, language, autoescape):
    with translation.override(language):
        first = ours(source, autoescape)
        again = ours(source, autoescape)  # from what was kept
        assert first == again == django_own(source, autoescape)


def test_a_remembered_translation_follows_the_language():
    rendered = []
    for language in ["en", "zh-hans", "en", "zh-hans"]:
        with translation.override(language):
            rendered.append(ours('{% translate "Log out" %}', True))
    assert rendered == ["Log out", "退出登录", "Log out", "退出登录"]


def test_kept_values_are_per_language_and_forgotten_with_the_catalogues(tmp_path):
    computed = []

    @per_language
    def greeting(name):
        computed.append(name)
        return translation.gettext("Log out") + " " + name

    with translation.override("zh-hans"):
        assert greeting("a") == greeting("a") == "退出登录 a"
        greeting("b")
    with translation.override("en"):
        assert greeting("a") == "Log out a"
    assert computed == ["a", "b", "a"]
    with override_settings(LOCALE_PATHS=[tmp_path]), translation.override("zh-hans"):
        # Without the project's catalogue: computed again, from Django's own.
        assert greeting("a") == translation.gettext("Log out") + " a" != "退出登录 a"
    assert computed == ["a", "b", "a", "a"]


def test_the_language_switch_marks_the_readers_language(client_for):
    client = client_for("expert")
    for language, current in [("zh-hans", "简体中文"), ("en", "English")]:
        page = client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        switch = page.split('data-testid="interface-language"', 1)[1]
        switch = switch.split("</details>", 1)[0]
        assert f'aria-current="true">{current}</button>' in switch
        assert switch.count("aria-current") == 1
        assert f'<span lang="{language}">{current}</span>' in switch
