"""The one CSV writer: every CSV file Assay writes (item exports, label exports,
report tables) goes through it, so each opens safely in a spreadsheet.

A text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a
formula to Excel and LibreOffice (CSV injection, OWASP). Such a cell is written with
a leading apostrophe, which spreadsheets read as "text". Numbers — int, float,
Decimal, and text that reads as a number such as "-3" or "-0.5" — are written as
they are. A cell that already starts with apostrophes before such a character gets
one more, so `unneutralise` (used by the item import) gives back exactly what was
written: an export imports again unchanged.
"""

import csv
import re
from collections.abc import Iterable, Iterator

FORMULA = re.compile(r"'*[=+\-@\t\r]")
FORMULA_FIRST = frozenset("'=+-@\t\r")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise(value):
    """The cell as written: formula-looking text behind an apostrophe."""
    if (
        isinstance(value, str)
        and value[:1] in FORMULA_FIRST
        and FORMULA.match(value)
        and not NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def unneutralise(text: str) -> str:
    """The cell as it was before `neutralise` (for reading Assay's own files)."""
    if text[:1] == "'" and neutralise(text[1:]) == text:
        return text[1:]
    return text


class CsvWriter:
    """`writerow` neutralises each cell, writes the line to `stream` (if any) and
    returns it."""

    def __init__(self, stream=None, *, newline: str = "\r\n"):
        self._stream = stream
        self._writer = csv.writer(self, lineterminator=newline)

    def write(self, line: str) -> str:
        if self._stream is not None:
            self._stream.write(line)
        return line

    def writerow(self, row: Iterable) -> str:
        return self._writer.writerow([neutralise(cell) for cell in row])


def csv_lines(
    header: Iterable | None, rows: Iterable[Iterable], *, newline: str = "\r\n"
) -> Iterator[str]:
    """The file line by line (for streaming responses and large exports)."""
    writer = CsvWriter(newline=newline)
    if header is not None:
        yield writer.writerow(header)
    for row in rows:
        yield writer.writerow(row)


def csv_text(
    header: Iterable | None, rows: Iterable[Iterable], *, newline: str = "\r\n"
) -> str:
    """The whole file as one string."""
    return "".join(csv_lines(header, rows, newline=newline))
