"""Reading an item file: bytes to lines (bad UTF-8 is a problem, not an error),
CSV rows or JSON objects, the layout, and each row handed to the validator."""

import codecs
import csv
import itertools
import json
import sys
from collections.abc import Iterable, Iterator

from django.utils.translation import gettext_noop

from benchmark.csv_writer import unneutralise
from benchmark.importing.records import (
    GENERIC_JSONL,
    INDUSTRYBENCH,
    ItemRecord,
)
from benchmark.importing.validating import Validator
from benchmark.notes import Note, noop
from benchmark.validation import (
    Problems,
    json_objects,
)

# ---------------------------------------------------------------------------- reading


def _decoded_lines(source: Iterable[bytes], problems: Problems) -> Iterator[str]:
    """Yield each line as text; invalid UTF-8 becomes a problem, not an exception.

    Lines split on b"\\n", which never occurs inside a UTF-8 sequence, so decoding line
    by line is exact and lets the error name its line.
    """
    for number, raw in enumerate(source, start=1):
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.add(
                number,
                "file",
                Note(
                    gettext_noop("invalid UTF-8 at byte %(byte)s"), byte=error.start + 1
                ),
            )
            yield raw.decode("utf-8", errors="replace")


class _LineCounter:
    """Wraps the decoded lines and remembers how many have been read."""

    def __init__(self, lines: Iterator[str]):
        self._lines = lines
        self.count = 0

    def __iter__(self):
        for line in self._lines:
            self.count += 1
            yield line


def _csv_rows(
    lines: _LineCounter, problems: Problems
) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.reader(iter(lines))
    header: list[str] = []
    try:
        while not header:
            header = next(reader)
    except StopIteration:
        pass
    except csv.Error as error:
        problems.add(
            lines.count,
            "header",
            Note(gettext_noop("unreadable CSV header (%(error)s)"), error=str(error)),
        )

    def rows():
        while True:
            start = lines.count + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                problems.add(
                    start,
                    "row",
                    Note(gettext_noop("unreadable CSV (%(error)s)"), error=str(error)),
                )
                continue
            if any("\x00" in cell for cell in row):
                problems.add(
                    start,
                    "row",
                    Note(gettext_noop("contains a NUL character (no field can)")),
                )
                continue
            if any(cell.strip() for cell in row):
                # Assay's own exports put an apostrophe before formula-looking text
                # (benchmark.csv_writer); reading them back takes exactly that off.
                yield start, [unneutralise(cell) for cell in row]

    return [name.strip() for name in header], rows()


def _detect_layout(first_line: str, requested: str) -> tuple[str, bool]:
    """Return (layout, is_json) from the first non-empty line and --format."""
    is_json = first_line.lstrip().startswith("{")
    if requested == GENERIC_JSONL:
        return GENERIC_JSONL, True
    if requested == INDUSTRYBENCH or not is_json:
        return INDUSTRYBENCH, is_json
    try:
        value = json.loads(first_line)
    except (ValueError, RecursionError):
        # Not readable JSON: reading the file as JSON Lines reports why, by line.
        return GENERIC_JSONL, True
    if isinstance(value, dict) and "renderings" in value:
        return GENERIC_JSONL, True
    return INDUSTRYBENCH, True


def read_records(
    source: Iterable[bytes], requested: str, validator: Validator, summary
) -> Iterator[ItemRecord]:
    problems = validator.problems
    lines = _decoded_lines(source, problems)
    leading = []
    for line in lines:
        leading.append(line)
        if line.strip():
            break
    if not leading or not leading[-1].strip():
        problems.add(1, "file", Note(gettext_noop("the file is empty")))
        return
    layout, is_json = _detect_layout(leading[-1], requested)
    summary.layout = (
        layout
        if layout == GENERIC_JSONL
        else f"{layout} {'JSONL' if is_json else 'CSV'}"
    )
    all_lines = itertools.chain(leading, lines)
    if not is_json:
        header, rows = _csv_rows(_LineCounter(all_lines), problems)
        before = problems.total
        summary.ignored_fields = validator.industrybench_columns(header)
        if problems.total > before:
            return
        columns = tuple(header)
        for line, cells in rows:
            if len(cells) != len(header):
                problems.add(
                    line,
                    "row",
                    Note(
                        noop.ngettext(
                            "%(count)s field where the header has %(columns)s",
                            "%(count)s fields where the header has %(columns)s",
                        ),
                        count=len(cells),
                        columns=len(header),
                    ),
                )
                continue
            yield validator.industrybench_row(
                line, dict(zip(header, cells, strict=True)), columns
            )
        return
    for line, value in json_objects(all_lines, problems):
        if layout == GENERIC_JSONL:
            yield validator.generic_row(line, value)
            continue
        columns = list(value)
        before = problems.total
        ignored = validator.industrybench_columns(
            columns, line=line, missing=gettext_noop("missing field")
        )
        if problems.total > before:
            continue
        summary.ignored_fields = sorted(set(summary.ignored_fields) | set(ignored))
        yield validator.industrybench_row(line, value, tuple(columns))
