"""Heatmaps of the robustness report, drawn with matplotlib's object API (no
pyplot: no global state, safe in a web process) as SVG text for the page."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from judging.reporting.figures import HEAT, write

# Model, relation and sector names may be Chinese: a CJK face after DejaVu (a
# missing face is skipped; the README's test set-up installs Noto CJK).
FONTS = ["DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP"]


def heatmap_svg(
    title: str, models: list[str], panels: list[tuple[str, list[str], np.ndarray]]
) -> str:
    """One panel per (name, columns, models × columns values in [0, 1]); empty
    cells (NaN) are left white. Returns the SVG element without its XML header."""
    widths = [max(len(columns), 1) for _, columns, _ in panels]
    figure = Figure(
        figsize=(2.2 + 0.62 * sum(widths), 1.4 + 0.38 * len(models)),
        layout="constrained",
    )
    axes_row = figure.subplots(1, len(panels), width_ratios=widths, squeeze=False)[0]
    image = None
    for axes, (name, columns, values) in zip(axes_row, panels, strict=True):
        values = np.asarray(values, dtype=float)
        image = axes.imshow(
            np.ma.masked_invalid(values), cmap=HEAT, vmin=0, vmax=1, aspect="auto"
        )
        axes.set_xticks(
            range(len(columns)),
            columns,
            rotation=40,
            ha="right",
            fontsize=8,
            fontfamily=FONTS,
        )
        axes.set_yticks(
            range(len(models)),
            models if axes is axes_row[0] else [],
            fontsize=8,
            fontfamily=FONTS,
        )
        for (r, c), value in np.ndenumerate(values):
            if not np.isnan(value):
                axes.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=7)
        axes.set_title(name, fontsize=9, fontfamily=FONTS)
    figure.suptitle(title, fontsize=10)
    figure.colorbar(image, ax=list(axes_row), fraction=0.03, label="robustness")
    svg = write(figure, "svg").decode()
    return svg[svg.index("<svg") :]
