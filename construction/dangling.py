"""Dangling references (pure): phrases such as 该产品 or "this model" that point at
something the question does not contain — the source document the question was
written from. Released alone, such a question cannot be answered, so a hit goes
to a person (IndustryBench §3.3: 29 flagged, 9 removed).

Matching compares NFKC, case-folded text, so full-width "ｔｈｉｓ　ｍｏｄｅｌ" and
"This Model" match "this model"; any run of whitespace matches a space in a phrase.
Spans are returned in the original text, for highlighting. A phrase that begins
or ends with a Latin letter or digit matches only as whole words there ("this
model" is not in "this modelling"); Chinese is written without spaces, so a
Chinese phrase matches wherever it occurs.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_PHRASES = {
    "zh": ("该产品", "本产品", "该型号", "本型号", "上述", "如图"),
    "en": ("this product", "this model", "the above", "as shown"),
}
_WORD = "0-9a-z"


def default_phrases(language: str) -> tuple[str, ...]:
    """The default list for a language; empty for a language without one."""
    return DEFAULT_PHRASES.get(language.split("-")[0].lower(), ())


def parse_phrases(text: str) -> list[str]:
    """One phrase a line, blank lines and repeats (by their folded form) dropped."""
    seen, phrases = set(), []
    for line in text.splitlines():
        phrase = " ".join(line.split())
        if phrase and _fold(phrase) not in seen:
            seen.add(_fold(phrase))
            phrases.append(phrase)
    return phrases


def phrases_key(phrases: Sequence[str]) -> str:
    """A short, stable name of a phrase list: a changed list is a new version."""
    digest = hashlib.sha256("\n".join(phrases).encode()).hexdigest()[:8]
    return f"dangling-phrases#{digest}"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@dataclass(frozen=True)
class Hit:
    phrase: str  # as configured
    start: int  # span in the original text
    end: int


def _folded_with_offsets(text: str) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the index of the original
    character it came from (folding may turn one character into several)."""
    parts, offsets = [], []
    for index, char in enumerate(text):
        folded = _fold(char)
        parts.append(folded)
        offsets.extend([index] * len(folded))
    return "".join(parts), offsets


def _pattern(phrase: str) -> str:
    folded = _fold(phrase)
    body = r"\s+".join(re.escape(word) for word in folded.split())
    before = f"(?<![{_WORD}])" if re.match(f"[{_WORD}]", folded) else ""
    after = f"(?![{_WORD}])" if re.search(f"[{_WORD}]$", folded) else ""
    return before + body + after


def find_dangling(text: str, phrases: Sequence[str]) -> list[Hit]:
    """Every non-overlapping hit in text order; where phrases overlap, the longer
    one wins (该产品型号 before 该产品 when both are listed)."""
    ordered = sorted(phrases, key=lambda phrase: -len(_fold(phrase)))
    if not ordered:
        return []
    regex = re.compile(
        "|".join(f"(?P<p{i}>{_pattern(phrase)})" for i, phrase in enumerate(ordered))
    )
    folded, offsets = _folded_with_offsets(text)
    hits = []
    for match in regex.finditer(folded):
        phrase = ordered[int(match.lastgroup[1:])]
        start = offsets[match.start()]
        end = offsets[match.end() - 1] + 1
        hits.append(Hit(phrase, start, end))
    return hits


def segments(text: str, hits: Sequence[Hit]) -> list[tuple[str, bool]]:
    """The text cut at the hits: (piece, is_hit) pairs, for highlighting."""
    pieces, at = [], 0
    for hit in sorted(hits, key=lambda hit: hit.start):
        if hit.start > at:
            pieces.append((text[at : hit.start], False))
        pieces.append((text[hit.start : hit.end], True))
        at = hit.end
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces
