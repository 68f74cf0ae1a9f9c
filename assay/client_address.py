"""The address a request came from, the one place that reads it: sign-in
throttling (django-axes' AXES_CLIENT_IP_CALLABLE) and the audit log's actor
address (`AuditlogMiddleware` below) both call `client_address`.

Behind a reverse proxy REMOTE_ADDR is the proxy's, the same for everyone, and
X-Forwarded-For is whatever the client wrote followed by what each proxy appended.
Only the entries the trusted proxies appended can be believed: with
TRUSTED_PROXY_COUNT = n the client's address is the n-th entry from the right (nginx's
`$proxy_add_x_forwarded_for` appends the address it was reached from). Entries to
the left of it are the client's own words and never read. With 0 (no proxy) the
header is ignored altogether, so nobody can choose the address they are counted under.
"""

import ipaddress

import auditlog.middleware
from django.conf import settings


def client_address(request) -> str | None:
    remote = request.META.get("REMOTE_ADDR") or None
    count = settings.TRUSTED_PROXY_COUNT
    if count == 0:
        return remote
    forwarded = [
        part.strip()
        for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        if part.strip()
    ]
    if len(forwarded) < count:
        # The request skipped a proxy (reached the web process directly): only the
        # connection's own address is known.
        return remote
    return _address(forwarded[-count]) or remote


def _address(entry: str) -> str | None:
    """The IP address of one X-Forwarded-For entry, a port or brackets taken off."""
    if entry.startswith("["):
        entry = entry[1:].partition("]")[0]
    elif entry.count(":") == 1:
        entry = entry.partition(":")[0]
    try:
        return str(ipaddress.ip_address(entry))
    except ValueError:
        return None


class AuditlogMiddleware(auditlog.middleware.AuditlogMiddleware):
    """django-auditlog's, but the address of a change is the client's as read here:
    auditlog's own believes the first entry of X-Forwarded-For, which the client
    writes, and its X-Forwarded-Port likewise."""

    @staticmethod
    def _get_remote_addr(request):
        return client_address(request)

    @staticmethod
    def _get_remote_port(request):
        return None
