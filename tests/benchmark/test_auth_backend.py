"""The sign-in backend that loads the user with their roles in one statement
(benchmark/auth_backends.py): new sign-ins use it, sessions signed in through
ModelBackend before it keep working, and roles, deactivation and password changes
act on the next request as before."""

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmark.actions import do_set_roles
from benchmark.roles import Role
from tests.conftest import PASSWORD

# Smoke too: the one-statement read is plain SQL, so it runs on SQLite as well.
pytestmark = [pytest.mark.django_db, pytest.mark.smoke]

NEW_BACKEND = "benchmark.auth_backends.UserWithRolesBackend"
OLD_BACKEND = "django.contrib.auth.backends.ModelBackend"
MANAGERS_PAGE = reverse("benchmark:import_items")


def signed_in(username: str, backend: str = NEW_BACKEND) -> Client:
    """Signed in through the sign-in form, as a person is; with OLD_BACKEND, the
    session then made to look as one from before UserWithRolesBackend."""
    client = Client()
    response = client.post(
        reverse("login"), {"username": username, "password": PASSWORD}
    )
    assert response.status_code == 302, response.content[:300]
    if backend == OLD_BACKEND:
        as_if_signed_in_before(client)
    return client


def as_if_signed_in_before(client: Client) -> None:
    """The session as ModelBackend wrote it before UserWithRolesBackend existed."""
    session = client.session
    session[BACKEND_SESSION_KEY] = OLD_BACKEND
    session.save()


def test_a_new_sign_in_goes_through_the_roles_backend(personas):
    client = signed_in("manager")
    assert client.session[BACKEND_SESSION_KEY] == NEW_BACKEND
    assert client.get(MANAGERS_PAGE).status_code == 200
    assert client.get(MANAGERS_PAGE).context["user"] == personas["manager"]


def test_a_session_signed_in_through_the_old_backend_still_works(personas):
    client = signed_in("manager", OLD_BACKEND)
    page = client.get(MANAGERS_PAGE)
    assert page.status_code == 200
    assert page.context["user"] == personas["manager"]
    assert client.session[BACKEND_SESSION_KEY] == OLD_BACKEND
    assert signed_in("expert").get(MANAGERS_PAGE).status_code == 403


@pytest.mark.parametrize("backend", [NEW_BACKEND, OLD_BACKEND])
def test_a_removed_role_is_refused_on_the_next_request(personas, backend):
    client = signed_in("manager", backend)
    assert client.get(MANAGERS_PAGE).status_code == 200
    do_set_roles(personas["manager"], frozenset({Role.EXPERT}))
    assert client.get(MANAGERS_PAGE).status_code == 403
    do_set_roles(personas["manager"], frozenset({Role.MANAGER}))
    assert client.get(MANAGERS_PAGE).status_code == 200


@pytest.mark.parametrize("backend", [NEW_BACKEND, OLD_BACKEND])
def test_a_deactivated_user_is_signed_out(personas, backend):
    client = signed_in("manager", backend)
    manager = personas["manager"]
    manager.is_active = False
    manager.save(update_fields=["is_active"])
    page = client.get(MANAGERS_PAGE)
    assert page.status_code == 302
    assert page["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("backend", [NEW_BACKEND, OLD_BACKEND])
def test_a_changed_password_signs_the_session_out(personas, backend):
    client = signed_in("manager", backend)
    manager = personas["manager"]
    manager.set_password("a-new-password-77")
    manager.save(update_fields=["password"])
    page = client.get(MANAGERS_PAGE)
    assert page.status_code == 302
    assert page["Location"].startswith(reverse("login"))


def test_the_user_and_their_roles_are_one_statement(personas):
    new = signed_in("manager")
    old = signed_in("manager", OLD_BACKEND)
    counts = {}
    for name, client in (("new", new), ("old", old)):
        client.get(MANAGERS_PAGE)  # one-time per-process lookups
        with CaptureQueriesContext(connection) as queries:
            assert client.get(MANAGERS_PAGE).status_code == 200
        counts[name] = len(queries)
    assert counts["new"] == counts["old"] - 1


def test_a_user_without_groups_holds_no_role(personas):
    client = signed_in("outsider")
    assert client.get(MANAGERS_PAGE).status_code == 403
    assert client.get(reverse("annotation:queues")).status_code == 403


def test_a_wrong_password_is_checked_once(personas, monkeypatch):
    from django.contrib.auth import base_user

    checked = []
    real_check = base_user.check_password

    def counted_check(*args, **kwargs):
        checked.append(args)
        return real_check(*args, **kwargs)

    monkeypatch.setattr(base_user, "check_password", counted_check)
    response = Client().post(
        reverse("login"), {"username": "manager", "password": "wrong-password"}
    )
    assert response.status_code == 200
    assert len(checked) == 1
