"""How a webhook POST is signed (no ORM); README.md "Webhooks" tells receivers.

The signed content is the timestamp header's value, a dot, and the raw body bytes:

    X-Assay-Timestamp: 1767225600
    X-Assay-Signature: sha256=<hex HMAC-SHA256(secret, b"1767225600." + body)>

Signing the timestamp lets a receiver refuse a replayed POST (say, older than five
minutes) that an eavesdropper could otherwise send again with its valid signature.
"""

import hashlib
import hmac
import json
import secrets

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def body_of(event_type: str, event_id: str, delivery_id: int, data: dict) -> bytes:
    """The JSON body of a delivery: the same bytes on every attempt."""
    return json.dumps(
        {"event": event_type, "id": event_id, "delivery": delivery_id, "data": data},
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    ).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The `X-Assay-Signature` header's value."""
    signed = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def headers(
    secret: str, event_type: str, delivery_id: int, timestamp: int, body: bytes
) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": "Assay-Webhooks",
        "X-Assay-Event": event_type,
        "X-Assay-Delivery": str(delivery_id),
        "X-Assay-Timestamp": str(timestamp),
        "X-Assay-Signature": signature(secret, timestamp, body),
    }


def backoff_seconds(attempts: int, base: int, cap: int) -> int:
    """The wait after the `attempts`-th failed attempt: base, 2 × base, 4 × base …"""
    return min(cap, base * 2 ** (attempts - 1))
