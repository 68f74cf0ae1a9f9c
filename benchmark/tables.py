"""Report tables and their output formats (text, CSV, JSON, LaTeX) in one place.

A `Report` holds one or more `Table`s and the footnotes that say how the numbers were
computed. Every cell is formatted by `format_cell`, which the HTML templates use too,
so a page, its CSV and its LaTeX show the same digits; JSON keeps full precision.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Column:
    """kind: ``text``, ``int``, ``float`` (3 decimals), ``pct`` (a 0–1 share shown
    as a percentage with 1 decimal) or ``ci`` (a (low, high) pair, 3 decimals)."""

    key: str
    title: str
    kind: str = "text"


@dataclass
class Table:
    key: str
    title: str
    columns: list[Column]
    rows: list[dict]

    def cells(self, row: dict) -> list[tuple[Column, str]]:
        return [
            (column, format_cell(row.get(column.key), column.kind))
            for column in self.columns
        ]


@dataclass
class Report:
    name: str
    title: str
    tables: list[Table]
    footnotes: list[str] = field(default_factory=list)

    def table(self, key: str) -> Table:
        for table in self.tables:
            if table.key == key:
                return table
        raise KeyError(key)


MISSING = "—"


def _is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_cell(value, kind: str = "text") -> str:
    if kind == "ci":
        if _is_missing(value) or any(_is_missing(v) for v in value):
            return MISSING
        low, high = value
        return f"{low:.3f}–{high:.3f}"
    if _is_missing(value):
        return MISSING
    if kind == "int":
        return str(int(value))
    if kind == "float":
        return f"{value:.3f}"
    if kind == "pct":
        return f"{100 * value:.1f}"
    return str(value)


def _csv_header(table: Table) -> list[str]:
    header = []
    for column in table.columns:
        if column.kind == "ci":
            header += [f"{column.key}_low", f"{column.key}_high"]
        else:
            header.append(column.key)
    return header


def _csv_cells(table: Table, row: dict) -> list[str]:
    cells = []
    for column in table.columns:
        value = row.get(column.key)
        if column.kind == "ci":
            pair = (None, None) if _is_missing(value) else value
            cells += ["" if _is_missing(v) else format_cell(v, "float") for v in pair]
        else:
            text = format_cell(value, column.kind)
            cells.append("" if text == MISSING else text)
    return cells


def to_csv(report: Report, table_key: str | None = None) -> str:
    """One table as CSV (the first unless `table_key`), same digits as the page."""
    table = report.table(table_key) if table_key else report.tables[0]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_csv_header(table))
    for row in table.rows:
        writer.writerow(_csv_cells(table, row))
    return out.getvalue()


def _json_value(value):
    if isinstance(value, tuple | list):
        return [_json_value(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return _json_value(value.item())
    return value


def to_json(report: Report) -> str:
    """Every table with full-precision values; NaN becomes null."""
    payload = {
        "report": report.name,
        "title": report.title,
        "tables": [
            {
                "key": table.key,
                "title": table.title,
                "columns": [
                    {"key": c.key, "title": c.title, "kind": c.kind}
                    for c in table.columns
                ],
                "rows": [
                    {c.key: _json_value(row.get(c.key)) for c in table.columns}
                    for row in table.rows
                ],
            }
            for table in report.tables
        ],
        "footnotes": report.footnotes,
    }
    return json.dumps(payload, ensure_ascii=False, indent=2)


def to_text(report: Report) -> str:
    lines = [report.title, "=" * len(report.title), ""]
    for table in report.tables:
        header = [c.title for c in table.columns]
        body = [[text for _, text in table.cells(row)] for row in table.rows]
        widths = [
            max(len(cell) for cell in column)
            for column in zip(header, *body, strict=True)
        ]
        lines += [table.title, ""]
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        lines.append("  ".join("-" * w for w in widths))
        for cells in body:
            lines.append(
                "  ".join(
                    c.ljust(w) if col.kind == "text" else c.rjust(w)
                    for c, w, col in zip(cells, widths, table.columns, strict=True)
                )
            )
        if not body:
            lines.append("(no rows)")
        lines.append("")
    lines += [f"[{i}] {note}" for i, note in enumerate(report.footnotes, 1)]
    return "\n".join(lines).rstrip() + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(report: Report) -> str:
    """booktabs tables, one per report table, footnotes below the last."""
    parts = []
    for table in report.tables:
        spec = "".join("l" if c.kind == "text" else "r" for c in table.columns)
        parts += [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{latex_escape(table.title)}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(latex_escape(c.title) for c in table.columns) + r" \\",
            r"\midrule",
        ]
        for row in table.rows:
            parts.append(
                " & ".join(
                    latex_escape(text.replace(MISSING, "--"))
                    for _, text in table.cells(row)
                )
                + r" \\"
            )
        parts += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    if report.footnotes:
        parts.append(r"\begin{flushleft}\footnotesize")
        parts += [
            rf"[{i}] {latex_escape(note)}\\"
            for i, note in enumerate(report.footnotes, 1)
        ]
        parts.append(r"\end{flushleft}")
    return "\n".join(parts) + "\n"


FORMATS = {
    "text": (to_text, "text/plain; charset=utf-8", "txt"),
    "csv": (to_csv, "text/csv; charset=utf-8", "csv"),
    "json": (to_json, "application/json", "json"),
    "latex": (to_latex, "application/x-latex; charset=utf-8", "tex"),
}
