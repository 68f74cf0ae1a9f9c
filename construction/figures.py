"""The funnel chart (IndustryBench Figure 3), drawn with matplotlib's object API
from plain numbers (pure); `judging.reporting.figures.render` writes it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from judging.reporting.figures import BAR, MUTED, SECOND

FAMILY_COLOURS = (BAR, SECOND, "#3a9d5d", "#8e44ad")


def funnel_figure(
    stages: Sequence[str],
    families: Sequence[str],
    entered,
    passed_by_family,
    ran: Sequence[bool],
) -> Figure:
    """One bar per stage, first at the top: its length the candidates that
    entered (grey), covered by those that came out, stacked by source family.
    `passed_by_family` is stages × families; a stage that has not run says so."""
    entered = np.asarray(entered, dtype=float)
    passed = np.asarray(passed_by_family, dtype=float).reshape(
        len(stages), len(families)
    )
    y = np.arange(len(stages))
    figure = Figure(figsize=(8, 0.55 * max(len(stages), 1) + 1.4))
    axes = figure.add_subplot()
    axes.barh(y, entered, color=MUTED, label="rejected or pending")
    left = np.zeros(len(stages))
    for index, family in enumerate(families):
        colour = FAMILY_COLOURS[index % len(FAMILY_COLOURS)]
        axes.barh(y, passed[:, index], left=left, color=colour, label=family)
        left += passed[:, index]
    widest = max(float(entered.max(initial=0)), 1.0)
    for row, stage_ran in enumerate(ran):
        if not stage_ran:
            note = "not run"
        else:
            out = int(left[row])
            share = 1 - out / entered[row] if entered[row] else 0.0
            dropped = f"−{100 * share:.1f} %" if share else "none dropped"
            note = f"{int(entered[row]):,} → {out:,}  ({dropped})"
        axes.text(entered[row] + widest * 0.01, row, note, va="center", fontsize=8)
    axes.set_yticks(y, list(stages))
    axes.invert_yaxis()
    axes.set_xlim(0, widest * 1.35)
    axes.set_xlabel("Candidates in (grey) and out (coloured, by source)")
    axes.spines[["top", "right"]].set_visible(False)
    axes.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18),
        ncol=len(families) + 1,
        fontsize=8,
        frameon=False,
    )
    return figure
