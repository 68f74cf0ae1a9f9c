"""Turn report Tables into cells for templates: text, sort keys, heat colours, links;
and the leaderboard's tables as cached HTML."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, ngettext

from judging.leaderboard import building
from judging.reporting.cache import cached
from judging.reporting.figures import heat_colour
from judging.reporting.tables import Table

LEADERBOARD_TABLES = "judging/leaderboard/leaderboard.html#report-tables"

HEATMAP_SLUGS = {"capability", "industry", "difficulty", "fields"}
# Sections open when the page loads; the others are one click (or link) away.
OPEN_SECTIONS = {"leaderboard"}
MOSTLY_LOW_SHARE = 0.75
SUMMARY_TOP = 3


def heat_style(value, kind: str) -> str:
    """The figures' heat scale as a background (the cell prints its value too);
    0–3 scores or 0–1 rates."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    share = value if kind == "rate" else value / 3
    return f"background: {heat_colour(share)}"


def _sort_value(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value


def _cell_html(cell: dict) -> str:
    classes = " ".join(
        name for name in ("num" if cell["num"] else "", cell.get("cls", "")) if name
    )
    if cell.get("strong"):
        classes += " sig"
    text = escape(cell["text"])
    if cell.get("href"):
        text = f'<a href="{escape(cell["href"])}">{text}</a>'
    return f'<td class="{classes}" data-sort="{escape(cell["sort"])}">{text}</td>'


def _heat_cell_html(cell: dict) -> str:
    low = cell.get("low")
    support = f'<span class="support">n={cell["support"]}</span>'
    text = escape(cell["text"])
    if cell.get("href"):
        mark = "<sup>†</sup>" if low else ""
        body = f'<a href="{escape(cell["href"])}">{text}{mark}{support}</a>'
    else:
        body = f'<span class="cell">{text}{support}</span>'
    if low:
        title = ngettext(
            "%(n)s scored item (low support)",
            "%(n)s scored items (low support)",
            cell["support"],
        ) % {"n": cell["support"]}
    else:
        title = ngettext("%(n)s scored item", "%(n)s scored items", cell["support"]) % {
            "n": cell["support"]
        }
    return (
        f'<td class="heat{" low" if low else ""}" style="{escape(cell["style"])}" '
        f'data-sort="{escape(cell["sort"])}" title="{escape(title)}">{body}</td>'
    )


def row_html(cells: list[dict], heat: bool) -> SafeString:
    """One table row as HTML. Built here rather than in the template: a page has
    ~1,000 heatmap cells, and the template loop took ~90 ms of CPU to render them;
    this takes a few ms. Every value is escaped."""
    html = [_cell_html(cells[0])]
    html += [(_heat_cell_html if heat else _cell_html)(cell) for cell in cells[1:]]
    return mark_safe(f"<tr>{''.join(html)}</tr>")


def present_table(table: Table, benchmark, language: str, subset=None) -> dict:
    heat = table.slug in HEATMAP_SLUGS
    cell_url = reverse("judging:cell_items", args=[benchmark.slug])
    query = urlencode({"lang": language, **({"subset": subset.pk} if subset else {})})
    downloads = {
        fmt: reverse("judging:table_download", args=[benchmark.slug, table.slug, fmt])
        + f"?{query}"
        for fmt in ("csv", "tex")
    }
    # When most cells are below the support threshold (a small benchmark), one note
    # says so instead of a mark on nearly every cell.
    mostly_low = _mostly_low_support(table)
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
                cell["low"] = table.is_low_support(r, c) and not mostly_low
            if heat and value_col >= 0:
                cell["style"] = heat_style(value, column.kind)
                if cell["support"] and table.row_keys[r] is not None:
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
        rows.append(row_html(cells, heat))
    return {
        "table": table,
        "rows": rows,
        "groups": [("", rows)],
        "heat": heat,
        "mostly_low": mostly_low,
        "downloads": downloads,
        "open": table.slug in OPEN_SECTIONS,
    }


def _mostly_low_support(table: Table) -> bool:
    if table.support is None or not table.min_support:
        return False
    counts = [n for row in table.support for n in row]
    low = sum(1 for n in counts if n < table.min_support)
    return bool(counts) and low >= MOSTLY_LOW_SHARE * len(counts)


def leaderboard_summary(report: building.Report) -> dict:
    """The few figures the page opens with: how many runs, the top models with their
    final score and CI, and the judge behind the scores."""
    table = report.tables["leaderboard"]
    keys = [column.key for column in table.columns]
    score = "accuracy" if report.binary else "final"
    at = {key: keys.index(key) for key in ("rank", "model", score, "ci")}
    top = [
        {
            "rank": row[at["rank"]],
            "model": row[at["model"]],
            "final": table.format(table.columns[at[score]], row[at[score]]),
            "ci": table.format(table.columns[at["ci"]], row[at["ci"]]),
        }
        for row in table.rows[:SUMMARY_TOP]
    ]
    return {"runs": len(table.rows), "top": top}


def category_groups(table: Table, rows: list) -> list:
    """Leaderboard rows split by model category, each group in rank order. The rank
    column stays the overall rank (the heading says so)."""
    category_col = [c.key for c in table.columns].index("category")
    groups: dict[str, list] = {}
    for values, cells in zip(table.rows, rows, strict=True):
        groups.setdefault(values[category_col], []).append(cells)
    return list(groups.items())


def leaderboard_tables(
    benchmark, language: str | None, grouped: bool, subset=None
) -> tuple[building.Report, SafeString]:
    """The report and its tables rendered as HTML, both from the cache while the
    scores are unchanged (the HTML holds nothing user-specific: no form, no CSRF
    token). `subset`: a saved item subset every table is computed on."""
    report = building.cached_report(benchmark, language=language, subset=subset)
    # The HTML is in the reader's language: one cached copy per language.
    key = f"{report.cache_key}:html:{int(grouped)}:{get_language()}"
    html = cached(key, lambda: _tables_html(report, benchmark, grouped, subset))
    return report, mark_safe(html)  # rendered by our own autoescaping template


def _tables_html(report, benchmark, grouped: bool, subset) -> str:
    tables = {
        slug: present_table(table, benchmark, report.language, subset)
        for slug, table in report.tables.items()
    }
    if grouped:
        tables["leaderboard"]["groups"] = category_groups(
            report.tables["leaderboard"], tables["leaderboard"]["rows"]
        )
        tables["leaderboard"]["rank_is_overall"] = True
    return render_to_string(
        LEADERBOARD_TABLES, {"tables": tables, "binary": report.binary}
    )


def warm_leaderboard(benchmark, language: str) -> None:
    """Build and cache the page's tables ahead of the first view (worker side)."""
    leaderboard_tables(benchmark, language, grouped=True)
