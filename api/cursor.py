"""Opaque cursors for keyset pages (no ORM).

A page holds the rows after a primary key, in key order, and its cursor names the
last key it returned. Unlike an offset, that position does not move when rows are
inserted or deleted meanwhile: a new row has a higher key and comes at the end, so
paging to the end returns every row that existed throughout exactly once. The
cursor is opaque so that its form can change without breaking clients that only
pass it back.
"""

import base64
import binascii

VERSION = "k1"


class BadCursor(ValueError):
    pass


def encode_cursor(after: int) -> str:
    text = f"{VERSION}:{after}".encode()
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The primary key the page starts after; BadCursor for anything not made by
    encode_cursor."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadCursor("not a cursor this API returned") from None
    version, _, after = text.partition(":")
    if version == VERSION and after.isascii() and after.isdigit():
        if int(after) < 2**63:
            return int(after)
    raise BadCursor("not a cursor this API returned")
