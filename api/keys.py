"""Personal API token texts and their digests (no ORM).

A token is `assay_` and 43 URL-safe characters: 256 random bits, so a fast digest is
as safe to store as a slow password hash, and it can be looked up by its digest
(a password hash, salted per row, could not be). Its first characters are kept in
the clear so that people can tell their tokens apart.
"""

import hashlib
import secrets

TOKEN_PREFIX = "assay_"
VISIBLE_LENGTH = len(TOKEN_PREFIX) + 6


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def visible_part(token: str) -> str:
    return token[:VISIBLE_LENGTH]
