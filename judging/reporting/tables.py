"""Report tables as plain data, written out as CSV, LaTeX or aligned text (no ORM).

A Table is what every report page, download and `manage.py leaderboard` share, so the
numbers on screen, in the CSV and in the paper-ready LaTeX are the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from benchmark.csv_writer import csv_text

# The IndustryBench paper prints 0–3 means and statistics with 3 decimals and
# percentages with 1 (every `rate`). Columns default to 3; one shown with fewer on
# screen sets `paper_digits` so that its LaTeX keeps the paper's precision.
PAPER_DIGITS = 3


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = "text"  # text | int | num | signed | rate
    # Decimals on screen and in text. A 0–3 mean shown with fewer (the heatmaps'
    # compact cells) still gets PAPER_DIGITS in LaTeX: set `paper_digits`.
    digits: int = 3
    paper_digits: int | None = None

    @property
    def latex_digits(self) -> int:
        return self.digits if self.paper_digits is None else self.paper_digits


@dataclass
class Table:
    slug: str
    title: str
    columns: list[Column]
    rows: list[list]
    notes: list[str] = field(default_factory=list)
    # Heatmaps: support[r][c] counts the items behind cell (r, c) of the value
    # columns (those after `label_columns`); cells below min_support are marked.
    support: list[list[int]] | None = None
    min_support: int = 0
    label_columns: int = 1
    row_keys: list = field(default_factory=list)
    column_keys: list = field(default_factory=list)
    # Cells to emphasise (value columns), e.g. significant paired differences.
    highlight: list[list[bool]] | None = None

    def format(self, column: Column, value, digits: int | None = None) -> str:
        """`value` as shown; `digits` replaces the column's decimals (LaTeX)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "–"
        digits = column.digits if digits is None else digits
        if column.kind == "int":
            return str(int(value))
        if column.kind == "signed":
            return f"{value:+.{digits}f}"
        if column.kind == "rate":
            return f"{100 * value:.1f}%"
        if column.kind == "num":
            return f"{value:.{digits}f}"
        return str(value)

    def formatted_rows(self, *, latex: bool = False) -> list[list[str]]:
        """Every cell as text; `latex`: with each column's paper precision."""
        return [
            [
                self.format(c, v, c.latex_digits if latex else None)
                for c, v in zip(self.columns, row, strict=True)
            ]
            for row in self.rows
        ]

    def is_low_support(self, row: int, column: int) -> bool:
        if self.support is None:
            return False
        return self.support[row][column - self.label_columns] < self.min_support

    def is_highlighted(self, row: int, column: int) -> bool:
        if self.highlight is None or column < self.label_columns:
            return False
        return bool(self.highlight[row][column - self.label_columns])

    def to_csv(self) -> str:
        """Numbers unformatted; rates as percentages, as their headers say."""
        return csv_text(
            [_csv_header(c) for c in self.columns],
            (
                [
                    "" if _missing(v) else _raw(c, v)
                    for c, v in zip(self.columns, row, strict=True)
                ]
                for row in self.rows
            ),
        )

    def to_latex(self) -> str:
        """The table as a LaTeX file: `latex_body` under `latex_file`'s header."""
        return latex_file(self.latex_body())

    def latex_body(self) -> str:
        """The `table` environment alone, for files that hold several tables."""
        align = "".join("l" if c.kind == "text" else "r" for c in self.columns)
        lines = [
            "\\begin{table}[t]",
            "\\centering",
            f"\\caption{{{latex_escape(self.title)}}}",
            f"\\begin{{tabular}}{{{align}}}",
            "\\toprule",
            " & ".join(latex_escape(c.label) for c in self.columns) + " \\\\",
            "\\midrule",
        ]
        for r, row in enumerate(self.formatted_rows(latex=True)):
            cells = []
            for c, text in enumerate(row):
                text = latex_escape(text)
                if c >= self.label_columns and self.is_low_support(r, c):
                    text += "$^{\\dagger}$"
                if self.is_highlighted(r, c):
                    text = f"\\textbf{{{text}}}"
                cells.append(text)
            lines.append(" & ".join(cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        # The support note is LaTeX already (the cells' mark), so it joins the
        # notes after they are escaped.
        notes = [latex_escape(n) for n in self.notes]
        if self.support is not None:
            notes.append(f"$^{{\\dagger}}$ fewer than {self.min_support} items.")
        if notes:
            lines.append("\\par\\footnotesize " + " ".join(notes))
        lines.append("\\end{table}")
        return "\n".join(lines) + "\n"

    def to_text(self) -> str:
        header = [c.label for c in self.columns]
        body = self.formatted_rows()
        for r, row in enumerate(body):
            for c in range(self.label_columns, len(row)):
                if self.is_low_support(r, c):
                    row[c] += "*"
        widths = [
            max(len(header[i]), *(len(row[i]) for row in body)) if body else len(h)
            for i, h in enumerate(header)
        ]

        def line(cells):
            return "  ".join(
                cell.ljust(w) if col.kind == "text" else cell.rjust(w)
                for cell, w, col in zip(cells, widths, self.columns, strict=True)
            ).rstrip()

        out = [self.title, "=" * len(self.title), line(header)]
        out.append("  ".join("-" * w for w in widths))
        out += [line(row) for row in body]
        if self.support is not None:
            out.append(f"* fewer than {self.min_support} items")
        out += self.notes
        return "\n".join(out) + "\n"

    def as_dict(self) -> dict:
        data = {
            "slug": self.slug,
            "title": self.title,
            "columns": [c.label for c in self.columns],
            "rows": [
                [
                    None if _missing(v) else _raw(c, v)
                    for c, v in zip(self.columns, row, strict=True)
                ]
                for row in self.rows
            ],
            "notes": self.notes,
        }
        if self.support is not None:
            data["support"] = self.support
            data["min_support"] = self.min_support
        return data


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _raw(column: Column, value):
    if column.kind == "int":
        return int(value)
    if column.kind == "rate":
        return round(100 * float(value), 4)
    if column.kind in {"num", "signed"}:
        return round(float(value), 6)
    return value


def _csv_header(column: Column) -> str:
    if column.kind == "rate" and "%" not in column.label:
        return f"{column.label} (%)"
    return column.label


# Characters written as text-mode LaTeX: first the ASCII ones special to LaTeX.
_LATEX_TEXT = {
    "\u00a7": "\\S{}",  # § (a paper's section)
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
    # Non-ASCII text symbols: those the report builders write (dashes for missing
    # values and ranges, †) and their neighbours a label or note may hold.
    "\u2013": "--",  # – en dash
    "\u2014": "---",  # — em dash
    "\u2026": "\\ldots{}",  # …
    "\u2020": "\\dag{}",  # †
    "\u2021": "\\ddag{}",  # ‡
    "\u2713": "\\checkmark{}",  # ✓ (amssymb)
    "\u2018": "`",  # ‘
    "\u2019": "'",  # ’
    "\u201c": "``",  # “
    "\u201d": "''",  # ”
    "\u00a0": "~",  # no-break space
}

# Characters written in math mode; a run of them shares one $...$ group (|Δ| is
# $|\Delta|$), so that no `$$` (display math) can appear between two of them.
# `<`, `>` and `|` are here because in text they need the T1 font encoding (in
# the default OT1 they print as other glyphs, |x| with em dashes).
_LATEX_MATH = {
    "<": "<",
    ">": ">",
    "|": "|",
    "\u0394": "\\Delta",  # Δ
    "\u03b1": "\\alpha",  # α
    "\u03ba": "\\kappa",  # κ
    "\u03bc": "\\mu",  # μ
    "\u03c0": "\\pi",  # π
    "\u03c1": "\\rho",  # ρ
    "\u03c3": "\\sigma",  # σ
    "\u03a3": "\\Sigma",  # Σ
    "\u00b1": "\\pm",  # ±
    "\u2212": "-",  # − minus sign
    "\u00d7": "\\times",  # ×
    "\u00b7": "\\cdot",  # ·
    "\u2264": "\\leq",  # ≤
    "\u2265": "\\geq",  # ≥
    "\u2260": "\\neq",  # ≠
    "\u2248": "\\approx",  # ≈
    "\u2192": "\\rightarrow",  # →
    "\u00b2": "^{2}",  # ²
    "\u00b3": "^{3}",  # ³
    "\u207b": "^{-}",  # ⁻ (LPFQA⁻)
    "\u207c": "^{=}",  # ⁼ (LPFQA⁼)
}


def latex_escape(text: str) -> str:
    """`text` for pdflatex: special characters escaped, the symbols the reports
    use (Δ, ±, κ, ρ, α, ≤, ≥, −, –, —, ×, ·, ², †, ✓, …) as LaTeX macros.

    Any other non-ASCII character (a Chinese model name, item text) is kept as it
    is rather than dropped or transliterated: the numbers must stay attributable
    to the names on screen. `latex_file`'s header then says the file needs XeLaTeX
    with xeCJK (or ctex)."""
    out, math = [], []
    for ch in str(text):
        if ch in _LATEX_MATH:
            math.append(_LATEX_MATH[ch])
            continue
        if math:
            out.append("$" + "".join(math) + "$")
            math = []
        out.append(_LATEX_TEXT.get(ch, ch))
    if math:
        out.append("$" + "".join(math) + "$")
    return "".join(out)


def latex_file(*bodies: str) -> str:
    """LaTeX bodies under one header comment naming the packages they need, so a
    download pasted into a paper says what its preamble must load."""
    text = "\n".join(bodies)
    packages = ["booktabs"] + (["amssymb"] if "\\checkmark" in text else [])
    header = [f"% Needs \\usepackage{{{','.join(packages)}}}."]
    if not text.isascii():
        header.append(
            "% Holds non-ASCII text (e.g. Chinese names) as UTF-8: compile with "
            "XeLaTeX and \\usepackage{xeCJK} (or the ctex package)."
        )
    return "\n".join(header) + "\n" + text
