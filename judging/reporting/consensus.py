"""Label consensus among k annotators: the one rule, for the labels a labelling run
applies, the consensus report (Table 3) and `agreement.consensus_classes`. Pure
numpy, no ORM.

Labels are integer codes per unit (item) and annotator, -1 where an annotator gave
no usable label. Per unit:

- full: all k annotators gave the same label;
- majority: one label was given by strictly more than half of the k annotators;
- none: otherwise (including units with missing labels and no majority).

The panel is every annotator, missing labels included (the paper: full = all three
agree, majority = two of three). A missing label never counts towards any label, so
with k = 3 two agreeing labels and one failure is a majority, never full agreement,
and one label with two failures is none.
"""

import numpy as np

FULL, MAJORITY, NONE = 0, 1, 2
OUTCOME_NAMES = ("full", "majority", "none")
MISSING = -1


def consensus(labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outcome, adopted label, votes for the adopted label) per unit.

    `labels` has shape (units, k). The adopted label is -1 for outcome none.
    """
    labels = np.asarray(labels, dtype=np.int64)
    if labels.ndim != 2:
        raise ValueError("labels must be a 2-D array of shape (units, annotators)")
    units, k = labels.shape
    if k == 0:
        empty = np.zeros(units, dtype=np.int64)
        return np.full(units, NONE), np.full(units, MISSING), empty
    valid = labels != MISSING
    same = labels[:, :, None] == labels[:, None, :]
    same &= valid[:, :, None] & valid[:, None, :]
    votes = same.sum(axis=2)
    best = votes.argmax(axis=1)
    rows = np.arange(units)
    top_votes = votes[rows, best]
    adopted = labels[rows, best]
    outcome = np.where(
        top_votes == k, FULL, np.where(2 * top_votes > k, MAJORITY, NONE)
    )
    adopted = np.where(outcome == NONE, MISSING, adopted)
    return outcome, adopted, top_votes


def outcome_counts(outcome) -> dict[str, int]:
    """How many units had each outcome, by name."""
    counts = np.bincount(np.asarray(outcome, dtype=np.int64), minlength=3)
    return {name: int(counts[code]) for code, name in enumerate(OUTCOME_NAMES)}
