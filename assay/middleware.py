"""Request checks every view relies on."""

from django.conf import settings
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import resolve_url

NUL = "\x00"
NUL_MESSAGE = (
    "The request contains a NUL character (\\x00). No field of Assay accepts one; "
    "remove it and send the request again."
)


class RefuseNulMiddleware:
    """Answer 400 to a request with a NUL in its path, query or form fields.

    PostgreSQL cannot store or even compare a NUL in text, so one reaching a query
    would be a 500; forms refuse it field by field, but views also read the path
    and query strings directly. Uploaded files are the importer's to check.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if _holds_nul(request):
            return HttpResponseBadRequest(NUL_MESSAGE, content_type="text/plain")
        return self.get_response(request)


def _holds_nul(request) -> bool:
    if NUL in request.path:
        return True
    fields = [request.GET]
    if request.method == "POST":
        fields.append(request.POST)
    return any(
        NUL in key or any(NUL in value for value in values)
        for query in fields
        for key, values in query.lists()
    )


CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        # Heatmap cells and progress bars set colours and widths in style attributes.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    """Scripts only from Assay's own static files: no inline script, no eval (htmx's
    eval-based features are off in base.html), no framing."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


class HtmxSignedOutMiddleware:
    """Answer 401 instead of the sign-in redirect to an htmx request whose session
    has ended. Followed, the redirect would swap the sign-in page into the middle of
    a work screen; the 401 lets the page say "signed out" and keep what is typed.
    Sits just outside LoginRequiredMiddleware, whose redirect it replaces."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            request.headers.get("HX-Request") == "true"
            and response.status_code == 302
            and not request.user.is_authenticated
            and response["Location"].split("?")[0] == resolve_url(settings.LOGIN_URL)
        ):
            return HttpResponse(
                "You are signed out.", status=401, content_type="text/plain"
            )
        return response
