"""Who is calling: a personal API token (`Authorization: Bearer …`) or the browser's
session. Either way the call then acts as that user, in that user's roles, and the
route's roles are checked here, before its parameters are read (api.main)."""

from django.core.exceptions import PermissionDenied
from ninja.security import HttpBearer
from ninja.security import SessionAuth as NinjaSessionAuth

from api.actions import do_use_token
from benchmark.roles import has_role


def route_roles(request, roles: tuple[str, ...]) -> None:
    """Note the roles the called route needs (api.main.roles_before_parameters)."""
    request.assay_route_roles = roles


def _in_role(request, user):
    roles = getattr(request, "assay_route_roles", None)
    if user and roles is not None and not has_role(user, *roles):
        raise PermissionDenied
    return user


class BearerToken(HttpBearer):
    def __call__(self, request):
        # Not HttpBearer's own: with DEBUG on it logs any other Authorization header
        # whole, and that may be someone's credentials.
        scheme, _, text = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not text.strip():
            return None
        return _in_role(request, self.authenticate(request, text.strip()))

    def authenticate(self, request, token):
        found = do_use_token(token)
        if found is None:
            return None
        # Role checks (benchmark.roles) read request.user, as on the pages.
        request.user = found.user
        return found.user


class SessionAuth(NinjaSessionAuth):
    def __call__(self, request):
        # No session, no CSRF question: a caller without credentials gets 401
        # rather than django-ninja's 403 for a missing CSRF cookie.
        if not request.user.is_authenticated:
            return None
        return _in_role(request, super().__call__(request))


BEARER = BearerToken()
# A token first: a call that sends one is a program. Session calls that change
# something need the CSRF token, as forms do.
AUTH = [BEARER, SessionAuth(csrf=True)]
