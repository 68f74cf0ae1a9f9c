"""The interface language: saved on the account, applied on each request, chosen at
sign-in, in the header or on the preferences page; the browser's Accept-Language
(or Django's language cookie) when nothing is saved."""

import json

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from benchmark.language import (
    SESSION_KEY,
    check_interface_language,
    do_set_interface_language,
    saved_language,
)
from benchmark.models import AccountPreference
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

HOME = "/"


def html_lang(response) -> str:
    head = response.content.decode()
    return head.split('<html lang="', 1)[1].split('"', 1)[0]


def test_saving_a_language_keeps_one_row_per_person(personas):
    expert = personas["expert"]
    do_set_interface_language(expert, "zh-hans")
    do_set_interface_language(expert, "ru")
    assert saved_language(expert) == "ru"
    assert AccountPreference.objects.filter(user=expert).count() == 1
    do_set_interface_language(expert, "")
    assert saved_language(expert) == ""


def test_an_unknown_language_is_refused_and_changes_nothing(personas):
    expert = personas["expert"]
    do_set_interface_language(expert, "vi")
    with pytest.raises(ValidationError, match="not an interface language"):
        do_set_interface_language(expert, "fr")
    assert saved_language(expert) == "vi"
    assert check_interface_language("") == ""


def test_the_saved_language_wins_over_the_browser(client_for, personas):
    do_set_interface_language(personas["expert"], "zh-hans")
    client = client_for("expert")
    response = client.get(HOME, HTTP_ACCEPT_LANGUAGE="ru,en;q=0.5")
    assert html_lang(response) == "zh-hans"
    assert response["Content-Language"] == "zh-hans"
    assert "基准" in response.content.decode()


def test_without_a_saved_language_the_browser_decides(client_for):
    client = client_for("reviewer")
    assert html_lang(client.get(HOME, HTTP_ACCEPT_LANGUAGE="vi,en;q=0.5")) == "vi"
    assert html_lang(client.get(HOME, HTTP_ACCEPT_LANGUAGE="ru")) == "ru"
    # A language Assay does not offer falls back to English.
    assert html_lang(client.get(HOME, HTTP_ACCEPT_LANGUAGE="fr")) == "en"


def test_the_account_is_read_once_per_session(
    client_for, personas, django_assert_num_queries
):
    do_set_interface_language(personas["expert"], "ru")
    client = client_for("expert")
    client.get(HOME)
    assert client.session[SESSION_KEY] == "ru"
    # Changed behind the session's back (another browser): this session keeps its
    # choice until the person signs in again or chooses here.
    AccountPreference.objects.filter(user=personas["expert"]).update(
        interface_language="vi"
    )
    assert html_lang(client.get(HOME)) == "ru"


def test_choosing_at_sign_in_saves_the_choice(personas):
    client = Client()
    response = client.post(
        reverse("login"),
        {"username": "expert", "password": PASSWORD, "language": "zh-hans"},
    )
    assert response.status_code == 302
    assert saved_language(personas["expert"]) == "zh-hans"
    assert html_lang(client.get(HOME, HTTP_ACCEPT_LANGUAGE="en")) == "zh-hans"
    # Signing in again with "my browser's language" keeps the saved choice.
    client.post(reverse("logout"))
    client.post(reverse("login"), {"username": "expert", "password": PASSWORD})
    assert saved_language(personas["expert"]) == "zh-hans"


def test_the_sign_in_page_offers_the_languages_in_their_own_names():
    page = Client().get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    for name in ("简体中文", "Русский", "Tiếng Việt", "English"):
        assert name in page


def test_the_header_switch_saves_the_choice_and_stays_on_the_page(client_for, personas):
    client = client_for("reviewer")
    response = client.post(
        reverse("benchmark:set_language"),
        {"language": "ru", "next": "/annotation/queues/"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/annotation/queues/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "ru"
    assert saved_language(personas["reviewer"]) == "ru"
    assert "Очереди проверки" in client.get("/annotation/queues/").content.decode()


def test_the_header_switch_before_sign_in_sets_the_cookie_only():
    client = Client()
    response = client.post(
        reverse("benchmark:set_language"), {"language": "vi", "next": "/login/"}
    )
    assert response["Location"] == "/login/"
    assert html_lang(client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en")) == "vi"
    assert AccountPreference.objects.count() == 0


def test_the_header_switch_refuses_an_unknown_language_and_a_foreign_next(
    client_for, personas
):
    client = client_for("expert")
    response = client.post(
        reverse("benchmark:set_language"),
        {"language": "xx", "next": "https://elsewhere.example/"},
    )
    assert response["Location"] == "/"
    assert saved_language(personas["expert"]) == ""


def test_the_preferences_page_saves_and_shows_the_choice(client_for, personas):
    client = client_for("adjudicator")
    page = client.get(reverse("benchmark:preferences"))
    assert page.status_code == 200
    response = client.post(reverse("benchmark:preferences"), {"language": "vi"})
    assert response.status_code == 302
    assert saved_language(personas["adjudicator"]) == "vi"
    page = client.get(reverse("benchmark:preferences")).content.decode()
    assert 'value="vi" checked' in page
    assert "Đã lưu ngôn ngữ giao diện." in page
    refused = client.post(reverse("benchmark:preferences"), {"language": "de"})
    assert refused.status_code == 400
    assert saved_language(personas["adjudicator"]) == "vi"


def test_the_javascript_catalogue_follows_the_language(client_for, personas):
    do_set_interface_language(personas["expert"], "zh-hans")
    script = client_for("expert").get("/jsi18n/?lang=zh-hans").content.decode()
    # The catalogue is JSON with non-ASCII characters escaped.
    assert (
        json.dumps("不会被重复计数") in f'"{script}"'
        or json.dumps("不会被重复计数")[1:-1] in script
    )
    anonymous = Client().get("/jsi18n/?lang=en", HTTP_ACCEPT_LANGUAGE="en")
    assert anonymous.status_code == 200
