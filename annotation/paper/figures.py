"""The paper's figures drawn with matplotlib's object API (no pyplot: no global state,
safe in a web or worker process), from plain numbers. Each function returns a
`Figure`; `judging.reporting.figures.render` writes it as SVG and PNG."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from judging.reporting.figures import BAR, HEAT, SECOND


def top_models(models: list[str], finals, half_widths, k: int = 10) -> Figure:
    """Figure 1: the top-k models by Final (SV), with their 95% CI."""
    finals = np.asarray(finals, dtype=float)
    order = np.argsort(-np.nan_to_num(finals, nan=-np.inf), kind="stable")[:k]
    names = [models[i] for i in order][::-1]
    values = finals[order][::-1]
    errors = np.nan_to_num(np.asarray(half_widths, dtype=float)[order][::-1])
    figure = Figure(figsize=(7, 0.45 * max(len(names), 1) + 1.2))
    axes = figure.add_subplot()
    axes.barh(names, values, xerr=errors, color=BAR, capsize=3)
    axes.set_xlim(0, 3)
    axes.set_xlabel("Final (SV), 0–3, with 95% CI")
    axes.set_title(f"Top {len(names)} models")
    for y, value in enumerate(values):
        # Inside the bar's foot: the CI whisker sits at its end.
        axes.text(0.04, y, f"{value:.3f}", va="center", fontsize=8, color="white")
    return figure


def composition(panels: list[tuple[str, list[str], list[int]]]) -> Figure:
    """Figure 2: one bar panel per (title, labels, counts): capability, industry,
    difficulty and source distributions."""
    columns = 2
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(11, 3.6 * rows))
    for index, (title, labels, counts) in enumerate(panels, 1):
        axes = figure.add_subplot(rows, columns, index)
        total = sum(counts) or 1
        axes.barh(labels[::-1], counts[::-1], color=BAR)
        axes.set_title(f"{title} (n = {sum(counts)})", fontsize=10)
        axes.tick_params(axis="y", labelsize=8)
        for y, count in enumerate(counts[::-1]):
            axes.text(
                count,
                y,
                f" {count} ({100 * count / total:.1f}%)",
                va="center",
                fontsize=7,
            )
        axes.margins(x=0.25)
    figure.tight_layout()
    return figure


def sv_zeroed(models: list[str], non_thinking, thinking) -> Figure:
    """Figure 4: per model, the share of raw 2–3 answers zeroed by SV in each mode."""
    y = np.arange(len(models))
    figure = Figure(figsize=(7, 0.5 * max(len(models), 1) + 1.2))
    axes = figure.add_subplot()
    height = 0.38
    off = 100 * np.asarray(non_thinking, dtype=float)
    on = 100 * np.asarray(thinking, dtype=float)
    axes.barh(y + height / 2, off, height, label="non-thinking", color=BAR)
    axes.barh(y - height / 2, on, height, label="thinking", color=SECOND)
    axes.set_yticks(y, models)
    axes.invert_yaxis()
    axes.set_xlabel("Raw 2–3 answers set to 0 by the SV rule (%)")
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8)
    return figure


def heatmap(
    title: str, models: list[str], columns: list[str], values, low_columns
) -> Figure:
    """Figures 5/6: models × slices of Final (SV) 0–3; low-support columns' labels
    end with †."""
    values = np.asarray(values, dtype=float)
    figure = Figure(figsize=(1.0 + 0.75 * len(columns), 1.2 + 0.4 * len(models)))
    axes = figure.add_subplot()
    image = axes.imshow(
        np.ma.masked_invalid(values), cmap=HEAT, vmin=0, vmax=3, aspect="auto"
    )
    labels = [
        f"{c} †" if low else c for c, low in zip(columns, low_columns, strict=True)
    ]
    axes.set_xticks(range(len(columns)), labels, rotation=40, ha="right", fontsize=8)
    axes.set_yticks(range(len(models)), models, fontsize=8)
    for (r, c), value in np.ndenumerate(values):
        if not np.isnan(value):
            axes.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=6.5)
    axes.set_title(title, fontsize=10)
    figure.colorbar(image, ax=axes, fraction=0.03, label="Final (SV)")
    return figure
