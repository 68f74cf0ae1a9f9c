"""The construction funnel (pure): from counts of stage decisions to the table of
candidates in / out / rejected per stage, by source kind and overall."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ALL = "all"


@dataclass(frozen=True)
class FunnelRow:
    stage: str
    source_kind: str  # a kind, or ALL
    entered: int
    passed: int
    rejected: int
    pending: int  # a call failed or stayed unparseable, or a flag waits

    @property
    def rejected_share(self) -> float | None:
        """Rejected / entered, None when nothing entered."""
        return self.rejected / self.entered if self.entered else None


def funnel(
    counts: Mapping[tuple[str, str, str], int],
    stages: Sequence[str],
    kinds: Sequence[str],
) -> list[FunnelRow]:
    """One row per stage (in `stages` order, those with any decision) and source
    kind, then the stage's ALL row. `counts` maps (stage, source kind, outcome)
    to the number of candidates whose latest decision in that stage it is;
    outcomes are pass, reject, refine and pending (refine counts as out: deep
    verification corrected the answer and the candidate goes on)."""
    rows = []
    for stage in stages:
        if not any(key[0] == stage for key in counts):
            continue
        totals = [0, 0, 0, 0]
        for kind in kinds:
            passed = counts.get((stage, kind, "pass"), 0) + counts.get(
                (stage, kind, "refine"), 0
            )
            rejected = counts.get((stage, kind, "reject"), 0)
            pending = counts.get((stage, kind, "pending"), 0)
            entered = passed + rejected + pending
            for index, value in enumerate((entered, passed, rejected, pending)):
                totals[index] += value
            rows.append(FunnelRow(stage, kind, entered, passed, rejected, pending))
        rows.append(FunnelRow(stage, ALL, *totals))
    return rows


HEADER = ["stage", "source_kind", "in", "out", "rejected", "pending", "rejected_pct"]


def funnel_cells(row: FunnelRow) -> list:
    share = row.rejected_share
    return [
        row.stage,
        row.source_kind,
        row.entered,
        row.passed,
        row.rejected,
        row.pending,
        "" if share is None else round(100 * share, 1),
    ]
