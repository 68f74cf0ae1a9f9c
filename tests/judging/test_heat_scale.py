"""The heat scale every heatmap shares (#30): the value printed in a cell keeps its
contrast on every colour of the scale, and the leaderboard's cells and the figures
use the same colours."""

import numpy as np
from matplotlib.colors import to_hex

from judging.leaderboard.presenting import heat_style
from judging.reporting.figures import (
    HEAT,
    HEAT_STOPS,
    INK,
    contrast_ratio,
    heat_colour,
)

# The cell's second line (n=…) is smaller and a little lighter than the value.
SUPPORT_TEXT = "#3a4254"


def test_the_value_in_ink_passes_aaa_contrast_across_the_whole_scale():
    colours = [heat_colour(share) for share in np.linspace(0, 1, 301)]
    assert min(contrast_ratio(INK, colour) for colour in colours) >= 7
    assert min(contrast_ratio(SUPPORT_TEXT, colour) for colour in colours) >= 4.5


def test_cells_and_figures_share_one_scale():
    assert heat_colour(0) == HEAT_STOPS[0]
    assert heat_colour(0.5) == HEAT_STOPS[1]
    assert heat_colour(1) == HEAT_STOPS[2]
    for share in (0.1, 0.37, 0.8):
        cell = np.array([int(heat_colour(share)[i : i + 2], 16) for i in (1, 3, 5)])
        figure = np.array([int(to_hex(HEAT(share))[i : i + 2], 16) for i in (1, 3, 5)])
        # matplotlib samples its colour map at 256 steps.
        assert np.abs(cell - figure).max() <= 2, (share, cell, figure)


def test_a_score_and_a_rate_at_the_same_share_get_the_same_background():
    assert (
        heat_style(1.5, "score")
        == heat_style(0.5, "rate")
        == (f"background: {HEAT_STOPS[1]}")
    )
    assert heat_style(-1, "score") == f"background: {HEAT_STOPS[0]}"
    assert heat_style(float("nan"), "score") == ""


def test_contrast_ratio_matches_wcag_reference_values():
    assert round(contrast_ratio("#000000", "#ffffff"), 2) == 21.0
    assert round(contrast_ratio("#777777", "#ffffff"), 2) == 4.48
