"""An item's parts as a translation prompt and its reviewer see them (pure).

A rendering is a question, an answer, and — by the item's format — its options (in
the answer key's letter order) and its key points. A translation carries every
part: the prompt lists the options and key points of the source rendering, the
reply must give each of them back, in order, and the reviewer sees them side by side.

Each block is empty for an item without such parts, and the templates place the
blocks so that an open item's prompt is byte for byte what it was before options
and key points were carried: calls already paid for are served again, not re-sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmark.formats import LETTERS

PLAIN_REPLY = (
    '{"question": "<translated question>", "answer": "<translated reference answer>"}'
)


def part_names(options: int, key_points: int) -> list[str]:
    """The names a preservation flag gives the parts: "option C", "key point 2"."""
    return [f"option {LETTERS[i]}" for i in range(options)] + [
        f"key point {i + 1}" for i in range(key_points)
    ]


def options_block(options: Sequence[str]) -> str:
    if not options:
        return ""
    lines = [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]
    return (
        "Options (translate each one; keep its letter and their order):\n"
        + "\n".join(lines)
        + "\n"
    )


def key_points_block(key_points: Sequence[str]) -> str:
    if not key_points:
        return ""
    lines = [f"{i + 1}. {text}" for i, text in enumerate(key_points)]
    return "Key points (translate each one, in order):\n" + "\n".join(lines) + "\n"


def reply_format(options: int, key_points: int) -> str:
    """The JSON object the translator replies with, naming every part it owes."""
    if not options and not key_points:
        return PLAIN_REPLY
    fields = ['"question": "<translated question>"']
    if options:
        listed = ", ".join(
            f'"<translated option {LETTERS[i]}>"' for i in range(options)
        )
        fields.append(f'"options": [{listed}]')
    fields.append('"answer": "<translated reference answer>"')
    if key_points:
        listed = ", ".join(
            f'"<translated key point {i + 1}>"' for i in range(key_points)
        )
        fields.append(f'"key_points": [{listed}]')
    return "{" + ", ".join(fields) + "}"


def translation_variables(source) -> dict[str, str]:
    """The part variables of a translation request for a source rendering."""
    return {
        "options": options_block(source.options or []),
        "key_points": key_points_block(source.key_points or []),
        "reply_format": reply_format(
            len(source.options or []), len(source.key_points or [])
        ),
    }


def review_block(side: str, options: Sequence[str], key_points: Sequence[str]) -> str:
    """The options and key points of one side ("Source", "Translated") for the
    faithfulness reviewer; empty for an item without them."""
    lines = []
    if options:
        lines.append(f"{side} options:")
        lines += [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]
    if key_points:
        lines.append(f"{side} key points:")
        lines += [f"{i + 1}. {text}" for i, text in enumerate(key_points)]
    return "".join(line + "\n" for line in lines)


def review_variables(source, rendering) -> dict[str, str]:
    return {
        "source_parts": review_block(
            "Source", source.options or [], source.key_points or []
        ),
        "translated_parts": review_block(
            "Translated", rendering.options or [], rendering.key_points or []
        ),
    }
