"""Where a worker may send a request a manager aimed: webhook URLs
(api.webhooks.actions.check_webhook_url, at save and again before each POST).

A worker sits inside the network: a URL naming 127.0.0.1, the cloud's metadata
service (169.254.169.254) or a 10.x host would have it POST, and show the answer on
a page, where the manager cannot reach. So a URL whose host is, or resolves to, an
address that is not globally routable — loopback, private, link-local, carrier-grade
NAT, unique-local IPv6, reserved, multicast, unspecified — is refused unless the
allow-list names that host exactly (`127.0.0.1`, `hooks.internal`; a `.domain`
pattern does not count). Hosts are resolved as the HTTP client will resolve them, so
0x7f000001, 2130706433, 0177.0.0.1 and 127.1 are all 127.0.0.1; every address a
name resolves to must pass. A name that does not resolve now is let through: it
reaches nothing now and is resolved again at the next check.

Control characters (CR, LF, NUL…) and spaces are refused anywhere in a URL: the
HTTP client refuses them only when sending, long after the save.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError


def check_target(url: str, allowed_hosts: list[str], setting: str, what: str) -> None:
    """Raise ValidationError when a worker must not send to `url` (an http(s) URL
    whose syntax the caller has checked); `setting` names the allow-list."""
    if any(ord(char) < 33 or ord(char) == 127 for char in url):
        raise ValidationError(
            f"The {what} may not hold a line break, a space or another control "
            "character."
        )
    host = urlsplit(url).hostname or ""
    if host in {entry.lower() for entry in allowed_hosts}:
        return
    for address in resolve(host):
        if not _is_public(address):
            raise ValidationError(
                f"{host} is {_kind(address)} address ({address}); a {what} may "
                f"point there only when {setting} names {host}."
            )


def is_internal(url: str) -> bool:
    """Does `url`'s host stand for an address that is not public? Such a target
    was let through by an allow-list; what it answers is not shown to the person
    who aimed it (a webhook's delivery log), so a URL cannot read an internal
    service."""
    host = urlsplit(url).hostname or ""
    return any(not _is_public(address) for address in resolve(host))


def resolve(host: str) -> list[str]:
    """The addresses `host` stands for, as the HTTP client's resolver reads it."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, ValueError):
        return []
    return sorted({info[4][0] for info in infos})


def _parsed(address: str):
    ip = ipaddress.ip_address(address.partition("%")[0])
    if ip.version == 6 and ip.ipv4_mapped:
        return ip.ipv4_mapped
    return ip


def _is_public(address: str) -> bool:
    ip = _parsed(address)
    return ip.is_global and not ip.is_multicast


def _kind(address: str) -> str:
    ip = _parsed(address)
    if ip.is_unspecified:
        return "an unspecified"
    if ip.is_loopback:
        return "a loopback"
    if ip.is_link_local:
        return "a link-local"
    if ip.is_private:
        return "a private"
    return "a non-public"
