"""Empirical difficulty and the subsets derived from it (LPFQA), as pure functions.

An item is *solved* by a run when its final score reaches the threshold (binary
benchmarks: 1; the 0–3 rubric: 3, a perfect answer, unless chosen otherwise); on a
binary run with k trials, when it is right in at least one trial. Over a set of
runs, each item has how many runs scored it and how many solved it.

- ``lpfqa-minus`` (LPFQA⁻): drop the items no run solved.
- ``lpfqa-equal`` (LPFQA⁼): also drop the items every run that scored them solved.

Items no run scored give no evidence either way and are left out of both.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from django.utils.translation import gettext_noop

from judging.reporting.definitions import footnote
from judging.reporting.tables import Column, Table

RULES = {
    "lpfqa-minus": "LPFQA⁻: the items at least one model solved",
    "lpfqa-equal": "LPFQA⁼: the items at least one model solved and not every model",
}


def solved_counts(final: np.ndarray, solved_at: float) -> tuple[np.ndarray, np.ndarray]:
    """(solved, scored) per item from ``runs × items`` final scores (NaN = not
    scored): how many runs solved it, how many scored it."""
    final = np.atleast_2d(np.asarray(final, dtype=float))
    scored = ~np.isnan(final)
    solved = scored & (np.nan_to_num(final, nan=-np.inf) >= solved_at)
    return solved.sum(axis=0), scored.sum(axis=0)


def subset_mask(solved: np.ndarray, scored: np.ndarray, rule: str) -> np.ndarray:
    """The items `rule` keeps."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}")
    keep = (scored > 0) & (solved > 0)
    if rule == "lpfqa-equal":
        keep &= solved < scored
    return keep


def solved_histogram(solved: np.ndarray, scored: np.ndarray, n_runs: int) -> list[int]:
    """How many items k runs solved, for k = 0..n_runs (items no run scored left
    out): the empirical difficulty at a glance."""
    return np.bincount(solved[scored > 0], minlength=n_runs + 1).tolist()


NO_FIELD = "(no field)"


def field_distribution(
    item_fields: dict[int, str], sets: list[tuple[str, list[int]]]
) -> Table:
    """LPFQA Figure 5: how many items of each field (the item's domain) the full
    set and each named set of item ids hold, with each field's share of its set."""
    full = ("Full set", list(item_fields))
    counted = [
        (name, Counter(item_fields[pk] or NO_FIELD for pk in ids if pk in item_fields))
        for name, ids in [full, *sets]
    ]
    fields = sorted(counted[0][1])
    columns = [Column("field", gettext_noop("Professional field"))]
    for name, _ in counted:
        columns += [
            Column(f"{name}:items", name, "int"),
            Column(f"{name}:share", "%", "rate"),
        ]
    rows = []
    for field in [*fields, None]:
        row = [field or "All"]
        for _, counts in counted:
            total = sum(counts.values())
            n = counts.get(field, 0) if field else total
            row += [n, n / total if total else float("nan")]
        rows.append(row)
    return Table(
        slug="field-distribution",
        title=gettext_noop("Items per field (LPFQA Figure 5)"),
        columns=columns,
        rows=rows,
        notes=[footnote("field-distribution")],
    )
