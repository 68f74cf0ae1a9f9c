"""How a webhook POST is signed (no ORM); README.md "Webhooks" tells receivers.

The Standard Webhooks way (https://www.standardwebhooks.com), which its libraries
verify as they are:

    webhook-id: 42                (the delivery: the same on every attempt)
    webhook-timestamp: 1767225600
    webhook-signature: v1,<base64 HMAC-SHA256(key, b"42.1767225600." + body)>

where the key is the base64 after the secret's `whsec_` prefix, decoded.

Until LEGACY_HEADERS_UNTIL (30 June 2027), deliveries also carry the headers that
receivers written before it check (the GitHub way, keyed by the whole secret text):

    X-Assay-Timestamp: 1767225600
    X-Assay-Signature: sha256=<hex HMAC-SHA256(secret, b"1767225600." + body)>

Signing the timestamp lets a receiver refuse a replayed POST (say, older than five
minutes) that an eavesdropper could otherwise send again with its valid signature.
"""

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime

SECRET_PREFIX = "whsec_"
# The X-Assay-Timestamp and X-Assay-Signature headers are sent until this moment,
# then dropped (README "Webhooks" says so).
LEGACY_HEADERS_UNTIL = datetime(2027, 7, 1, tzinfo=UTC)


def new_secret() -> str:
    """`whsec_` and the standard base64 of 32 random bytes, as the Standard
    Webhooks libraries read a secret."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def signing_key(secret: str) -> bytes:
    """The HMAC key of the `v1` signature: the secret's base64 decoded. A secret
    made before Standard Webhooks (URL-safe, 43 characters: never valid base64)
    is keyed by its own text, so a receiver passes `whsec_` + base64 of it."""
    try:
        return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except binascii.Error:
        return secret.encode()


def body_of(event_type: str, event_id: str, delivery_id: int, data: dict) -> bytes:
    """The JSON body of a delivery: the same bytes on every attempt."""
    return json.dumps(
        {"event": event_type, "id": event_id, "delivery": delivery_id, "data": data},
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    ).encode()


def standard_signature(
    secret: str, message_id: str, timestamp: int, body: bytes
) -> str:
    """The `webhook-signature` header's value."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(signing_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The deprecated `X-Assay-Signature` header's value."""
    signed = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def headers(
    secret: str, event_type: str, delivery_id: int, timestamp: int, body: bytes
) -> dict[str, str]:
    message_id = str(delivery_id)
    sent = {
        "Content-Type": "application/json",
        "User-Agent": "Assay-Webhooks",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": standard_signature(secret, message_id, timestamp, body),
        "X-Assay-Event": event_type,
        "X-Assay-Delivery": message_id,
    }
    if timestamp < LEGACY_HEADERS_UNTIL.timestamp():
        sent["X-Assay-Timestamp"] = str(timestamp)
        sent["X-Assay-Signature"] = signature(secret, timestamp, body)
    return sent


def backoff_seconds(attempts: int, base: int, cap: int) -> int:
    """The wait after the `attempts`-th failed attempt: base, 2 × base, 4 × base …"""
    return min(cap, base * 2 ** (attempts - 1))
