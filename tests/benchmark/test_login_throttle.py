"""Sign-in throttling (django-axes): wrong passwords lock the username at that
address for LOGIN_LOCKOUT_MINUTES, with a page that says so."""

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

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
