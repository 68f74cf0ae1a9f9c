"""Single sign-on: the whole code flow against a real OpenID provider on 127.0.0.1
(tests/oidc_provider.py), with the browser's part played by hand: the test client
starts the sign-in, `requests` visits the provider, the test client takes the code
back."""

from urllib.parse import urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from benchmark.actions import do_create_user
from benchmark.models import SsoIdentity
from benchmark.roles import Role, user_roles
from tests.benchmark.test_settings_and_roles import settings_import
from tests.conftest import PASSWORD
from tests.oidc_provider import OidcPerson, OidcProvider

CALLBACK = "http://testserver/oidc/callback/"
ROLE_MAP = {
    "assay-managers": "manager",
    "assay-experts": "expert",
    "assay-adjudicators": "adjudicator",
    "assay-reviewers": "reviewer",
}


@pytest.fixture(scope="module")
def provider():
    with OidcProvider(redirect_uris={CALLBACK}) as op:
        yield op


@pytest.fixture
def sso(settings, provider, db):
    configure(settings, provider)
    return provider


def configure(settings, provider):
    """Assay configured as the provider's client, as the OIDC_* variables would."""
    provider.reset()
    settings.OIDC_ENABLED = True
    settings.OIDC_RP_CLIENT_ID = provider.client_id
    settings.OIDC_RP_CLIENT_SECRET = provider.client_secret
    settings.OIDC_OP_DISCOVERY_URL = provider.discovery_url
    settings.OIDC_ROLE_MAP = ROLE_MAP
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "benchmark.sso.AssayOIDCBackend",
    ]


def sign_in(client, provider, next_url: str = ""):
    """Login page → provider's /authorize → Assay's callback; the callback's answer."""
    start = client.get(reverse("oidc_authentication_init"), {"next": next_url})
    assert start.status_code == 302
    assert start["Location"].startswith(f"{provider.issuer}/authorize?")
    at_provider = requests.get(start["Location"], allow_redirects=False, timeout=5)
    assert at_provider.status_code == 302, at_provider.text
    back = urlsplit(at_provider.headers["Location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == CALLBACK
    return client.get(f"{back.path}?{back.query}")


def signed_in_user(client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id) if user_id else None


def test_code_flow_signs_in_and_creates_the_user(sso, client):
    sso.sign_in_as(
        OidcPerson(
            "subject-ada",
            "ada@example.org",
            groups=["assay-experts"],
            preferred_username="ada",
        )
    )
    response = sign_in(client, sso, next_url=reverse("benchmark:import_items"))
    assert response.status_code == 302
    assert response["Location"] == reverse("benchmark:import_items")
    user = signed_in_user(client)
    assert (user.username, user.email) == ("ada", "ada@example.org")
    assert user.sso_identity.subject == "subject-ada"
    assert user_roles(user) == {Role.EXPERT}
    # Later requests load the user through the SSO backend without the provider.
    assert client.get(reverse("benchmark:home")).status_code == 200
    assert sso.refusals == []


def test_roles_follow_the_provider_on_every_sign_in(sso):
    person = OidcPerson("subject-bo", "bo@example.org", groups=["assay-managers"])
    sso.sign_in_as(person)
    sign_in(Client(), sso)
    user = get_user_model().objects.get(sso_identity__subject="subject-bo")
    assert user_roles(user) == set(Role.values) and user.is_staff

    person.groups = ["assay-reviewers", "assay-adjudicators", "lunch-club"]
    sign_in(Client(), sso)
    user.refresh_from_db()
    assert set(user.groups.values_list("name", flat=True)) == {
        Role.REVIEWER,
        Role.ADJUDICATOR,
    }
    assert not user.is_staff

    person.groups = ["lunch-club"]
    client = Client()
    sign_in(client, sso)
    user = get_user_model().objects.get(pk=user.pk)  # user_roles caches on the object
    assert user_roles(user) == set()
    response = client.get(reverse("benchmark:home"))
    assert response.status_code == 403
    assert "Your account has no role yet" in response.content.decode()
    assert get_user_model().objects.filter(email="bo@example.org").count() == 1


def test_verified_email_carries_a_password_account_over(sso, client):
    existing = do_create_user("cy", PASSWORD, Role.EXPERT, email="cy@example.org")
    sso.sign_in_as(OidcPerson("subject-cy", "cy@example.org", groups=[]))
    sign_in(client, sso)
    assert signed_in_user(client) == existing
    assert user_roles(existing) == set()  # the provider says which roles, now


def test_unverified_email_gets_an_account_of_its_own(sso, client):
    existing = do_create_user("dee", PASSWORD, Role.MANAGER, email="dee@example.org")
    sso.sign_in_as(OidcPerson("subject-dee", "dee@example.org", email_verified=False))
    sign_in(client, sso)
    user = signed_in_user(client)
    assert user != existing and user.username == "dee@example.org"
    assert user_roles(existing) == set(Role.values)


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        ("unpublished key", "JWS token verification failed"),
        ("other audience", "The ID token is for another client"),
    ],
)
def test_forged_or_misaddressed_id_token_is_refused(
    sso, client, caplog, tamper, reason
):
    if tamper == "unpublished key":
        sso.sign_with_unpublished_key = True
    else:
        sso.id_token_audience = "another-client"
    sso.sign_in_as(OidcPerson("subject-eve", "eve@example.org", ["assay-managers"]))
    response = sign_in(client, sso)
    assert response.status_code == 302
    assert response["Location"] == "/login/?sso=failed"
    assert signed_in_user(client) is None
    assert not SsoIdentity.objects.exists()
    page = client.get(response["Location"]).content.decode()
    assert "Single sign-on did not sign you in" in page
    assert reason in caplog.text


def test_declined_sign_in_goes_back_to_the_login_page(sso, client):
    sso.sign_in_as(None)
    response = sign_in(client, sso)
    assert response["Location"] == "/login/?sso=failed"
    assert signed_in_user(client) is None


def test_unreachable_provider_is_told_on_the_login_page(sso, client, settings):
    settings.OIDC_OP_DISCOVERY_URL = (
        "http://127.0.0.1:9/.well-known/openid-configuration"
    )
    response = client.get(reverse("oidc_authentication_init"))
    assert response.status_code == 302
    assert response["Location"] == "/login/?sso=failed"


def test_login_page_offers_sso_beside_the_password_form(sso, client, personas):
    page = client.get(reverse("login")).content.decode()
    assert "Sign in with single sign-on" in page
    assert 'name="password"' in page
    # A plain link: the CSP's form-action 'self' would stop a form posting onward.
    assert f'<a class="button" href="{reverse("oidc_authentication_init")}' in page
    response = client.post(
        reverse("login"), {"username": "expert", "password": PASSWORD}
    )
    assert response.status_code == 302
    assert signed_in_user(client) == personas["expert"]


def test_without_configuration_nothing_changes(client, settings, db):
    assert not settings.OIDC_ENABLED
    page = client.get(reverse("login")).content.decode()
    assert "single sign-on" not in page
    assert client.get(reverse("oidc_authentication_init")).status_code == 404
    assert client.get(reverse("oidc_authentication_callback")).status_code == 404
    assert "benchmark.sso.AssayOIDCBackend" not in settings.AUTHENTICATION_BACKENDS


# --- the provider refuses what a real one does ------------------------------------


def authorize_code(provider, **overrides) -> str:
    params = {
        "response_type": "code",
        "client_id": provider.client_id,
        "redirect_uri": CALLBACK,
        "scope": "openid email",
        "state": "s",
        **overrides,
    }
    response = requests.get(
        f"{provider.issuer}/authorize", params, allow_redirects=False, timeout=5
    )
    assert response.status_code == 302
    return dict(
        part.split("=", 1)
        for part in urlsplit(response.headers["Location"]).query.split("&")
    )["code"]


def exchange(provider, code, **overrides):
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": CALLBACK,
        "client_id": provider.client_id,
        "client_secret": provider.client_secret,
        **overrides,
    }
    return requests.post(f"{provider.issuer}/token", form, timeout=5)


def test_provider_codes_are_single_use_and_bound_to_the_client(provider):
    provider.reset()
    provider.sign_in_as(OidcPerson("subject-f", "f@example.org"))
    code = authorize_code(provider)
    assert exchange(provider, code, client_secret="wrong").status_code == 401
    assert exchange(provider, code).status_code == 200
    assert exchange(provider, code).json()["error"] == "invalid_grant"

    other_uri = exchange(provider, authorize_code(provider), redirect_uri="http://x/")
    assert other_uri.json()["error"] == "invalid_grant"

    pkce = authorize_code(
        provider, code_challenge="a" * 43, code_challenge_method="S256"
    )
    assert exchange(provider, pkce, code_verifier="b" * 43).status_code == 400

    unregistered = requests.get(
        f"{provider.issuer}/authorize",
        {"client_id": provider.client_id, "redirect_uri": "http://evil.example/"},
        allow_redirects=False,
        timeout=5,
    )
    assert unregistered.status_code == 400 and "Location" not in unregistered.headers


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OIDC_ROLE_MAP": "assay-admins=admin"}, "unknown roles admin"),
        ({"OIDC_ROLE_MAP": "assay-managers"}, "is not of the form key=value"),
        ({"OIDC_ROLE_MAP": "a=manager,a=expert"}, "names 'a' more than once"),
        ({"OIDC_RP_CLIENT_ID": "assay"}, "is set but not its secret"),
        (
            {"OIDC_RP_CLIENT_ID": "assay", "OIDC_RP_CLIENT_SECRET": "s"},
            "needs OIDC_OP_DISCOVERY_URL or OIDC_OP_AUTHORIZATION_ENDPOINT",
        ),
        (
            {
                "OIDC_RP_CLIENT_ID": "assay",
                "OIDC_RP_CLIENT_SECRET": "s",
                "OIDC_OP_DISCOVERY_URL": "https://idp.example/.well-known/x",
                "OIDC_RP_SIGN_ALGO": "HS256",
            },
            "is not one of RS256",
        ),
        ({"OIDC_OP_DISCOVERY_URL": "idp.example"}, "must be an http(s):// URL"),
        (
            {"OIDC_OP_DISCOVERY_URL": "https://idp.example/x"},
            "OIDC_RP_CLIENT_ID is not",
        ),
    ],
)
def test_bad_sso_settings_fail_loudly(env, message):
    result = settings_import({"DEBUG": "1", **env})
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.browser
def test_browser_signs_in_with_single_sign_on(
    transactional_db, settings, provider, live_server, page
):
    configure(settings, provider)
    provider.redirect_uris.add(f"{live_server.url}/oidc/callback/")
    provider.sign_in_as(
        OidcPerson("subject-gus", "gus@example.org", ["assay-experts"], "gus")
    )
    blocked = []
    page.on(
        "console",
        lambda message: (
            blocked.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    page.goto("/login/")
    page.get_by_role("link", name="Sign in with single sign-on").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.locator(".who")).to_contain_text("gus")
    assert blocked == []
    user = get_user_model().objects.get(username="gus")
    assert user_roles(user) == {Role.EXPERT}
