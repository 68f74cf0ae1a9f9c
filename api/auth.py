"""Who is calling: a personal API token (`Authorization: Bearer …`) or the browser's
session. Either way the call then acts as that user, in that user's roles."""

from ninja.security import HttpBearer, SessionAuth

from api.actions import do_use_token


class BearerToken(HttpBearer):
    def __call__(self, request):
        # Not HttpBearer's own: with DEBUG on it logs any other Authorization header
        # whole, and that may be someone's credentials.
        scheme, _, text = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not text.strip():
            return None
        return self.authenticate(request, text.strip())

    def authenticate(self, request, token):
        found = do_use_token(token)
        if found is None:
            return None
        # Role checks (benchmark.roles) read request.user, as on the pages.
        request.user = found.user
        return found.user


# A token first: a call that sends one is a program. Session calls that change
# something need the CSRF token, as forms do.
AUTH = [BearerToken(), SessionAuth(csrf=True)]
