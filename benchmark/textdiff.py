"""What changed between two versions of a text, as segments to show (no ORM).

`diff_segments(before, after)` compares words in spaced text and single characters
in Chinese, Japanese and Korean text (which has no spaces between words), so an
edit shows as the words or characters that changed. Long unchanged runs are cut to
the `context` characters next to each change, with a gap marker in between: a
changed character 200 characters into an answer is shown, not hidden behind the
text's unchanged start.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

EQUAL, DELETE, INSERT, GAP = "equal", "delete", "insert", "gap"
CONTEXT = 40

# Han, kana, Hangul, CJK and full-width punctuation: one token per character.
_CJK = (
    "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\uff00-\uffef\U00020000-\U0003134f"
)
# Else a word (CJK characters are word characters too, so they end it), a run of
# whitespace or one other character.
_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+|\\s+|[^\\w\\s]")
# An unchanged run shorter than this is shown whole rather than cut around a gap.
_MIN_GAP = 10


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def diff_segments(
    before: str, after: str, context: int = CONTEXT
) -> list[tuple[str, str]]:
    """(op, text) segments turning `before` into `after`; op is ``equal``,
    ``delete``, ``insert`` or ``gap`` (unchanged text left out, text ``…``)."""
    old, new = tokens(before), tokens(after)
    # An edit usually touches one place: the unchanged start and end are matched
    # here in linear time, and SequenceMatcher (quadratic at worst) sees the rest.
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    segments = [(EQUAL, "".join(old[:start]))]
    # autojunk would treat frequent tokens (spaces, common characters) of texts
    # over 200 tokens as junk and report whole sentences as changed.
    matcher = SequenceMatcher(
        None, old[start : len(old) - end], new[start : len(new) - end], autojunk=False
    )
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in (EQUAL, DELETE, "replace"):
            removed = "".join(old[start + i1 : start + i2])
            segments.append((EQUAL if op == EQUAL else DELETE, removed))
        if op in (INSERT, "replace"):
            segments.append((INSERT, "".join(new[start + j1 : start + j2])))
    segments.append((EQUAL, "".join(old[len(old) - end :])))
    return _collapse(_merge(segments), context)


def _merge(segments: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop empty segments and join neighbours with the same op."""
    out: list[tuple[str, str]] = []
    for op, text in segments:
        if not text:
            continue
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + text)
        else:
            out.append((op, text))
    return out


def _collapse(segments: list[tuple[str, str]], context: int) -> list[tuple[str, str]]:
    """Cut each unchanged run to `context` characters on the side of each change
    next to it."""
    out: list[tuple[str, str]] = []
    last = len(segments) - 1
    for index, (op, text) in enumerate(segments):
        if op != EQUAL or last == 0:  # a change, or no change at all
            out.append((op, text))
            continue
        head = text[:context] if index > 0 else ""  # follows a change
        tail = text[-context:] if index < last else ""  # precedes a change
        if len(text) - len(head) - len(tail) < _MIN_GAP:
            out.append((op, text))
            continue
        if head:
            out.append((EQUAL, head))
        out.append((GAP, "…"))
        if tail:
            out.append((EQUAL, tail))
    return out
