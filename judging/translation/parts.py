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

from collections.abc import Mapping, Sequence

from django.utils.translation import gettext as _

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


def edited_parts(fields: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The options and key points of a per-part edit, in order, from its fields
    `option_A`, `option_B`, … and `key_point_1`, `key_point_2`, …. A gap (B sent
    without A) is kept as an empty part, which the check below refuses by name."""
    letters = sorted(
        name.removeprefix("option_")
        for name in fields
        if name.startswith("option_") and name.removeprefix("option_") in LETTERS
    )
    numbers = sorted(
        int(name.removeprefix("key_point_"))
        for name in fields
        if name.startswith("key_point_") and name.removeprefix("key_point_").isdigit()
    )
    options = [
        fields.get(f"option_{letter}", "").strip()
        for letter in LETTERS[: LETTERS.index(letters[-1]) + 1 if letters else 0]
    ]
    key_points = [
        fields.get(f"key_point_{number}", "").strip()
        for number in range(1, (numbers[-1] if numbers else 0) + 1)
    ]
    return options, key_points


def edit_problems(
    options: Sequence[str],
    key_points: Sequence[str],
    *,
    expected_options: int,
    expected_key_points: int,
) -> list[str]:
    """Why a per-part edit cannot be saved: a count other than the source's (the
    answer key names options by letter), or an empty part, named."""
    problems = []
    if len(options) != expected_options:
        problems.append(
            _("The edit has %(sent)d options; the item has %(expected)d.")
            % {"sent": len(options), "expected": expected_options}
        )
    if len(key_points) != expected_key_points:
        problems.append(
            _("The edit has %(sent)d key points; the item has %(expected)d.")
            % {"sent": len(key_points), "expected": expected_key_points}
        )
    empty = [
        name
        for name, text in zip(
            part_names(len(options), len(key_points)),
            [*options, *key_points],
            strict=True,
        )
        if not text.strip()
    ]
    if empty:
        problems.append(
            _("Empty: %(parts)s. Every part needs a text.")
            % {"parts": ", ".join(empty)}
        )
    return problems
