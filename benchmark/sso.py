"""Single sign-on (OpenID Connect) through mozilla-django-oidc.

The library runs the code flow; this module finds the provider's endpoints (its
discovery document or the settings), checks what the library leaves out (the ID
token's audience and issuer, the userinfo subject) and hands the claims to
`do_sign_in_sso_user`, which sets the user's roles from them on every sign-in.
"""

import functools
import logging

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.core.exceptions import SuspiciousOperation
from django.http import Http404
from django.shortcuts import redirect
from django.views.generic import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from benchmark.actions import SsoClaims, do_sign_in_sso_user
from benchmark.language_views import SignInForm, apply_sign_in_choice
from benchmark.roles import user_with_roles

logger = logging.getLogger(__name__)

# Setting -> the discovery document's key for it.
DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read."""


@functools.cache
def discovery_document(url: str) -> dict:
    # Read on the first sign-in, not at start-up: a provider that is down must not
    # keep Assay (and password sign-in) from starting. A failure is not cached.
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except requests.RequestException as error:
        raise ProviderUnavailable(f"{url}: {error}") from error
    missing = [key for key in [*DISCOVERED.values(), "issuer"] if key not in document]
    if missing:
        raise ProviderUnavailable(f"{url} does not name {', '.join(missing)}.")
    return document


def provider_setting(name: str) -> str:
    """An endpoint setting, or the discovery document's value when it is not set."""
    value = getattr(settings, name)
    if not value and settings.OIDC_OP_DISCOVERY_URL:
        value = discovery_document(settings.OIDC_OP_DISCOVERY_URL)[DISCOVERED[name]]
    return value


def expected_issuer() -> str:
    """The issuer ID tokens must name; known only from a discovery document."""
    if not settings.OIDC_OP_DISCOVERY_URL:
        return ""
    return discovery_document(settings.OIDC_OP_DISCOVERY_URL)["issuer"]


def mapped_roles(claims: dict) -> frozenset[str]:
    """The Assay roles that the role claim's values map to; unmapped values give
    nothing, so a person in none of the mapped groups holds no role."""
    values = claims.get(settings.OIDC_ROLE_CLAIM) or []
    # Some providers send a single group as a string.
    if isinstance(values, str):
        values = [values]
    role_map = settings.OIDC_ROLE_MAP
    return frozenset(
        role_map[value]
        for value in values
        if isinstance(value, str) and value in role_map
    )


class AssayOIDCBackend(OIDCAuthenticationBackend):
    def __init__(self, *args, **kwargs):
        # Django builds the backend on every request of a user who signed in with
        # it, to load them; the provider's endpoints are looked up only for a
        # sign-in (`authenticate`), so a provider that is down does not break pages.
        self.UserModel = get_user_model()

    def get_user(self, user_id):
        # The user with their roles in one statement, as for password sign-ins
        # (benchmark/auth_backends.py); mozilla-django-oidc's own reads only the
        # user, and, as it, this one keeps a deactivated user's session.
        return user_with_roles(user_id)

    def authenticate(self, request, **kwargs):
        if request is None or "code" not in request.GET:
            return None
        try:
            self.OIDC_OP_TOKEN_ENDPOINT = provider_setting("OIDC_OP_TOKEN_ENDPOINT")
            self.OIDC_OP_USER_ENDPOINT = provider_setting("OIDC_OP_USER_ENDPOINT")
            self.OIDC_OP_JWKS_ENDPOINT = provider_setting("OIDC_OP_JWKS_ENDPOINT")
            self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
            self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
            self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
            self.OIDC_RP_IDP_SIGN_KEY = None
            return super().authenticate(request, **kwargs)
        except (
            ProviderUnavailable,
            requests.RequestException,
            jwt.InvalidTokenError,
            SuspiciousOperation,
        ) as error:
            # The callback sends the browser back to the sign-in page, which says
            # that single sign-on failed; the reason is for the operator.
            logger.warning("Single sign-on refused: %s", error)
            return None

    def verify_token(self, token, **kwargs):
        payload = super().verify_token(token, **kwargs)
        # The library checks the signature, expiry and nonce, not whom the token
        # was issued to or by: a token the provider made for another client must
        # not sign anyone in here.
        audience = payload.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience or []
        if self.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("The ID token is for another client.")
        issuer = expected_issuer()
        if issuer and payload.get("iss") != issuer:
            raise SuspiciousOperation("The ID token names another issuer.")
        return payload

    def get_userinfo(self, access_token, id_token, payload):
        claims = super().get_userinfo(access_token, id_token, payload)
        if not payload.get("sub") or claims.get("sub") != payload["sub"]:
            raise SuspiciousOperation("The userinfo answer is about someone else.")
        # Providers put the role claim in the ID token, the userinfo or both.
        return {**payload, **claims}

    def get_or_create_user(self, access_token, id_token, payload):
        claims = self.get_userinfo(access_token, id_token, payload)
        email = claims.get("email") or ""
        return do_sign_in_sso_user(
            SsoClaims(
                subject=claims["sub"],
                email=email,
                email_verified=claims.get("email_verified") is True,
                username=claims.get("preferred_username") or email or claims["sub"],
                roles=mapped_roles(claims),
            )
        )


class SsoStartView(OIDCAuthenticationRequestView):
    """Redirects the browser to the provider's sign-in page."""

    def __init__(self, **kwargs):
        # The library reads the endpoint here; `dispatch` does, where an
        # unreachable provider can be answered with the sign-in page.
        View.__init__(self, **kwargs)

    def dispatch(self, request, *args, **kwargs):
        if not settings.OIDC_ENABLED:
            raise Http404
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider_setting(
                "OIDC_OP_AUTHORIZATION_ENDPOINT"
            )
        except ProviderUnavailable as error:
            logger.warning("Single sign-on unavailable: %s", error)
            return redirect(settings.LOGIN_REDIRECT_URL_FAILURE)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        return super().dispatch(request, *args, **kwargs)


class SsoCallbackView(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back with a code."""

    def dispatch(self, request, *args, **kwargs):
        if not settings.OIDC_ENABLED:
            raise Http404
        return super().dispatch(request, *args, **kwargs)


class SignInView(auth_views.LoginView):
    """Django's password sign-in, with the single sign-on link when it is on and
    the interface language to choose."""

    form_class = SignInForm

    def form_valid(self, form):
        return apply_sign_in_choice(self.request, form, super().form_valid(form))

    def get_context_data(self, **kwargs):
        return super().get_context_data(
            sso_enabled=settings.OIDC_ENABLED,
            sso_failed="sso" in self.request.GET,
            **kwargs,
        )
