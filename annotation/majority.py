"""Binary grading decided by majority vote (#15): per response, correct, incorrect,
a tie, or short of votes; and accuracy by majority. Pure numpy, no ORM.

Votes have shape (responses, panel): one column per member of the campaign's panel
(its overlap), 1 correct, 0 incorrect, -1 not given (yet). The majority is the
project's one consensus rule (`judging.reporting.consensus`), whose panel counts
missing votes: a verdict wins with strictly more than half of the panel. So two of
three agreeing decide even while the third vote is missing — it could not change
the outcome.

Without a majority, a response whose votes split evenly is a tie (1–1 of a panel of
three while the third vote is missing or never comes; 2–2 of four); any other is
short of votes. A complete panel without a majority is always an even split, so
every undecided response is reported as one or the other, never dropped.
"""

from collections.abc import Mapping

import numpy as np

from judging.reporting.consensus import NONE, consensus

CORRECT, INCORRECT, TIE, SHORT = 1, 0, -2, -3
DECISION_NAMES = {
    CORRECT: "correct",
    INCORRECT: "incorrect",
    TIE: "tie",
    SHORT: "short",
}


def decide(votes) -> np.ndarray:
    """The decision per response: CORRECT, INCORRECT, TIE or SHORT."""
    votes = np.asarray(votes, dtype=np.int64)
    outcome, adopted, _ = consensus(votes)
    correct = (votes == CORRECT).sum(axis=1)
    split = (correct == (votes == INCORRECT).sum(axis=1)) & (correct > 0)
    return np.where(outcome != NONE, adopted, np.where(split, TIE, SHORT))


def tally(decisions) -> dict:
    """How many responses had each decision, and the accuracy by majority vote:
    correct / decided (None while nothing is decided). Ties and responses short of
    votes are counted beside it, not in it."""
    decisions = np.asarray(decisions, dtype=np.int64)
    counts = {
        name: int((decisions == code).sum()) for code, name in DECISION_NAMES.items()
    }
    decided = counts["correct"] + counts["incorrect"]
    return {
        **counts,
        "responses": int(decisions.size),
        "decided": decided,
        "accuracy": counts["correct"] / decided if decided else None,
    }


def combined_accuracy(parts: Mapping[str, tuple[int, int]]) -> float | None:
    """Study 002 §2.3's overall accuracy: the accuracies of the question formats
    (multiple choice, true/false, open answers decided by majority vote), each
    (correct, tested), averaged with the tested counts as weights. None while
    nothing is tested."""
    weights = {name: tested for name, (_, tested) in parts.items() if tested}
    total = sum(weights.values())
    if not total:
        return None
    return sum(
        parts[name][0] / tested * (tested / total) for name, tested in weights.items()
    )
