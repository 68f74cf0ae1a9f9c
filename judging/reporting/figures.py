"""What every report figure shares: the colours and `write` / `render`, which write a
matplotlib `Figure` (object API, no pyplot: no global state, safe in a web or
worker process) as SVG and PNG."""

from __future__ import annotations

import io

from matplotlib.figure import Figure

BAR = "#2457c5"
SECOND = "#d97a1e"
MUTED = "#c9ced8"
PNG_DPI = 150


FORMATS = {
    # Dates and the writer's name are left out so a rebuild is byte-identical.
    "svg": {"metadata": {"Date": None}},
    "png": {"dpi": PNG_DPI, "metadata": {"Software": None}},
}


def write(figure: Figure, fmt: str) -> bytes:
    """The figure as `fmt` ("svg" or "png")."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, bbox_inches="tight", **FORMATS[fmt])
    return buffer.getvalue()


def render(figure: Figure) -> dict[str, bytes]:
    """{"svg": …, "png": …}."""
    return {fmt: write(figure, fmt) for fmt in FORMATS}
