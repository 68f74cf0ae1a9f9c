"""manage.py check_table FILE prints the page's findings and exits 1 when there are
any, 2 when the table cannot be read."""

import io

import pytest
from django.core.management import CommandError, call_command

from tests.judging.factories import make_items, make_run

CONSISTENT = (
    "model,n,raw,final,delta,perfect,pass,rank,raw_rank,Δrank\n"
    "alpha,7,2.43,2.29,-0.14,57.1%,85.7%,1,1,0\n"
)
GAMMA = "gamma,7,1.35,1.35,0.00,14.3%,42.9%,2,2,0\n"


def run(*args) -> str:
    out = io.StringIO()
    call_command("check_table", *args, stdout=out)
    return out.getvalue()


def write(tmp_path, text: str) -> str:
    path = tmp_path / "table.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_consistent_table_prints_the_checks_run(tmp_path):
    out = run(write(tmp_path, CONSISTENT))
    assert "Checks run: Range, Final ≤ Raw, Delta = Final − Raw" in out
    assert out.rstrip().endswith("No inconsistency found in 1 row.")


def test_findings_are_printed_and_exit_1(tmp_path):
    out = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("check_table", write(tmp_path, CONSISTENT + GAMMA), stdout=out)
    assert caught.value.returncode == 1
    # Raw and Final are both 1.35: two findings in one row.
    assert str(caught.value) == "2 inconsistencies in 1 of 2 rows."
    raw, final = [line for line in out.getvalue().splitlines() if "gamma" in line]
    assert raw.startswith("line 3 · gamma · Attainable with n items (GRIM): Raw Mean =")
    assert "9/7 = 1.2857, 10/7 = 1.4286" in raw
    assert "Final (SV) = 1.35" in final


def test_checks_without_their_columns_are_named(tmp_path):
    out = run(write(tmp_path, "model,raw,final\na,2.5,2.4\n"))
    assert "Not run: Attainable with n items (GRIM) (needs n)" in out


def test_rates_options_reach_the_parser_and_the_bounds(tmp_path):
    path = write(tmp_path, "model,raw,final,perfect,pass\nm,2.60,1.00,0.6,1.0\n")
    with pytest.raises(CommandError):
        run(path)
    assert "No inconsistency" in run(path, "--rates-before-sv")
    # Read as percentages, 0.6% and 1.0% bound Final to at most 1.016.
    assert "No inconsistency" in run(path, "--rates", "percent")


def test_an_unreadable_table_exits_2_naming_line_and_column(tmp_path):
    with pytest.raises(CommandError) as caught:
        run(write(tmp_path, "model,raw\na,2.5\nb,x\n"))
    assert caught.value.returncode == 2
    assert "line 3, raw: “x” is not a decimal number." in str(caught.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "Cannot read"), (b"\xff\xfe model", "is not UTF-8 text.")],
)
def test_a_missing_or_binary_file_is_an_error(tmp_path, content, message):
    path = tmp_path / "table.csv"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CommandError, match=message):
        run(str(path))


def test_reads_the_leaderboard_commands_csv_from_standard_input(benchmark, monkeypatch):
    items = make_items(benchmark, 9)
    make_run(benchmark, items, [3, 2, 2, 1, 0, 3, 3, 2, 1], [False] * 9, model="a")
    make_run(benchmark, items, [1, 2, 0, 1, 0, 3, 3, 2, 1], [True] + [False] * 8)
    csv_out = io.StringIO()
    call_command(
        "leaderboard",
        "--benchmark",
        benchmark.slug,
        "--table",
        "leaderboard",
        "--format",
        "csv",
        "--resamples",
        "100",
        stdout=csv_out,
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(csv_out.getvalue()))
    assert "No inconsistency found in 2 rows." in run("-")
