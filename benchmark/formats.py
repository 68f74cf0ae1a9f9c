"""Item formats and what each one's data must be (pure: no database).

An item is open QA (IndustryBench), multiple choice, true/false, or short answer
with key points. The answer key — which options are correct, whether the
statement is true — does not depend on the language, so it lives once on the item;
the option texts and key points are text a translator renders, so they live on each
language's rendering (docs/IMPORT_FORMATS.md, "Item formats").

`format_issues` is the one statement of the rules; the importer turns each issue
into a row-level problem, and any other path that writes format data calls it too.
"""

import re
from dataclasses import dataclass
from typing import NamedTuple

from django.utils.translation import gettext_noop

from benchmark.notes import Note, noop

OPEN = "open"
MULTIPLE_CHOICE = "multiple_choice"
TRUE_FALSE = "true_false"
SHORT_ANSWER = "short_answer"

LETTERS = "ABCDEFG"
MIN_OPTIONS = 4
MAX_OPTIONS = len(LETTERS)
MAX_KEY_POINTS = 5

TRUE_WORDS = frozenset({"true", "yes", "1", "对", "正确", "是"})
FALSE_WORDS = frozenset({"false", "no", "0", "错", "错误", "否"})
# "A, C", "A;C", "A C", Chinese "A、C" / "A，C", and run-together "AC" all name A and C.
LETTER_SEPARATORS = re.compile(r"[\s,;，、；]+")


class RenderingFormat(NamedTuple):
    """What one language's rendering says for the format checks (a tuple: the
    importer makes four per row)."""

    language: str
    answer: str
    options: list[str]
    key_points: list[str]


@dataclass(frozen=True)
class FormatIssue:
    """A broken rule. `field` is one of format, correct_options, multiple_answers,
    correct_answer (the item's) or answer, options, key_points (the rendering in
    `language`); `index` points at one option or key point when one is at fault."""

    field: str
    message: str
    language: str = ""
    index: int | None = None


def parse_letters(value) -> tuple[list[str], str]:
    """(option letters, "") or ([], why not), from text such as "B" or "A, C", or
    from a JSON list of letters. Empty means none."""
    if value is None:
        return [], ""
    if isinstance(value, list):
        if not all(isinstance(token, str) for token in value):
            return [], Note(gettext_noop("expected option letters (A to G)"))
        tokens = [token.strip() for token in value]
    elif isinstance(value, str):
        tokens = [token for token in LETTER_SEPARATORS.split(value) if token]
    else:
        return [], Note(gettext_noop("expected option letters (A to G)"))
    letters = []
    for token in tokens:
        upper = token.upper()
        if not upper or any(letter not in LETTERS for letter in upper):
            return [], Note(
                gettext_noop(
                    "%(token)s is not an option letter; write A to G, several "
                    "separated by commas"
                ),
                token=repr(token),
            )
        letters.extend(upper)
    return letters, ""


def parse_bool(value) -> tuple[bool | None, str]:
    """(True/False, "") or (None, "") for nothing, or (None, why not)."""
    if value is None or isinstance(value, bool):
        return value, ""
    if isinstance(value, str):
        word = value.strip().casefold()
        if not word:
            return None, ""
        if word in TRUE_WORDS:
            return True, ""
        if word in FALSE_WORDS:
            return False, ""
    return None, Note(
        gettext_noop("%(value)s is not true or false"), value=repr(str(value)[:40])
    )


def letter_range(count: int) -> str:
    return f"A–{LETTERS[count - 1]}" if count else "none"


def format_issues(
    item_format: str,
    *,
    correct_options: list[str],
    multiple_answers: bool,
    correct_answer: bool | None,
    renderings: list[RenderingFormat],
    source_language: str,
) -> list[FormatIssue]:
    """Every rule the item's format data breaks, item fields first.

    Multiple choice: 4–7 non-empty, distinct options in the source language, and
    in each translation as many or none yet; a non-empty set of correct letters
    among them, exactly one unless `multiple_answers` declares a set. True/false:
    an answer. Short answer: 1–5 non-empty, distinct key points, counted like the
    options, and a reference answer. Open QA: a reference answer. A format carries
    none of the other formats' data.
    """
    issues = []
    source = next((r for r in renderings if r.language == source_language), None)
    if item_format == MULTIPLE_CHOICE:
        issues += _answer_key_issues(
            correct_options,
            multiple_answers,
            len(source.options) if source else None,
        )
    else:
        if correct_options:
            issues.append(
                FormatIssue("correct_options", _only_for(item_format, "multiple"))
            )
        if multiple_answers:
            issues.append(
                FormatIssue("multiple_answers", _only_for(item_format, "multiple"))
            )
    if item_format == TRUE_FALSE:
        if correct_answer is None:
            issues.append(
                FormatIssue(
                    "correct_answer",
                    Note(gettext_noop("a true/false item needs true or false")),
                )
            )
    elif correct_answer is not None:
        issues.append(FormatIssue("correct_answer", _only_for(item_format, "true")))
    for rendering in renderings:
        issues += _rendering_issues(item_format, rendering, source)
    return issues


def _only_for(item_format: str, kind: str) -> Note:
    if kind == "multiple":
        message = gettext_noop(
            "only a multiple-choice item has one; this item's format is %(format)s"
        )
    else:
        message = gettext_noop(
            "only a true/false item has one; this item's format is %(format)s"
        )
    return Note(message, format=item_format)


def _answer_key_issues(correct, multiple_answers, option_count) -> list[FormatIssue]:
    if not correct:
        return [
            FormatIssue(
                "correct_options",
                Note(
                    gettext_noop("a multiple-choice item needs its correct option(s)")
                ),
            )
        ]
    issues = []
    repeated = sorted({letter for letter in correct if correct.count(letter) > 1})
    if repeated:
        issues.append(
            FormatIssue(
                "correct_options",
                Note(
                    gettext_noop("%(letters)s given twice"), letters=", ".join(repeated)
                ),
            )
        )
    if option_count is not None and MIN_OPTIONS <= option_count:
        outside = [
            letter for letter in correct if LETTERS.index(letter) >= option_count
        ]
        if outside:
            issues.append(
                FormatIssue(
                    "correct_options",
                    Note(
                        gettext_noop(
                            "%(letters)s is not an option (the item has options "
                            "%(range)s)"
                        ),
                        letters=", ".join(outside),
                        range=letter_range(option_count),
                    ),
                )
            )
    if len(set(correct)) > 1 and not multiple_answers:
        issues.append(
            FormatIssue(
                "correct_options",
                Note(
                    gettext_noop(
                        "%(count)s correct options but multiple_answers is not set; "
                        "set it to true when the answer is a set of options"
                    ),
                    count=len(set(correct)),
                ),
            )
        )
    return issues


def _rendering_issues(item_format, rendering: RenderingFormat, source):
    language = rendering.language
    issues = []
    if item_format in (OPEN, SHORT_ANSWER) and not rendering.answer.strip():
        issues.append(
            FormatIssue("answer", Note(gettext_noop("empty answer")), language)
        )
    if item_format == MULTIPLE_CHOICE:
        issues += _list_issues(
            "options",
            rendering,
            source,
            low=MIN_OPTIONS,
            high=MAX_OPTIONS,
        )
    elif rendering.options:
        issues.append(
            FormatIssue(
                "options",
                Note(
                    gettext_noop(
                        "only a multiple-choice item has options; this item's format "
                        "is %(format)s"
                    ),
                    format=item_format,
                ),
                language,
            )
        )
    if item_format == SHORT_ANSWER:
        issues += _list_issues(
            "key_points",
            rendering,
            source,
            low=1,
            high=MAX_KEY_POINTS,
        )
    elif rendering.key_points:
        issues.append(
            FormatIssue(
                "key_points",
                Note(
                    gettext_noop(
                        "only a short-answer item has key points; this item's format "
                        "is %(format)s"
                    ),
                    format=item_format,
                ),
                language,
            )
        )
    return issues


# What is wrong with a list of options or of key points, in whole sentences.
LIST_MESSAGES = {
    "options": {
        "empty": gettext_noop("empty option"),
        "repeated": gettext_noop("repeats an earlier option"),
        "count": noop.ngettext(
            "%(count)s option; a multiple-choice item has %(low)s to %(high)s",
            "%(count)s options; a multiple-choice item has %(low)s to %(high)s",
        ),
        "translation": noop.ngettext(
            "%(count)s option where the source language has %(expected)s; a "
            "translation renders the same ones",
            "%(count)s options where the source language has %(expected)s; a "
            "translation renders the same ones",
        ),
    },
    "key_points": {
        "empty": gettext_noop("empty key point"),
        "repeated": gettext_noop("repeats an earlier key point"),
        "count": noop.ngettext(
            "%(count)s key point; a short-answer item has %(low)s to %(high)s",
            "%(count)s key points; a short-answer item has %(low)s to %(high)s",
        ),
        "translation": noop.ngettext(
            "%(count)s key point where the source language has %(expected)s; a "
            "translation renders the same ones",
            "%(count)s key points where the source language has %(expected)s; a "
            "translation renders the same ones",
        ),
    },
}


def _list_issues(name, rendering, source, *, low, high):
    """Options or key points: each non-empty and distinct; `low` to `high` of them
    in the source language, and in a translation as many, or none yet."""
    texts: list[str] = getattr(rendering, name)
    language = rendering.language
    messages = LIST_MESSAGES[name]
    issues = []
    seen = set()
    for index, text in enumerate(texts):
        stripped = text.strip()
        if not stripped:
            issues.append(FormatIssue(name, Note(messages["empty"]), language, index))
        elif stripped in seen:
            issues.append(
                FormatIssue(name, Note(messages["repeated"]), language, index)
            )
        seen.add(stripped)
    if source is None or source is rendering:
        if not low <= len(texts) <= high:
            issues.append(
                FormatIssue(
                    name,
                    Note(messages["count"], count=len(texts), low=low, high=high),
                    language,
                )
            )
        return issues
    # A translation made before its options were rendered (a translation run
    # renders the question and answer only) has none yet; the item page says so,
    # and the file Assay exports must import again.
    expected = len(getattr(source, name))
    if texts and low <= expected <= high and len(texts) != expected:
        issues.append(
            FormatIssue(
                name,
                Note(messages["translation"], count=len(texts), expected=expected),
                language,
            )
        )
    return issues
