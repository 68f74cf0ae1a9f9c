"""A forum post's metadata (LPFQA §3.2.1, pure): what an imported post carries
besides its text — when it was posted, its views, replies and votes, its
screenshots — read and checked row by row, and the filter on those fields that
the paper's crawler applies to keep relevant, well-discussed posts.

The paper names the fields it filters by (time, view count, reply count, vote
count) but publishes no threshold: `PostFilter`'s defaults keep everything and a
team sets its own at import (the form, `import_sources --min-views …`, the API).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from benchmark.validation import Problems

COUNTS = ("views", "replies", "votes")
TEXTS = ("title", "forum", "post_id", "url", "field")
FORMATS = ("multiple_choice", "short_answer")
MAX_IMAGES = 4
# A screenshot inline as a data URL: the model's image input takes it as is.
MAX_DATA_URL = 4 * 1024 * 1024
_DATA_URL = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$")
_IMAGE_SEPARATORS = re.compile(r"[\s|]+")


def read_post_fields(line: int, fields: dict, problems: Problems) -> dict:
    """The post's fields with its metadata checked and normalised: counts as
    integers (votes may be negative), `posted_at` as an ISO date, `images` as a
    list of http(s) or data:image URLs (in CSV: separated by spaces or "|"),
    `format` the item form it is converted to. Other fields are kept as they
    are. Problems are added by line and field."""
    out = dict(fields)
    for name in COUNTS:
        if name not in fields or fields[name] in ("", None):
            out[name] = 0
            continue
        value = fields[name]
        try:
            number = int(str(value).strip().replace(",", ""))
        except ValueError:
            problems.add(line, name, f"must be a whole number, not {value!r}")
            continue
        if number < 0 and name != "votes":
            problems.add(line, name, "must not be negative")
        out[name] = number
    posted = fields.get("posted_at")
    if posted not in ("", None):
        try:
            out["posted_at"] = date.fromisoformat(str(posted).strip()[:10]).isoformat()
        except ValueError:
            problems.add(
                line, "posted_at", f"must be a date (YYYY-MM-DD), not {posted!r}"
            )
    for name in TEXTS:
        if name in fields and not isinstance(fields[name], str | int):
            problems.add(line, name, "must be text")
    out["images"] = _images(line, fields.get("images"), problems)
    chosen = fields.get("format") or FORMATS[0]
    if chosen not in FORMATS:
        problems.add(line, "format", f"must be {' or '.join(FORMATS)}, not {chosen!r}")
    out["format"] = chosen
    return out


def _images(line: int, value, problems: Problems) -> list[str]:
    if value in ("", None):
        return []
    if isinstance(value, str):
        urls = [url for url in _IMAGE_SEPARATORS.split(value.strip()) if url]
    elif isinstance(value, list) and all(isinstance(url, str) for url in value):
        urls = [url.strip() for url in value]
    else:
        problems.add(line, "images", "must be a list of image URLs")
        return []
    if len(urls) > MAX_IMAGES:
        problems.add(line, "images", f"at most {MAX_IMAGES} screenshots a post")
    for url in urls:
        if url.startswith("data:"):
            if len(url) > MAX_DATA_URL or not _DATA_URL.match(url):
                problems.add(
                    line,
                    "images",
                    "a data URL must be a base64 PNG, JPEG, GIF or WebP image of at "
                    f"most {MAX_DATA_URL // (1024 * 1024)} MB",
                )
        elif not re.match(r"^https?://\S+$", url):
            problems.add(line, "images", f"{url[:80]!r} is not an http(s) URL")
    return urls


@dataclass(frozen=True)
class PostFilter:
    """Which imported posts are kept: at least so many views, replies and votes,
    posted within the dates (each bound optional, inclusive)."""

    min_views: int = 0
    min_replies: int = 0
    min_votes: int | None = None
    posted_from: date | None = None
    posted_to: date | None = None

    def keeps(self, fields: dict) -> bool:
        if fields.get("views", 0) < self.min_views:
            return False
        if fields.get("replies", 0) < self.min_replies:
            return False
        if self.min_votes is not None and fields.get("votes", 0) < self.min_votes:
            return False
        if self.posted_from or self.posted_to:
            posted = fields.get("posted_at")
            if not posted:
                return False  # a date range asked for: an undated post is outside
            day = date.fromisoformat(posted)
            if self.posted_from and day < self.posted_from:
                return False
            if self.posted_to and day > self.posted_to:
                return False
        return True

    @property
    def active(self) -> bool:
        return self != PostFilter()
