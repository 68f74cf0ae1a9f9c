"""The one CSV writer: formula-looking text is neutralised, numbers are not, the
streamed file equals the whole one, and Assay's own export imports back unchanged."""

import csv
import io
from decimal import Decimal

import pytest

from benchmark.csv_writer import (
    CsvWriter,
    csv_lines,
    csv_text,
    neutralise,
    unneutralise,
)


@pytest.mark.parametrize(
    "cell",
    ["=SUM(A1:A9)", "+1+2", "-x", "@cmd", "\tpadded", "\rreturn", "=1", "-", "'=a"],
)
def test_formula_looking_text_gets_an_apostrophe(cell):
    assert neutralise(cell) == "'" + cell
    assert unneutralise(neutralise(cell)) == cell


@pytest.mark.parametrize(
    "cell", [-3, -0.5, Decimal("-1.25"), "-3", "-0.5", "+1e3", ".5", "plain", "", None]
)
def test_numbers_and_plain_text_are_written_as_they_are(cell):
    assert neutralise(cell) == cell
    if isinstance(cell, str):
        assert unneutralise(cell) == cell


def test_unneutralise_takes_off_only_what_neutralise_added():
    assert unneutralise("'plain") == "'plain"
    assert unneutralise("'-3") == "'-3"
    assert unneutralise("''=a") == "'=a"


def test_streamed_lines_make_the_whole_file_and_parse_back():
    header = ["id", "question", "score"]
    rows = [["a", '=HYPERLINK("x")', -1], ["b", "line\nbreak, comma", 2.5]]
    text = csv_text(header, rows)
    assert "".join(csv_lines(header, rows)) == text
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[1] == ["a", '\'=HYPERLINK("x")', "-1"]
    assert parsed[2] == ["b", "line\nbreak, comma", "2.5"]
    stream = io.StringIO()
    writer = CsvWriter(stream, newline="\n")
    assert writer.writerow(["@x", 1]) == "'@x,1\n" == stream.getvalue()
