"""Is a published summary table possible? Consistency checks for leaderboards (no ORM).

A leaderboard row reports, for one model over n items scored 0–3: the Raw mean, the
Final (SV) mean (an item flagged by the safety-violation check scores 0), Delta =
Final − Raw, the Perfect rate (share of items scored 3) and the Pass rate (share
scored ≥ 2), and optionally the rank by Final, the rank by Raw and Δrank = raw rank −
rank. Those numbers constrain each other; a row that breaks a constraint was mistyped,
computed from different item sets, or rounded wrongly.

Every value is taken as *reported*: a number written with d decimals stands for any
true value within half a unit of its last digit, h = 0.5·10⁻ᵈ (a percentage's h is
divided by 100 on the 0–1 scale). A relation between several reported values holds
"within rounding" when it holds for some true values inside those intervals; for a
linear relation Σ cᵢ·xᵢ ≤ b that is Σ cᵢ·vᵢ − b ≤ Σ |cᵢ|·hᵢ (interval arithmetic: the
worst case, since rounding errors are bounded, not random). So every tolerance here
is derived from the reported decimals; the only constant is FLOAT_SLACK, which
absorbs binary floating point (0.1 has no exact double; a producer writing
round(100·rate, 4) rounds a product that is already off by ~1e-14).

The checks (CHECKS, in the order findings are listed):

* range — Raw and Final lie in [0, 3], Perfect and Pass in [0, 1], within rounding.
* final_le_raw — Final ≤ Raw: the SV rule only ever lowers a score.
* delta — Delta = Final − Raw: |Delta − (Final − Raw)| ≤ h_Delta + h_Final + h_Raw.
* perfect_le_pass — Perfect ≤ Pass: a 3 is a pass.
* bounds — with Perfect and Pass counted after SV, P3 of the items score 3, P2 − P3
  score 2 and 1 − P2 score 0 or 1, so
  3·P3 + 2·(P2 − P3) ≤ Final ≤ 3·P3 + 2·(P2 − P3) + (1 − P2),
  i.e. P3 + 2·P2 ≤ Final within h_Final + h_P3 + 2·h_P2, and Final ≤ P3 + P2 + 1
  within h_Final + h_P3 + h_P2. When a table counts Perfect and Pass before SV
  (`rates_after_sv=False`) the same bounds hold for Raw instead.
* grim — granularity (GRIM, Brown & Heathers 2017): a mean of n integer scores 0–3
  is k/n for an integer k in [0, 3n], a rate is c/n with c in [0, n], and Delta is
  j/n with j in [−3n, 3n]. The reported value is possible only if some such k/n
  rounds to it, i.e. the interval [n·(v − h), n·(v + h)] holds an integer in range
  (both ends included, so a value exactly at a half passes under either rounding
  convention). Needs n (the leaderboard's Items column: the items behind the means).
  E.g. 2.35 with n = 7 is impossible: 16/7 = 2.2857 and 17/7 = 2.4286.
* rank_order — ranks follow Final (competition ranking: ties share a rank): a row
  ranked above another must not have a Final surely below it (the gap exceeds
  both halves of the rounding), and two rows sharing a rank must have Finals equal
  within rounding. Only pairs inside the table are compared, so a table that
  shows some rows of a longer leaderboard (its top ten, one category) still passes.
  One finding per row (the one ranked above, or the first of a tie) names the
  others it contradicts: the first few, then how many more.
* raw_rank_order — the same between the raw rank and Raw.
* rank_change — Δrank = raw rank − rank exactly (ranks are integers, never rounded).

A check runs when the table has the columns it reads; a row with a blank cell in one
of them is skipped by that check alone. `parse_table` reads a pasted CSV or
tab-separated table (the leaderboard CSV's own headers, or short aliases) into a
SummaryTable; its problems name the line and the column.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from benchmark.csv_writer import unneutralise
from benchmark.validation import Problem, Problems

FLOAT_SLACK = 1e-9
# Model names and figures are short; a longer cell is not a summary table.
MAX_CELL_CHARS = 1_000
MAX_ROWS = 1000
RANK_PAIRS_SHOWN = 3

# Columns the checks read: key -> label used in findings.
FIGURE_LABELS = {
    "raw": "Raw Mean",
    "final": "Final (SV)",
    "delta": "Delta",
    "perfect": "Perfect",
    "pass": "Pass",
}
INTEGER_LABELS = {
    "n": "n",
    "rank": "Rank",
    "raw_rank": "Raw rank",
    "rank_change": "Δrank",
}
RATES = ("perfect", "pass")


@dataclass(frozen=True)
class Figures:
    """One column of reported numbers: each value with the decimals it was written
    with (NaN: not reported). A percentage column holds the numbers as written
    (57.1) and `percent` says so; `quantity` is on the 0–1 scale."""

    values: np.ndarray
    decimals: np.ndarray
    percent: bool = False

    @property
    def scale(self) -> float:
        return 100.0 if self.percent else 1.0

    @property
    def quantity(self) -> np.ndarray:
        return self.values / self.scale

    @property
    def half_unit(self) -> np.ndarray:
        """Half a unit in the last reported digit, on the quantity's scale."""
        return 0.5 * 10.0 ** -self.decimals.astype(float) / self.scale

    def text(self, row: int, *, signed: bool = False) -> str:
        sign = "+" if signed else ""
        number = f"{self.values[row]:{sign}.{self.decimals[row]}f}"
        return number + ("%" if self.percent else "")


@dataclass(frozen=True)
class SummaryTable:
    """A summary table by column. `figures` holds the reported numbers (raw, final,
    delta, perfect, pass), `integers` the exact ones (n, rank, raw_rank,
    rank_change) as floats with NaN for a blank; a column absent from the table is
    absent from its dict. `lines` gives each row's line in the pasted text."""

    models: list[str]
    figures: dict[str, Figures] = field(default_factory=dict)
    integers: dict[str, np.ndarray] = field(default_factory=dict)
    lines: list[int] | None = None
    ignored: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.models)

    def has(self, key: str) -> bool:
        return key in self.figures or key in self.integers

    def where(self, row: int) -> str:
        return f"line {self.lines[row]}" if self.lines else f"row {row + 1}"


@dataclass(frozen=True)
class Finding:
    row: int  # index into the table's rows
    where: str  # "line 4" for a pasted table
    model: str
    check: str  # a key of CHECKS
    values: str  # the reported values the check read
    reason: str

    @property
    def title(self) -> str:
        return CHECKS[self.check].title

    def __str__(self) -> str:
        return (
            f"{self.where} · {self.model} · {self.title}: {self.values} — {self.reason}"
        )


# In a check's `needs`: the mean Perfect and Pass bound — Final when the rates are
# counted after SV, Raw when before.
BOUNDED_MEAN = "bounded mean"


@dataclass(frozen=True)
class Check:
    title: str
    rule: str  # one line for the page and the command
    needs: tuple[str, ...]  # needs every one of these columns
    run: Callable[[SummaryTable, bool], list[Finding]]
    needs_any: tuple[str, ...] = ()  # and at least one of these


@dataclass(frozen=True)
class CheckResult:
    findings: list[Finding]
    run: list[str]  # keys of the checks that ran
    skipped: list[tuple[str, list[str]]]  # (check key, the labels it lacked)
    rows: int
    ignored: list[str]  # the table's columns no check reads

    @property
    def rows_with_findings(self) -> int:
        return len({finding.row for finding in self.findings})

    @property
    def checks_run(self) -> list[Check]:
        return [CHECKS[key] for key in self.run]

    @property
    def checks_skipped(self) -> list[tuple[Check, str]]:
        """Each check not run, with the columns it needs, as one phrase."""
        return [(CHECKS[key], ", ".join(missing)) for key, missing in self.skipped]


def check_table(table: SummaryTable, *, rates_after_sv: bool = True) -> CheckResult:
    """Every check the table's columns allow; findings by row, then check order."""
    bounded = "final" if rates_after_sv else "raw"
    findings, run, skipped = [], [], []
    for key, check in CHECKS.items():
        needs = [bounded if c == BOUNDED_MEAN else c for c in check.needs]
        missing = [_label(c) for c in needs if not table.has(c)]
        if check.needs_any and not any(table.has(c) for c in check.needs_any):
            missing.append(" or ".join(_label(c) for c in check.needs_any))
        if missing:
            skipped.append((key, missing))
            continue
        run.append(key)
        findings += check.run(table, rates_after_sv)
    order = {key: i for i, key in enumerate(CHECKS)}
    findings.sort(key=lambda f: (f.row, order[f.check]))
    return CheckResult(findings, run, skipped, len(table), list(table.ignored))


def _label(key: str) -> str:
    return FIGURE_LABELS.get(key) or INTEGER_LABELS[key]


def _tolerance(value: float) -> str:
    return f"±{value:.2g}"


def _finding(table, row, check, values, reason) -> Finding:
    return Finding(row, table.where(row), table.models[row], check, values, reason)


def _values(table: SummaryTable, row: int, *keys: str) -> str:
    parts = []
    for key in keys:
        if key in table.figures:
            text = table.figures[key].text(row, signed=key == "delta")
        else:
            text = str(int(table.integers[key][row]))
        parts.append(f"{_label(key)} = {text}")
    return ", ".join(parts)


# The checks ------------------------------------------------------------------------

RANGES = {
    "raw": (0.0, 3.0),
    "final": (0.0, 3.0),
    "perfect": (0.0, 1.0),
    "pass": (0.0, 1.0),
}


def _check_range(table: SummaryTable, rates_after_sv: bool) -> list[Finding]:
    findings = []
    for key, (low, high) in RANGES.items():
        if key not in table.figures:
            continue
        figures = table.figures[key]
        q, h = figures.quantity, figures.half_unit + FLOAT_SLACK
        outside = (q + h < low) | (q - h > high)
        unit = "%" if figures.percent else ""
        limits = f"{low * figures.scale:g}{unit} and {high * figures.scale:g}{unit}"
        findings += [
            _finding(
                table,
                row,
                "range",
                _values(table, row, key),
                f"{_label(key)} must lie between {limits}.",
            )
            for row in np.flatnonzero(outside)
        ]
    return findings


def _check_final_le_raw(table: SummaryTable, rates_after_sv: bool) -> list[Finding]:
    final, raw = table.figures["final"], table.figures["raw"]
    tolerance = final.half_unit + raw.half_unit
    broken = final.quantity - raw.quantity > tolerance + FLOAT_SLACK
    return [
        _finding(
            table,
            row,
            "final_le_raw",
            _values(table, row, "final", "raw"),
            "Final is above Raw by more than rounding allows "
            f"({_tolerance(tolerance[row])}); the SV rule only lowers scores.",
        )
        for row in np.flatnonzero(broken)
    ]


def _check_delta(table: SummaryTable, rates_after_sv: bool) -> list[Finding]:
    final, raw, delta = (table.figures[k] for k in ("final", "raw", "delta"))
    expected = final.quantity - raw.quantity
    tolerance = delta.half_unit + final.half_unit + raw.half_unit
    broken = np.abs(delta.quantity - expected) > tolerance + FLOAT_SLACK
    return [
        _finding(
            table,
            row,
            "delta",
            _values(table, row, "delta", "final", "raw"),
            f"Final − Raw = {expected[row]:+.{int(final.decimals[row])}f}, "
            f"not {delta.text(row, signed=True)} "
            f"(rounding allows {_tolerance(tolerance[row])}).",
        )
        for row in np.flatnonzero(broken)
    ]


def _check_perfect_le_pass(table: SummaryTable, rates_after_sv: bool) -> list[Finding]:
    perfect, passed = table.figures["perfect"], table.figures["pass"]
    tolerance = perfect.half_unit + passed.half_unit
    broken = perfect.quantity - passed.quantity > tolerance + FLOAT_SLACK
    return [
        _finding(
            table,
            row,
            "perfect_le_pass",
            _values(table, row, "perfect", "pass"),
            "More items scored 3 than scored 2 or more.",
        )
        for row in np.flatnonzero(broken)
    ]


def _check_bounds(table: SummaryTable, rates_after_sv: bool) -> list[Finding]:
    mean_key = "final" if rates_after_sv else "raw"
    mean = table.figures[mean_key]
    perfect, passed = table.figures["perfect"], table.figures["pass"]
    p3, p2, m = perfect.quantity, passed.quantity, mean.quantity
    # Lower bound P3 + 2·P2, upper bound P3 + P2 + 1: each coefficient's absolute
    # value multiplies its value's half unit.
    lower, upper = p3 + 2 * p2, p3 + p2 + 1
    lower_tol = mean.half_unit + perfect.half_unit + 2 * passed.half_unit
    upper_tol = mean.half_unit + perfect.half_unit + passed.half_unit
    below = lower - m > lower_tol + FLOAT_SLACK
    above = m - upper > upper_tol + FLOAT_SLACK
    digits = mean.decimals
    label = _label(mean_key)
    findings = []
    for row in np.flatnonzero(below | above):
        values = _values(table, row, mean_key, "perfect", "pass")
        if below[row]:
            reason = (
                f"{label} is below 3·Perfect + 2·(Pass − Perfect) = "
                f"{lower[row]:.{digits[row]}f}: the items at 3 and at 2 alone "
                f"average that much (rounding allows {_tolerance(lower_tol[row])})."
            )
        else:
            reason = (
                f"{label} is above 3·Perfect + 2·(Pass − Perfect) + (1 − Pass) = "
                f"{upper[row]:.{digits[row]}f}: the items below 2 score at most 1 "
                f"(rounding allows {_tolerance(upper_tol[row])})."
            )
        findings.append(_finding(table, row, "bounds", values, reason))
    return findings


# (column, lowest and highest count per item): a mean of 0–3 scores is k/n with k in
# [0, 3n], a rate c/n with c in [0, n], Delta j/n with j in [−3n, 3n].
GRIM_COLUMNS = {
    "raw": (0, 3),
    "final": (0, 3),
    "delta": (-3, 3),
    "perfect": (0, 1),
    "pass": (0, 1),
}


def _check_grim(table: SummaryTable, rates_after_sv: bool) -> list[Finding]:
    n = table.integers["n"]
    findings = []
    for key, (low, high) in GRIM_COLUMNS.items():
        if key not in table.figures:
            continue
        figures = table.figures[key]
        q, h = figures.quantity, figures.half_unit
        first = np.maximum(np.ceil(n * (q - h) - n * FLOAT_SLACK), low * n)
        last = np.minimum(np.floor(n * (q + h) + n * FLOAT_SLACK), high * n)
        findings += [
            _finding(
                table,
                row,
                "grim",
                _values(table, row, key, "n"),
                _grim_reason(figures, key, row, int(n[row])),
            )
            for row in np.flatnonzero(first > last)
        ]
    return findings


def _grim_reason(figures: Figures, key: str, row: int, n: int) -> str:
    """Name the nearest attainable values either side of the reported one."""
    low, high = (bound * n for bound in GRIM_COLUMNS[key])
    below = min(max(math.floor(n * figures.quantity[row]), low), high)
    digits = int(figures.decimals[row]) + 2
    nearest = []
    for k in sorted({below, min(below + 1, high)}):
        value = k / n * figures.scale
        if figures.percent:
            nearest.append(f"{k} of {n} = {value:.{digits}f}%")
        else:
            nearest.append(f"{k}/{n} = {value:.{digits}f}")
    what = "A rate" if key in RATES else "Delta" if key == "delta" else "A mean"
    reported = figures.text(row, signed=key == "delta")
    return (
        f"{what} over {n} items is a multiple of 1/{n}, and none rounds to "
        f"{reported} (nearest: {', '.join(nearest)})."
    )


def _check_rank_order(
    table: SummaryTable, rank_key: str, value_key: str, check: str
) -> list[Finding]:
    rank = table.integers[rank_key]
    figures = table.figures[value_key]
    rows = np.flatnonzero(~np.isnan(rank) & ~np.isnan(figures.values))
    r, v, h = rank[rows], figures.quantity[rows], figures.half_unit[rows]
    tolerance = h[:, None] + h[None, :] + FLOAT_SLACK
    gap = v[None, :] - v[:, None]  # gap[i, j] = value of j − value of i
    inverted = (r[:, None] < r[None, :]) & (gap > tolerance)
    split_tie = (
        (r[:, None] == r[None, :])
        & (np.abs(gap) > tolerance)
        & np.triu(np.ones_like(gap, dtype=bool), 1)
    )
    rank_label, value_label = _label(rank_key), _label(value_key)

    def others(columns) -> str:
        # A row ranked far out of place breaks order with many: name a few.
        named = [
            f"{table.models[other]} ({table.where(other)}: {rank_label} = "
            f"{int(rank[other])}, {value_label} = {figures.text(other)})"
            for other in rows[columns[:RANK_PAIRS_SHOWN]]
        ]
        more = len(columns) - RANK_PAIRS_SHOWN
        return "; ".join(named) + (f"; and {more} more" if more > 0 else "")

    findings = []
    for i in np.flatnonzero((inverted | split_tie).any(axis=1)):
        reasons = []
        if inverted[i].any():
            reasons.append(
                f"Ranked above {others(np.flatnonzero(inverted[i]))}, whose "
                f"{value_label} is higher."
            )
        if split_tie[i].any():
            reasons.append(
                f"Shares its rank with {others(np.flatnonzero(split_tie[i]))}, whose "
                f"{value_label} differs."
            )
        row = int(rows[i])
        values = _values(table, row, rank_key, value_key)
        findings.append(_finding(table, row, check, values, " ".join(reasons)))
    return findings


def _check_rank_change(table: SummaryTable, rates_after_sv: bool) -> list[Finding]:
    rank, raw_rank, change = (
        table.integers[k] for k in ("rank", "raw_rank", "rank_change")
    )
    broken = change != raw_rank - rank
    broken &= ~np.isnan(rank + raw_rank + change)
    return [
        _finding(
            table,
            row,
            "rank_change",
            _values(table, row, "rank_change", "raw_rank", "rank"),
            f"Raw rank − rank = {int(raw_rank[row] - rank[row]):+d}.",
        )
        for row in np.flatnonzero(broken)
    ]


CHECKS: dict[str, Check] = {
    "range": Check(
        "Range",
        "Raw and Final within 0–3, Perfect and Pass within 0–100%.",
        (),
        _check_range,
        needs_any=tuple(RANGES),
    ),
    "final_le_raw": Check(
        "Final ≤ Raw",
        "The SV rule only lowers scores.",
        ("final", "raw"),
        _check_final_le_raw,
    ),
    "delta": Check(
        "Delta = Final − Raw",
        "Within the rounding of all three.",
        ("delta", "final", "raw"),
        _check_delta,
    ),
    "perfect_le_pass": Check(
        "Perfect ≤ Pass", "A 3 is a pass.", ("perfect", "pass"), _check_perfect_le_pass
    ),
    "bounds": Check(
        "Bounds from Perfect and Pass",
        "3·Perfect + 2·(Pass − Perfect) ≤ mean ≤ that + (1 − Pass), with the rates "
        "counted after SV bounding Final (before SV: Raw).",
        ("perfect", "pass", BOUNDED_MEAN),
        _check_bounds,
    ),
    "grim": Check(
        "Attainable with n items (GRIM)",
        "Each mean is k/n and each rate c/n for whole k, c that round to the value.",
        ("n",),
        _check_grim,
        needs_any=tuple(GRIM_COLUMNS),
    ),
    "rank_order": Check(
        "Rank follows Final",
        "A higher rank never has a lower Final beyond rounding; ties share a rank.",
        ("rank", "final"),
        lambda table, _: _check_rank_order(table, "rank", "final", "rank_order"),
    ),
    "raw_rank_order": Check(
        "Raw rank follows Raw",
        "The same for the raw rank and Raw.",
        ("raw_rank", "raw"),
        lambda table, _: _check_rank_order(table, "raw_rank", "raw", "raw_rank_order"),
    ),
    "rank_change": Check(
        "Δrank = raw rank − rank",
        "Exact: ranks are whole numbers.",
        ("rank_change", "raw_rank", "rank"),
        _check_rank_change,
    ),
}


# Reading a pasted table ------------------------------------------------------------

# Header -> column, compared in lower case with `_`/`-` as spaces and any "%" or "(%)"
# removed: the leaderboard CSV's own headers and the short names.
ALIASES = {
    "model": "model",
    "name": "model",
    "n": "n",
    "items": "n",
    "n items": "n",
    "raw": "raw",
    "raw mean": "raw",
    "final": "final",
    "final (sv)": "final",
    "final sv": "final",
    "final mean": "final",
    "delta": "delta",
    "δ": "delta",
    "perfect": "perfect",
    "perfect rate": "perfect",
    "pass": "pass",
    "pass rate": "pass",
    "rank": "rank",
    "rank (overall)": "rank",
    "final rank": "rank",
    "raw rank": "raw_rank",
    "δrank": "rank_change",
    "δ rank": "rank_change",
    "rank change": "rank_change",
}
BLANKS = {"", "-", "–", "—", "n/a", "na", "nan"}
# Up to 6 digits before the point (a mean, a percentage) and 17 after (a double's
# full precision); longer would overflow a float or claim precision no table has.
NUMBER = re.compile(r"[+-]?(?:\d{1,6}(?:\.(\d{0,17}))?|\.(\d{1,17}))")
INTEGER = re.compile(r"([+-]?\d{1,9})(?:\.0*)?")
RATE_READINGS = ("auto", "percent", "fraction")


class UnreadableTable(Exception):
    """The pasted text is not a table the checks can read; `problems` say where."""

    def __init__(self, problems: list[Problem], total: int):
        self.problems = problems
        self.total = total
        super().__init__(f"{total} problem(s) reading the table")


def parse_table(text: str, *, rates: str = "auto") -> SummaryTable:
    """A SummaryTable from CSV or tab-separated text with a header line.

    The delimiter is the header's: a tab, else a comma, else a semicolon. Lines
    starting with `#` before the header are skipped (`manage.py leaderboard --format
    csv` writes the table's title so). Blank cells and dashes are blanks. A number's
    decimals are counted as written; a trailing `%`, or `%` in the header, makes a
    rate column a percentage. `rates` reads unmarked rate columns: "percent",
    "fraction", or "auto" (percentages if any rate is above 1).
    """
    if rates not in RATE_READINGS:
        raise ValueError(f"rates must be one of {', '.join(RATE_READINGS)}")
    problems = Problems()
    header, records = _records(text, problems)
    columns = _header_columns(header, problems)
    _check_shape(header, records, problems)
    if problems:
        raise UnreadableTable(problems.kept, problems.total)
    figures, integers, percent_marked = {}, {}, False
    for key, index in columns.items():
        name = header.cells[index].strip()
        cells = [(line, cells[index].strip()) for line, cells in records]
        if key in FIGURE_LABELS:
            figures[key], marked = _numbers(key, name, cells, problems)
            percent_marked |= marked or (key in RATES and "%" in name)
        elif key in INTEGER_LABELS:
            integers[key] = _integers(key, name, cells, problems)
    if problems:
        raise UnreadableTable(problems.kept, problems.total)
    percent = percent_marked or _rates_read_as_percent(figures, rates)
    model = columns.get("model")
    return SummaryTable(
        models=[
            "" if model is None else unneutralise(cells[model].strip())
            for _, cells in records
        ],
        figures={
            key: Figures(values, decimals, percent and key in RATES)
            for key, (values, decimals) in figures.items()
        },
        integers=integers,
        lines=[line for line, _ in records],
        ignored=[
            cell.strip()
            for index, cell in enumerate(header.cells)
            if index not in columns.values() and cell.strip()
        ],
    )


@dataclass(frozen=True)
class _Header:
    line: int
    cells: list[str]
    delimiter: str


def _records(text: str, problems: Problems) -> tuple[_Header, list]:
    """The header and (line, cells) of each non-blank row after it."""
    lines = text.lstrip("\ufeff").splitlines()
    start = next(
        (i for i, line in enumerate(lines) if line.strip() and line[:1] != "#"), None
    )
    if start is None:
        problems.add(0, "", "paste a table: a header line, then one line per model.")
        raise UnreadableTable(problems.kept, problems.total)
    delimiter = next((d for d in "\t,;" if d in lines[start]), ",")
    # csv's field limit is process-wide (the item importer raises it too): raised
    # here as well, so a long cell is told the same way whatever ran before, by the
    # bound on cells below.
    csv.field_size_limit(2**31 - 1)
    reader = csv.reader(io.StringIO("\n".join(lines[start:])), delimiter=delimiter)
    records = []
    try:
        header = _Header(start + 1, next(reader), delimiter)
        for cells in reader:
            longest = max((len(cell) for cell in cells), default=0)
            if longest > MAX_CELL_CHARS:
                problems.add(
                    start + reader.line_num,
                    "",
                    f"a cell of {longest:,} characters; a summary table's cells "
                    f"hold at most {MAX_CELL_CHARS:,}.",
                )
                raise UnreadableTable(problems.kept, problems.total)
            if any(cell.strip() for cell in cells):
                records.append((start + reader.line_num, cells))
    except csv.Error as error:
        problems.add(start + reader.line_num, "", f"not readable as CSV ({error}).")
        raise UnreadableTable(problems.kept, problems.total) from None
    return header, records


def _check_shape(header: _Header, records: list, problems: Problems) -> None:
    if not records:
        problems.add(header.line, "", "the table has a header but no rows.")
    elif len(records) > MAX_ROWS:
        problems.add(0, "", f"{len(records):,} rows; the check takes {MAX_ROWS:,}.")
        return
    separated = {"\t": "tabs", ",": "commas", ";": "semicolons"}[header.delimiter]
    for line, cells in records:
        if len(cells) != len(header.cells):
            problems.add(
                line,
                "",
                f"{len(cells)} cells where the header has {len(header.cells)} "
                f"(separated by {separated}).",
            )


def _header_key(label: str) -> str:
    text = label.strip().lower().replace("_", " ").replace("-", " ")
    text = text.replace("(%)", "").replace("%", "")
    return " ".join(text.split())


def _header_columns(header: _Header, problems: Problems) -> dict[str, int]:
    """column key -> index in the header; unknown headers are left for `ignored`."""
    columns: dict[str, int] = {}
    for index, label in enumerate(header.cells):
        key = ALIASES.get(_header_key(label))
        if key is None:
            continue
        if key in columns:
            first = header.cells[columns[key]].strip()
            what = "Model" if key == "model" else _label(key)
            problems.add(header.line, label.strip(), f"read as {what}, like “{first}”.")
            continue
        columns[key] = index
    if not set(columns) - {"model"}:
        problems.add(
            header.line,
            "",
            "no column the checks read. Name them model, n, raw, final, delta, "
            "perfect, pass, rank, raw_rank, Δrank (or paste the leaderboard CSV).",
        )
    return columns


def _numbers(key: str, name: str, cells: list, problems: Problems):
    """((values, decimals), whether a cell was written with %) for one column."""
    values = np.full(len(cells), np.nan)
    decimals = np.zeros(len(cells), dtype=int)
    marked = False
    for row, (line, cell) in enumerate(cells):
        if cell.lower() in BLANKS:
            continue
        text = cell.replace("\u2212", "-")
        if text.endswith("%"):
            if key not in RATES:
                problems.add(line, name, f"“{cell[:40]}”: a percentage, not a mean.")
                continue
            text = text[:-1].rstrip()
            marked = True
        match = NUMBER.fullmatch(text)
        if match is None:
            problems.add(line, name, f"“{cell[:40]}” is not a decimal number.")
            continue
        values[row] = float(text)
        decimals[row] = len(match.group(1) or match.group(2) or "")
    return (values, decimals), marked


def _integers(key: str, name: str, cells: list, problems: Problems) -> np.ndarray:
    values = np.full(len(cells), np.nan)
    for row, (line, cell) in enumerate(cells):
        if cell.lower() in BLANKS:
            continue
        # The leaderboard CSV writes Δrank as a signed number ("-2.0").
        match = INTEGER.fullmatch(cell.replace("\u2212", "-"))
        if match is None:
            problems.add(line, name, f"“{cell[:40]}” is not a whole number.")
            continue
        value = int(match.group(1))
        # Counts and ranks start at 1; only Δrank has a sign.
        if key != "rank_change" and value < 1:
            problems.add(line, name, f"{value} is not a positive whole number.")
            continue
        values[row] = value
    return values


def _rates_read_as_percent(figures: dict, rates: str) -> bool:
    """For rate columns written without %: as asked, or — "auto" — percentages
    when any rate is above 1."""
    if rates != "auto":
        return rates == "percent"
    return any(
        np.nanmax(figures[key][0], initial=0) > 1 for key in RATES if key in figures
    )
