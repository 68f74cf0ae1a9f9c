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
    decide_all,
    extract_choice,
    extract_true_false,
    extractions_of,
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

    One pass of the rules over every reply (extraction.decide_all), graded as
    arrays; items whose answer is a set are graded on the values named.
    """
    # Replies to one item share one key object: build each distinct key's row
    # once (by identity: hashing 177k dataclasses costs more than the lookup).
    distinct: dict[int, int] = {}
    unique: list[AnswerKey] = []
    key_of = np.empty(len(keys), dtype=np.int64)
    for row, key in enumerate(keys):
        index = distinct.get(id(key))
        if index is None:
            index = distinct[id(key)] = len(unique)
            unique.append(key)
        key_of[row] = index
    n_options = [key.n_options for key in unique]
    decided = decide_all(texts, [n_options[index] for index in key_of.tolist()])
    width = max(max(n_options, default=0), 2)
    accepted = np.zeros((len(unique), width), dtype=bool)
    for row, key in enumerate(unique):
        accepted[row, [int(value) for value in key.correct]] = True
    grades = grade(extractions_of(decided), accepted[key_of])
    # One value: looked up as arrays; several (a few replies): written out.
    tf = np.array(n_options, dtype=np.int64)[key_of] == 0
    value = np.array(
        [values[0] if values else 0 for _, values in decided], dtype=np.int64
    )
    answers = np.where(
        tf,
        np.array(["false", "true"])[np.clip(value, 0, 1)],
        np.array(list(LETTERS))[np.clip(value, 0, len(LETTERS) - 1)],
    )
    count = np.array([len(values) for _, values in decided])
    answers = np.where(count == 1, answers, "").tolist()
    for row in np.flatnonzero(count > 1).tolist():
        answers[row] = shown(decided[row][1], keys[row])
    multiple = np.array([key.multiple_answers for key in unique], dtype=bool)
    for row in np.flatnonzero(multiple[key_of]).tolist():
        outcome, values = decided[row]
        if outcome in (Outcome.ANSWERED, Outcome.MULTIPLE):
            right = set(values) == set(keys[row].correct)
            grades[row] = Grade.CORRECT if right else Grade.WRONG
    return answers, grades
