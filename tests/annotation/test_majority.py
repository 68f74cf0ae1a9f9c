"""The majority vote of binary grading on hand cases (pure, no database)."""

import numpy as np
import pytest

from annotation.majority import (
    CORRECT,
    INCORRECT,
    SHORT,
    TIE,
    combined_accuracy,
    decide,
    tally,
)

MISSING = -1


@pytest.mark.parametrize(
    ("votes", "decision"),
    [
        ([1, 1, 0], CORRECT),  # 2–1
        ([0, 1, 0], INCORRECT),  # 1–2
        ([1, 1, 1], CORRECT),  # unanimous
        ([1, 1, MISSING], CORRECT),  # two of three: the third cannot overturn it
        ([1, 0, MISSING], TIE),  # 1–1 with two votes
        ([1, MISSING, MISSING], SHORT),
        ([MISSING, MISSING, MISSING], SHORT),
    ],
)
def test_a_panel_of_three(votes, decision):
    assert decide([votes]).tolist() == [decision]


def test_even_panels_tie_on_an_even_split():
    assert decide([[1, 0], [1, 1], [0, 0], [0, MISSING]]).tolist() == [
        TIE,
        CORRECT,
        INCORRECT,
        SHORT,
    ]
    assert decide([[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 0, MISSING]]).tolist() == [
        TIE,
        CORRECT,
        SHORT,
    ]


def test_tally_reports_ties_and_short_beside_the_accuracy():
    decisions = decide(
        np.array(
            [
                [1, 1, 0],
                [1, 1, 1],
                [0, 0, 1],
                [1, 0, MISSING],
                [1, MISSING, MISSING],
            ]
        )
    )
    assert tally(decisions) == {
        "correct": 2,
        "incorrect": 1,
        "tie": 1,
        "short": 1,
        "responses": 5,
        "decided": 3,
        "accuracy": pytest.approx(2 / 3),
    }
    assert tally(decide([[1, 0, MISSING]]))["accuracy"] is None
    assert tally(decide(np.zeros((0, 3))))["responses"] == 0


def test_combined_accuracy_weights_the_formats_by_questions_tested():
    """Study 002 §2.3: the overall accuracy is the weighted average of the
    multiple-choice, true/false and open questions, the open ones decided by the
    experts' majority vote. MC 3 of 5, TF 2 of 3, open: two responses voted
    1-1-0 (correct) and 0-0-1 (incorrect) → (3/5·5 + 2/3·3 + 1/2·2) / 10."""
    decisions = decide([[1, 1, 0], [0, 0, 1]])
    votes = tally(decisions)
    parts = {"mc": (3, 5), "tf": (2, 3), "open": (votes["correct"], votes["decided"])}
    assert parts["open"] == (1, 2)
    assert combined_accuracy(parts) == pytest.approx(0.6)
    assert combined_accuracy({"mc": (0, 0), "open": (0, 0)}) is None
    assert combined_accuracy({"mc": (1, 4), "tf": (0, 0)}) == pytest.approx(0.25)
