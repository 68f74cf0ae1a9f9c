"""Where a worker may send a request a manager aimed: webhook URLs
(api.webhooks.actions.check_webhook_url, at save and again before each POST) and
search services' base URLs (at save), and — `connectable`, given to
assay/outbound.py's client — the addresses the worker then connects to.

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

A check of the name before sending is not enough: the HTTP client would resolve it
again to connect, and a name can answer a public address to the check and 127.0.0.1
to the connection a moment later (DNS rebinding). So the client resolves once per
connection, checks every address, and connects to a checked address, never to the
name (`connectable`); and whether an answer came from inside is read off the
connection itself (`outbound.peer_address`), not from a new resolution.

Control characters (CR, LF, NUL…) and spaces are refused anywhere in a URL: the
HTTP client refuses them only when sending, long after the save.
"""

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from assay import outbound


def check_target(url: str, allowed_hosts: list[str], setting: str, what: str) -> None:
    """Raise ValidationError when a worker must not send to `url` (an http(s) URL
    whose syntax the caller has checked); `setting` names the allow-list."""
    if any(ord(char) < 33 or ord(char) == 127 for char in url):
        raise ValidationError(
            f"The {what} may not hold a line break, a space or another control "
            "character."
        )
    host = urlsplit(url).hostname or ""
    _check_addresses(host, resolve(host), allowed_hosts, setting, what)


def connectable(
    allowed_hosts: list[str], setting: str, what: str
) -> Callable[[str], list[str]]:
    """For outbound.client(addresses=…): host -> the addresses a worker may connect
    to, resolved once and each checked as check_target checks them; a host with an
    internal one (and not allow-listed) raises outbound.TargetRefused."""

    def addresses(host: str) -> list[str]:
        found = resolve(host)
        try:
            _check_addresses(host, found, allowed_hosts, setting, what)
        except ValidationError as error:
            raise outbound.TargetRefused(error.messages[0]) from None
        return found

    return addresses


def is_internal_address(address: str) -> bool:
    """Is `address` (an IP address) not public? An allow-listed target may be;
    what it answers is not shown to the person who aimed it (a webhook's delivery
    log), so a URL cannot read an internal service."""
    return not _is_public(address)


def _check_addresses(
    host: str, addresses: list[str], allowed_hosts: list[str], setting: str, what: str
) -> None:
    if host in {entry.lower() for entry in allowed_hosts}:
        return
    for address in addresses:
        if not _is_public(address):
            raise ValidationError(
                f"{host} is {_kind(address)} address ({address}); a {what} may "
                f"point there only when {setting} names {host}."
            )


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
