"""Grading multiple-choice and true/false answers from their text (pure: no ORM).

An evaluation run on a binary benchmark never asks a judge about an MC or TF item:
the answer is read by judging.evaluation.extraction and compared with the item's
answer key. The grade is one of extraction.Grade: correct, wrong, or flagged
(several answers, a refusal, no answer found), which is neither right nor wrong.

An item whose answer is a declared set of options (``multiple_answers``) is right
when the reply names exactly that set; naming several options is then an answer,
not a flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmark.formats import LETTERS, MULTIPLE_CHOICE, TRUE_FALSE
from judging.evaluation.extraction import (
    Grade,
    Outcome,
    extract_all,
    extract_choice,
    extract_true_false,
    grade,
)

CHOICE_FORMATS = (MULTIPLE_CHOICE, TRUE_FALSE)


@dataclass(frozen=True)
class AnswerKey:
    """What an MC item (``n_options`` > 0, ``correct`` option indices) or a TF
    item (``n_options`` 0, ``correct`` {True} or {False}) accepts."""

    n_options: int
    correct: frozenset
    multiple_answers: bool = False


def answer_key(
    item_format: str,
    *,
    n_options: int,
    correct_options: Sequence[str],
    correct_answer: bool | None,
    multiple_answers: bool = False,
) -> AnswerKey:
    if item_format == TRUE_FALSE:
        return AnswerKey(0, frozenset({bool(correct_answer)}))
    return AnswerKey(
        n_options,
        frozenset(LETTERS.index(letter) for letter in correct_options),
        multiple_answers,
    )


def shown(values, key: AnswerKey) -> str:
    """An answer as a person reads it: "B", "A, C", "true"."""
    if key.n_options == 0:
        return ", ".join("true" if value else "false" for value in values)
    return ", ".join(LETTERS[value] for value in values if value < len(LETTERS))


def read_answer(text: str, key: AnswerKey) -> tuple[str, Grade]:
    """(the answer read, its grade) of one reply."""
    extraction = (
        extract_choice(text, key.n_options)
        if key.n_options
        else extract_true_false(text)
    )
    answer = shown(extraction.values, key)
    named = extraction.outcome in (Outcome.ANSWERED, Outcome.MULTIPLE)
    if key.multiple_answers and named:
        right = set(extraction.values) == set(key.correct)
        return answer, Grade.CORRECT if right else Grade.WRONG
    if extraction.outcome is Outcome.ANSWERED:
        right = extraction.values[0] in key.correct
        return answer, Grade.CORRECT if right else Grade.WRONG
    return answer, Grade(int(extraction.outcome))


def read_answers(
    texts: Sequence[str], keys: Sequence[AnswerKey]
) -> tuple[list[str], np.ndarray]:
    """`read_answer` for many replies: the answers read and the grades (int8).

    Single-answer replies go through the vectorized extract_all + grade; the few
    whose value set matters (flagged several-answer replies, items with an answer
    set) are read again one by one.
    """
    # Replies to one item share its key: build each distinct key's row once.
    distinct: dict[AnswerKey, int] = {}
    key_of = np.array([distinct.setdefault(key, len(distinct)) for key in keys])
    unique = list(distinct)
    n_options = np.array([key.n_options for key in unique], dtype=np.int64)[key_of]
    extractions = extract_all(texts, n_options.tolist())
    width = max(int(n_options.max(initial=0)), 2)
    accepted = np.zeros((len(unique), width), dtype=bool)
    for row, key in enumerate(unique):
        accepted[row, [int(value) for value in key.correct]] = True
    grades = grade(extractions, accepted[key_of] if len(keys) else accepted)
    value = np.clip(extractions.value, 0, None)
    answered = extractions.outcome == Outcome.ANSWERED
    answers = np.where(
        n_options == 0,
        np.array(["false", "true"])[np.minimum(value, 1)],
        np.array(list(LETTERS))[np.minimum(value, len(LETTERS) - 1)],
    )
    answers = np.where(answered, answers, "").tolist()
    multiple = np.array([key.multiple_answers for key in unique], dtype=bool)
    again = (extractions.outcome == Outcome.MULTIPLE) | multiple[key_of]
    for row in np.flatnonzero(again).tolist():
        answers[row], grades[row] = read_answer(texts[row], keys[row])
    return answers, grades
