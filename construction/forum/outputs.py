"""What the forum stages' replies must be (pure): the output contracts of
QA extraction, the quality filter and the two conversions (LPFQA §3.2.2). A
reply that breaks one raises OutputError, and the gateway asks again with the
reason; one that never complies leaves its candidate pending.

Multiple choice follows the paper: 5 to 7 options, exactly one correct, the
distractors distinct from each other and from the key (compared without case,
spacing or punctuation), options unlettered — the letters are the item's, A
onwards, in the order given."""

from __future__ import annotations

import re
import unicodedata

from benchmark.formats import LETTERS, MAX_KEY_POINTS, parse_letters
from judging.llm.outputs import OutputError, extract_json_object

MIN_OPTIONS, MAX_OPTIONS = 5, 7
# "A. …", "(B) …", "C) …": a model that lettered its options anyway.
_LETTERED = re.compile(r"^\s*[(（]?([A-G])[)）.．:：、]\s+")


def _text(obj: dict, key: str, *, required: bool = True) -> str:
    value = obj.get(key, "" if not required else None)
    if not isinstance(value, str):
        raise OutputError(f'"{key}" must be a string.')
    if required and not value.strip():
        raise OutputError(f'"{key}" must not be empty.')
    return value.strip()


def normal(text: str) -> str:
    """An option's text for the distinctness check."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\W_]+", "", text)


def extraction(text: str) -> dict:
    """{"is_valid": false} for a post that asks nothing; else the question and,
    when the replies answered it (`has_answer` 1), the answer and explanation."""
    obj = extract_json_object(text)
    valid = obj.get("is_valid")
    if not isinstance(valid, bool):
        raise OutputError('"is_valid" must be true or false.')
    if not valid:
        return {"is_valid": False}
    has_answer = obj.get("has_answer", 0)
    if has_answer not in (0, 1) or isinstance(has_answer, bool):
        raise OutputError('"has_answer" must be 0 or 1.')
    answer = _text(obj, "answer", required=False)
    if has_answer and not answer:
        raise OutputError('"has_answer" is 1 but "answer" is empty.')
    return {
        "is_valid": True,
        "question": _text(obj, "question"),
        "answer": answer if has_answer else "",
        "explanation": _text(obj, "explanation", required=False) if has_answer else "",
        "has_answer": has_answer,
    }


def qualification(text: str) -> dict:
    """{"is_qualified": bool, "reason": "…"}: a reason is owed for a rejection."""
    obj = extract_json_object(text)
    qualified = obj.get("is_qualified")
    if not isinstance(qualified, bool):
        raise OutputError('"is_qualified" must be true or false.')
    reason = _text(obj, "reason", required=not qualified)
    return {"is_qualified": qualified, "reason": reason}


def option_issues(options: list, correct: list[str]) -> list[str]:
    """Why these options and correct letters are not a multiple-choice item as
    LPFQA builds them (empty: they are). Shared by the conversion stage and the
    expert's edit."""
    if not isinstance(options, list) or not all(
        isinstance(option, str) and option.strip() for option in options
    ):
        return ["every option must be non-empty text"]
    issues = []
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        issues.append(
            f"give {MIN_OPTIONS} to {MAX_OPTIONS} options, not {len(options)}"
        )
    seen: dict[str, int] = {}
    for position, option in enumerate(options):
        earlier = seen.setdefault(normal(option), position)
        if earlier != position:
            issues.append(
                f"option {LETTERS[position % len(LETTERS)]} repeats option "
                f"{LETTERS[earlier]}"
            )
    if len(correct) != 1:
        issues.append("exactly one option is correct")
    letters = LETTERS[: min(len(options), MAX_OPTIONS)]
    for letter in correct:
        if letter not in letters:
            issues.append(f"{letter!r} is not one of the options' letters ({letters})")
    return issues


def multiple_choice(text: str) -> dict:
    """{"question", "options" (5–7, unlettered), "correct": ["C"],
    "explanation"}."""
    obj = extract_json_object(text)
    question = _text(obj, "question")
    options = obj.get("options")
    if isinstance(options, list):
        options = [_unlettered(option) for option in options]
    raw = obj.get("correct")
    correct, unreadable = parse_letters(
        raw.strip().rstrip(".") if isinstance(raw, str) else raw
    )
    if unreadable or raw is None:
        raise OutputError(
            '"correct" must be the letter of the correct option: '
            f"{unreadable or 'missing'}."
        )
    issues = option_issues(options, correct)
    if issues:
        raise OutputError("; ".join(issues) + ".")
    return {
        "question": question,
        "options": [option.strip() for option in options],
        "correct": correct,
        "explanation": _text(obj, "explanation", required=False),
    }


def _unlettered(option):
    if not isinstance(option, str):
        return option
    return _LETTERED.sub("", option, count=1)


def key_point_issues(answer: str, key_points: list) -> list[str]:
    """Why this answer and key points are not a short-answer item (empty: they
    are): a reference answer and 1–5 distinct, non-empty key points."""
    issues = []
    if not answer.strip():
        issues.append("a short-answer item needs a reference answer")
    if not isinstance(key_points, list) or not all(
        isinstance(point, str) and point.strip() for point in key_points
    ):
        return [*issues, "every key point must be non-empty text"]
    if not 1 <= len(key_points) <= MAX_KEY_POINTS:
        issues.append(f"give 1 to {MAX_KEY_POINTS} key points, not {len(key_points)}")
    if len({normal(point) for point in key_points}) < len(key_points):
        issues.append("two key points say the same")
    return issues


def short_answer(text: str) -> dict:
    """{"question", "answer", "key_points" (1–5)}."""
    obj = extract_json_object(text)
    question = _text(obj, "question")
    answer = _text(obj, "answer")
    key_points = obj.get("key_points")
    issues = key_point_issues(answer, key_points)
    if issues:
        raise OutputError("; ".join(issues) + ".")
    return {
        "question": question,
        "answer": answer,
        "key_points": [point.strip() for point in key_points],
    }
