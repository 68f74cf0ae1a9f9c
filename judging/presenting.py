"""Turn report Tables into cells for templates: text, sort keys, heat colours, links."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from django.urls import reverse

from .tables import Table

HEATMAP_SLUGS = {"capability", "industry", "difficulty"}


def heat_style(value, kind: str) -> str:
    """Red (low) → amber → green (high) background; 0–3 scores or 0–1 rates."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    share = value if kind == "rate" else value / 3
    share = min(max(share, 0.0), 1.0)
    return f"background: hsl({round(120 * share)}, 65%, {88 - round(8 * share)}%)"


def _sort_value(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value


def present_table(table: Table, benchmark, language: str) -> dict:
    heat = table.slug in HEATMAP_SLUGS
    cell_url = reverse("judging:cell_items", args=[benchmark.slug])
    downloads = {
        fmt: reverse("judging:table_download", args=[benchmark.slug, table.slug, fmt])
        + f"?lang={language}"
        for fmt in ("csv", "tex")
    }
    rows = []
    for r, row in enumerate(table.rows):
        cells = []
        for c, (column, value) in enumerate(zip(table.columns, row, strict=True)):
            cell = {
                "text": table.format(column, value),
                "sort": _sort_value(value),
                "num": column.kind != "text",
            }
            value_col = c - table.label_columns
            if value_col >= 0 and table.support is not None:
                cell["support"] = table.support[r][value_col]
                cell["low"] = table.is_low_support(r, c)
            if heat and value_col >= 0:
                cell["style"] = heat_style(value, column.kind)
                if cell["support"]:
                    query = urlencode(
                        {
                            "run": table.row_keys[r],
                            "dimension": table.slug,
                            "group": table.column_keys[value_col],
                        }
                    )
                    cell["href"] = f"{cell_url}?{query}"
            if table.highlight is not None and value_col >= 0:
                cell["strong"] = table.highlight[r][value_col]
            if column.key == "rank_change" and value:
                cell["cls"] = "rank-up" if value > 0 else "rank-down"
            cells.append(cell)
        if table.slug == "leaderboard" and table.row_keys:
            model_col = [col.key for col in table.columns].index("model")
            cells[model_col]["href"] = reverse(
                "judging:evaluation_run", args=[table.row_keys[r]]
            )
        rows.append(cells)
    return {
        "table": table,
        "rows": rows,
        "groups": [("", rows)],
        "heat": heat,
        "downloads": downloads,
    }
