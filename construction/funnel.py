"""The construction funnel (pure, IndustryBench Figure 3): from counts of stage
decisions to the table of candidates in / out / rejected per stage — overall, by
source family and by label — the commonest reject reasons per stage, and what a
release is made of."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ALL = "all"
NO_LABEL = "(no label)"
# Column order of the outcome axis; refine counts as out (deep verification
# corrected the answer and the candidate goes on with it).
OUTCOMES = ("pass", "reject", "pending", "refine")


@dataclass(frozen=True)
class FunnelRow:
    stage: str
    group: str  # a source kind or label, or ALL
    entered: int
    passed: int
    rejected: int
    pending: int  # a call failed or stayed unparseable, or a flag waits
    ran: bool  # the stage has decided on at least one candidate of the benchmark

    @property
    def rejected_share(self) -> float | None:
        """Rejected / entered, None when nothing entered."""
        return self.rejected / self.entered if self.entered else None

    @property
    def rejected_percent(self) -> float | None:
        share = self.rejected_share
        return None if share is None else round(100 * share, 1)


def outcome_table(
    counts: Mapping[tuple[str, str, str], int],
    stages: Sequence[str],
    groups: Sequence[str],
) -> np.ndarray:
    """stages × groups × OUTCOMES array of candidates; keys naming a stage, group
    or outcome outside the given ones are left out."""
    table = np.zeros((len(stages), len(groups), len(OUTCOMES)), dtype=np.int64)
    stage_at = {stage: i for i, stage in enumerate(stages)}
    group_at = {group: i for i, group in enumerate(groups)}
    outcome_at = {outcome: i for i, outcome in enumerate(OUTCOMES)}
    for (stage, group, outcome), n in counts.items():
        if stage in stage_at and group in group_at and outcome in outcome_at:
            table[stage_at[stage], group_at[group], outcome_at[outcome]] += n
    return table


def funnel(
    counts: Mapping[tuple[str, str, str], int],
    stages: Sequence[str],
    groups: Sequence[str],
) -> list[FunnelRow]:
    """One row per stage (every one of `stages`, in order) and group, then the
    stage's ALL row. `counts` maps (stage, group, outcome) to the number of
    candidates whose latest decision in that stage it is. A stage without any
    decision has rows of zeros with `ran` False."""
    table = outcome_table(counts, stages, groups)
    by_group = np.stack(
        [table[..., 0] + table[..., 3], table[..., 1], table[..., 2]], axis=-1
    )
    overall = by_group.sum(axis=1)
    ran = overall.sum(axis=1) > 0
    rows = []
    for s, stage in enumerate(stages):
        for g, group in enumerate(groups):
            rows.append(_row(stage, group, by_group[s, g], ran[s]))
        rows.append(_row(stage, ALL, overall[s], ran[s]))
    return rows


def _row(stage: str, group: str, cells: np.ndarray, ran: bool) -> FunnelRow:
    passed, rejected, pending = (int(x) for x in cells)
    return FunnelRow(
        stage, group, passed + rejected + pending, passed, rejected, pending, bool(ran)
    )


def pivot(rows: Sequence[FunnelRow]) -> list[tuple[str, bool, list[FunnelRow]]]:
    """(stage, ran, its rows in group order with ALL last) per stage, in order:
    the shape of a table with one line per stage and columns per group."""
    stages: dict[str, list[FunnelRow]] = {}
    for row in rows:
        stages.setdefault(row.stage, []).append(row)
    return [(stage, group[-1].ran, group) for stage, group in stages.items()]


HEADER = [
    "stage",
    "breakdown",
    "group",
    "in",
    "out",
    "rejected",
    "pending",
    "rejected_pct",
    "status",
]


def funnel_cells(breakdown: str, row: FunnelRow) -> list:
    percent = row.rejected_percent
    return [
        row.stage,
        breakdown,
        row.group,
        row.entered,
        row.passed,
        row.rejected,
        row.pending,
        "" if percent is None else percent,
        "ran" if row.ran else "not run",
    ]


# -- reject reasons -----------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def reason_pattern(reason: str) -> str:
    """A reason with its numbers (candidate ids, similarities) as N, so that
    "Duplicate of candidate 12 (similarity 0.93)" and "… 40 (similarity 0.91)"
    count as one reason."""
    return _NUMBER.sub("N", " ".join(reason.split())) or "(no reason given)"


def top_reasons(
    stages: Sequence[str], reasons: Sequence[str], k: int = 5
) -> dict[str, list[tuple[str, int]]]:
    """stage → its `k` commonest reason patterns with their counts, commonest
    first (ties in alphabetical order), from one stage and reason per reject."""
    patterns = np.array([reason_pattern(r) for r in reasons], dtype=object)
    stage_array = np.array(stages, dtype=object)
    out: dict[str, list[tuple[str, int]]] = {}
    for stage in dict.fromkeys(stages):
        names, counts = np.unique(patterns[stage_array == stage], return_counts=True)
        # np.unique sorts the names; a stable sort on -count keeps that for ties.
        order = np.argsort(-counts, kind="stable")[:k]
        out[stage] = [(str(names[i]), int(counts[i])) for i in order]
    return out


# -- what a release is made of --------------------------------------------------------


@dataclass(frozen=True)
class Share:
    name: str
    count: int
    share: float

    @property
    def percent(self) -> float:
        return round(100 * self.share, 1)


@dataclass(frozen=True)
class Composition:
    total: int
    kinds: list[Share]  # in the order of `kinds` given, zeros kept
    labels: list[Share]  # commonest first, ties in alphabetical order


def composition(
    kinds: Sequence[str], labels: Sequence[str], kind_order: Sequence[str]
) -> Composition:
    """The share of released candidates per source family and per label (one
    kind and label per released candidate; an empty label is NO_LABEL)."""
    total = len(kinds)
    kind_array = np.array(kinds, dtype=object)
    kind_counts = [int((kind_array == kind).sum()) for kind in kind_order]
    names, counts = np.unique(
        np.array([label or NO_LABEL for label in labels], dtype=object),
        return_counts=True,
    )
    order = np.argsort(-counts, kind="stable")
    return Composition(
        total=total,
        kinds=[
            Share(kind, n, n / total if total else 0.0)
            for kind, n in zip(kind_order, kind_counts, strict=True)
        ],
        labels=[
            Share(str(names[i]), int(counts[i]), int(counts[i]) / total) for i in order
        ],
    )
