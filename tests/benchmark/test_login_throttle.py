"""Sign-in throttling (django-axes): wrong passwords lock the username at that
address for LOGIN_LOCKOUT_MINUTES, with a page that says so; behind a proxy, the
address is the client's (TRUSTED_PROXY_COUNT, assay/client_address.py)."""

import pytest
from auditlog.models import LogEntry
from axes.models import AccessFailureLog, AccessLog
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from api.models import ApiToken
from benchmark.actions import do_create_user

PASSWORD = "the-right-password-42"


@pytest.fixture
def ana(db):
    return do_create_user("ana", PASSWORD, "expert")


def sign_in(client, password, username="ana"):
    return client.post(reverse("login"), {"username": username, "password": password})


def test_thirty_wrong_passwords_then_the_right_one_stays_locked(ana, settings):
    client = Client()
    responses = [sign_in(client, f"guess-{n}") for n in range(30)]
    limit = settings.AXES_FAILURE_LIMIT
    assert all(r.status_code == 200 for r in responses[: limit - 1])
    locked = responses[-1]
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed sign-ins" in page
    assert "locked for 15 minutes" in page
    right = sign_in(client, PASSWORD)
    assert right.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_lock_holds_one_username_only_and_a_manager_can_lift_it(ana):
    do_create_user("bo", PASSWORD, "expert")
    client = Client()
    for n in range(10):
        sign_in(client, f"guess-{n}")
    assert sign_in(client, PASSWORD, username="bo").status_code == 302
    call_command("axes_reset_username", "ana")
    other = Client()
    assert sign_in(other, PASSWORD).status_code == 302
    assert other.session["_auth_user_id"] == str(ana.pk)


def test_a_success_clears_earlier_failures(ana, settings):
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, f"guess-{n}")
    assert sign_in(client, PASSWORD).status_code == 302
    client.logout()
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, f"guess-{n}")
    assert sign_in(client, PASSWORD).status_code == 302


@pytest.mark.browser
def test_a_person_who_keeps_guessing_sees_the_lockout_page(page, ana, settings):
    page.goto("/login/")
    for n in range(settings.AXES_FAILURE_LIMIT):
        page.get_by_label("Username").fill("ana")
        page.get_by_label("Password").fill(f"guess-{n}")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
    heading = page.get_by_role("heading", name="Too many failed sign-ins")
    assert heading.is_visible()
    page.screenshot(path="/tmp/login-locked.png", full_page=True)
    page.goto("/login/")
    page.get_by_label("Username").fill("ana")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    assert page.get_by_role("heading", name="Too many failed sign-ins").is_visible()


# ------------------------------------------------- behind a proxy (TRUSTED_PROXY_COUNT)

PROXY = "127.0.0.1"
STRANGER = "203.0.113.9"
ANA_AT_HOME = "198.51.100.7"


def through_nginx(client_says: str | None, client_is: str) -> dict:
    """The headers nginx's `$proxy_add_x_forwarded_for` passes on: what the client
    sent, then the address nginx was reached from."""
    chain = f"{client_says}, {client_is}" if client_says else client_is
    return {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": chain}


def sign_in_via(client, password, headers, username="ana"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, **headers
    )


def test_behind_the_proxy_a_stranger_cannot_lock_a_user_out(ana, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    stranger = Client()
    for n in range(settings.AXES_FAILURE_LIMIT * 2):
        last = sign_in_via(stranger, f"guess-{n}", through_nginx(None, STRANGER))
    assert last.status_code == 429
    ana_client = Client()
    response = sign_in_via(ana_client, PASSWORD, through_nginx(None, ANA_AT_HOME))
    assert response.status_code == 302
    assert ana_client.session["_auth_user_id"] == str(ana.pk)


def test_a_forged_forwarded_address_counts_as_the_strangers_own(ana, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    stranger = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in_via(stranger, f"guess-{n}", through_nginx(ANA_AT_HOME, STRANGER))
    failures = AccessFailureLog.objects.filter(username="ana")
    assert set(failures.values_list("ip_address", flat=True)) == {STRANGER}
    response = sign_in_via(Client(), PASSWORD, through_nginx(None, ANA_AT_HOME))
    assert response.status_code == 302


def test_without_a_trusted_proxy_the_forwarded_header_is_not_believed(ana, settings):
    settings.TRUSTED_PROXY_COUNT = 0
    guesser = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        last = sign_in_via(
            guesser,
            f"guess-{n}",
            {"REMOTE_ADDR": STRANGER, "HTTP_X_FORWARDED_FOR": f"192.0.2.{n}"},
        )
    assert last.status_code == 429
    failures = AccessFailureLog.objects.filter(username="ana")
    assert set(failures.values_list("ip_address", flat=True)) == {STRANGER}


def test_the_audit_log_records_the_clients_address(ana, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    client = Client()
    headers = through_nginx("10.9.9.9", ANA_AT_HOME)
    assert sign_in_via(client, PASSWORD, headers).status_code == 302
    assert AccessLog.objects.get(username="ana").ip_address == ANA_AT_HOME
    client.post(reverse("api:tokens"), {"name": "nightly"}, **headers)
    created = LogEntry.objects.get_for_model(ApiToken).get()
    assert created.remote_addr == ANA_AT_HOME
