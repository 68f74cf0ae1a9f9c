"""Assay's own leaderboard passes the consistency checks: at full precision, as its
CSV download, and as the page shows it; a wrong cell put into its CSV is found."""

import csv
import io

import numpy as np
import pytest

from benchmark.csv_writer import csv_text
from judging.evaluation.models import Response
from judging.leaderboard.building import build_report
from judging.leaderboard.consistency import (
    CHECKS,
    Figures,
    SummaryTable,
    check_table,
    parse_table,
)
from tests.judging.factories import make_items, make_run

N_ITEMS = 41


@pytest.fixture
def leaderboard(benchmark):
    """Runs of random 0–3 scores with SV flags, pending and empty answers, runs over
    fewer items, a thinking run and an exact tie."""
    items = make_items(benchmark, N_ITEMS)
    rng = np.random.default_rng(17)
    for model, n_items, thinking in (
        ("alpha", N_ITEMS, False),
        ("alpha", N_ITEMS, True),
        ("beta", N_ITEMS, False),
        ("gamma", 29, False),
        ("delta", 13, False),
        ("epsilon", N_ITEMS, False),
    ):
        raw = rng.choice(4, n_items, p=rng.dirichlet(np.ones(4))).tolist()
        sv = (rng.random(n_items) < rng.uniform(0, 0.3)).tolist()
        # Pending: a missing rubric verdict (beside no violation, and beside an SV
        # flag, which alone would give 0: the item is still pending) or a failed
        # SV check.
        first, second, third = rng.choice(n_items, 3, replace=False)
        raw[first], sv[first] = None, False
        raw[third], sv[third] = None, True
        sv[second] = None
        statuses = [Response.Status.ANSWERED] * n_items
        statuses[int(rng.integers(n_items))] = Response.Status.EMPTY
        run_items = items[:n_items]
        make_run(
            benchmark,
            run_items,
            raw,
            sv,
            model=model,
            thinking=thinking,
            statuses=statuses,
        )
        if model == "beta":  # an exact tie with beta
            make_run(benchmark, run_items, raw, sv, model="zeta", statuses=statuses)
    return build_report(benchmark, resamples=200).tables["leaderboard"]


def assert_consistent(table: SummaryTable):
    result = check_table(table)
    assert result.findings == [], [str(finding) for finding in result.findings]
    assert result.run == list(CHECKS)


def test_the_leaderboard_at_full_precision_is_consistent(leaderboard):
    keys = [column.key for column in leaderboard.columns]
    column = {
        key: np.array([row[keys.index(key)] for row in leaderboard.rows], dtype=float)
        for key in ("final", "items", "raw", "delta", "perfect", "pass")
        + ("rank", "raw_rank", "rank_change")
    }
    # Doubles carry ~16 significant digits: 12 decimals stand for "exact".
    figures = {
        key: Figures(column[key], np.full(len(leaderboard.rows), 12))
        for key in ("raw", "final", "delta", "perfect", "pass")
    }
    table = SummaryTable(
        models=[row[keys.index("model")] for row in leaderboard.rows],
        figures=figures,
        integers={
            "n": column["items"],
            "rank": column["rank"],
            "raw_rank": column["raw_rank"],
            "rank_change": column["rank_change"],
        },
    )
    assert len(table) == 7
    assert_consistent(table)


def test_the_leaderboard_csv_is_consistent(leaderboard):
    assert_consistent(parse_table(leaderboard.to_csv()))


def test_the_leaderboard_as_displayed_is_consistent(leaderboard):
    """Rounded as the page shows it (3 decimals, rates to 0.1%), tab-separated as
    a browser copies an HTML table."""
    lines = ["\t".join(column.label for column in leaderboard.columns)]
    lines += ["\t".join(row) for row in leaderboard.formatted_rows()]
    table = parse_table("\n".join(lines))
    assert table.figures["final"].decimals.tolist() == [3] * 7
    assert table.figures["pass"].percent
    assert_consistent(table)


def edit_csv(table, edits) -> str:
    """The table's CSV with cells replaced: {(row, column label): text}."""
    header, *rows = csv.reader(io.StringIO(table.to_csv()))
    for (row, label), text in edits.items():
        rows[row][header.index(label)] = text
    return csv_text(header, rows)


def impossible_mean(row: list[str], header: list[str]) -> str:
    """Halfway between two attainable means k/n, to six decimals: no k/n rounds
    to it."""
    n = int(row[header.index("Items")])
    k = round(float(row[header.index("Raw Mean")]) * n)
    return f"{(k - 0.5) / n:.6f}"


@pytest.mark.parametrize(
    ("edits", "check"),
    [
        ({(3, "Final (SV)"): "2.99", (3, "Raw Mean"): "2.5"}, "final_le_raw"),
        ({(2, "Delta"): "+0.9"}, "delta"),
        ({(4, "Perfect (%)"): "99.0", (4, "Pass (%)"): "98.0"}, "perfect_le_pass"),
        ({(1, "Perfect (%)"): "100.0", (1, "Pass (%)"): "100.0"}, "bounds"),
        ({(0, "Raw Mean"): "3.5"}, "range"),
        ({(6, "Rank"): "1", (6, "Final (SV)"): "0.0"}, "rank_order"),
        ({(5, "Raw rank"): "1", (5, "Raw Mean"): "0.0"}, "raw_rank_order"),
        ({(6, "Δrank"): "+9.0"}, "rank_change"),
    ],
)
def test_a_wrong_cell_in_the_csv_is_found(leaderboard, edits, check):
    result = check_table(parse_table(edit_csv(leaderboard, edits)))
    (row,) = {row for row, _ in edits}
    assert check in {f.check for f in result.findings if f.row == row}, [
        str(f) for f in result.findings
    ]


def test_an_impossible_mean_in_the_csv_is_found(leaderboard):
    header, *rows = csv.reader(io.StringIO(leaderboard.to_csv()))
    text = edit_csv(leaderboard, {(2, "Raw Mean"): impossible_mean(rows[2], header)})
    findings = check_table(parse_table(text)).findings
    assert [(f.row, f.check) for f in findings if f.check == "grim"] == [(2, "grim")]
