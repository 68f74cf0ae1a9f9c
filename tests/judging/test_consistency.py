"""The summary-table consistency checks, each alone, with tolerances taken from the
reported decimals; and the parser of pasted tables, whose problems name the line and
the column."""

import csv

import numpy as np
import pytest

from judging.leaderboard.consistency import (
    CHECKS,
    Figures,
    SummaryTable,
    UnreadableTable,
    check_table,
    parse_table,
)
from judging.reporting import scoring


def check(text: str, *, rates: str = "auto", **options):
    return check_table(parse_table(text, rates=rates), **options)


def found(text: str, **options) -> list[tuple[str, str]]:
    """(row's model, check) of each finding."""
    return [(f.model, f.check) for f in check(text, **options).findings]


# Each check alone ------------------------------------------------------------------


def test_final_above_raw_beyond_rounding_is_reported():
    result = check("model,raw,final\nok,2.40,2.40\nbad,2.30,2.40\n")
    assert [(f.model, f.check) for f in result.findings] == [("bad", "final_le_raw")]
    (finding,) = result.findings
    assert finding.where == "line 3"
    assert finding.values == "Final (SV) = 2.40, Raw Mean = 2.30"
    assert "±0.01" in finding.reason


def test_the_tolerance_is_half_a_unit_of_each_reported_digit():
    # The same gap of 0.1: at one decimal both could be 2.35, at two they cannot.
    assert found("model,raw,final\na,2.3,2.4\n") == []
    assert found("model,raw,final\na,2.30,2.40\n") == [("a", "final_le_raw")]
    # Mixed precision: 2.3 stands for [2.25, 2.35], 2.34 for [2.335, 2.345].
    assert found("model,raw,final\na,2.3,2.34\n") == []
    assert found("model,raw,final\na,2.3,2.36\n") == [("a", "final_le_raw")]


def test_delta_must_be_final_minus_raw_within_the_rounding_of_all_three():
    text = "model,raw,final,delta\nok,2.41,2.30,-0.11\nslack,2.41,2.30,-0.12\n"
    # -0.12 is 0.01 off, inside 0.005 × 3 = 0.015.
    assert found(text) == []
    assert found("model,raw,final,delta\nbad,2.41,2.30,-0.21\n") == [("bad", "delta")]
    # The Unicode minus the pages print reads as a minus.
    assert found("model,raw,final,delta\nok,2.41,2.30,\u22120.11\n") == []


def test_perfect_above_pass_is_reported():
    text = "model,perfect,pass\nok,30.0%,60.0%\nbad,60.0%,30.0%\n"
    assert found(text) == [("bad", "perfect_le_pass")]


def test_final_is_bounded_by_perfect_and_pass():
    # 40% at 3 and 50% more at 2: the mean is at least 0.4·3 + 0.5·2 = 2.2 and at
    # most 2.2 + 0.1·1 = 2.3.
    header = "model,final,perfect,pass\n"
    assert found(header + "low,2.20,40.0%,90.0%\nhigh,2.30,40.0%,90.0%\n") == []
    result = check(header + "below,2.10,40.0%,90.0%\nabove,2.40,40.0%,90.0%\n")
    assert [(f.model, f.check) for f in result.findings] == [
        ("below", "bounds"),
        ("above", "bounds"),
    ]
    below, above = result.findings
    assert "3·Perfect + 2·(Pass − Perfect) = 2.20" in below.reason
    assert "+ (1 − Pass) = 2.30" in above.reason


def test_rates_counted_before_sv_bound_raw_instead_of_final():
    text = "model,raw,final,perfect,pass\nm,2.60,1.00,60.0%,100.0%\n"
    assert found(text) == [("m", "bounds")]
    assert found(text, rates_after_sv=False) == []


def test_values_out_of_range_are_reported():
    text = "model,raw,pass\nok,3.00,100.0%\nraw,3.20,50.0%\nrate,2.00,120.0%\n"
    assert found(text) == [("raw", "range"), ("rate", "range")]


def test_ranks_must_follow_final_with_ties_allowed_within_rounding():
    header = "model,final,rank\n"
    # Equal as reported: either order, or a shared rank, is possible.
    assert found(header + "a,2.10,1\nb,2.10,2\n") == []
    assert found(header + "a,2.10,1\nb,2.10,1\n") == []
    assert found(header + "a,2.10,1\nb,2.11,2\n") == []  # both may be 2.105
    result = check(header + "a,2.10,1\nb,2.30,2\n")
    assert [(f.model, f.check) for f in result.findings] == [("a", "rank_order")]
    assert "Ranked above b (line 3: Rank = 2, Final (SV) = 2.30)" in (
        result.findings[0].reason
    )
    assert found(header + "a,2.10,1\nb,2.30,1\n") == [("a", "rank_order")]


def test_a_row_out_of_order_with_many_is_one_finding_naming_a_few():
    rows = "".join(f"m{i},{i / 10:.2f},{i + 1}\n" for i in range(10))
    findings = check("model,final,rank\n" + rows).findings
    assert [f.model for f in findings] == [f"m{i}" for i in range(9)]
    assert findings[0].reason.startswith("Ranked above m1 (line 3: Rank = 2, ")
    assert findings[0].reason.endswith("; and 6 more, whose Final (SV) is higher.")


def test_a_few_rows_of_a_longer_leaderboard_pass_the_rank_checks():
    text = (
        "model,final,rank,raw,raw_rank\na,2.9,3,2.9,2\nb,2.5,7,2.8,5\nc,1.0,10,1.1,9\n"
    )
    assert found(text) == []


def test_raw_rank_must_follow_raw():
    text = "model,raw,raw_rank\na,2.10,1\nb,2.30,2\n"
    assert found(text) == [("a", "raw_rank_order")]


def test_rank_change_is_raw_rank_minus_rank_exactly():
    text = "model,rank,raw_rank,Δrank\nup,1,2,+1\nsame,2,1,-1\nbad,3,3,+1\n"
    assert found(text) == [("bad", "rank_change")]


# Granularity (GRIM) ----------------------------------------------------------------


def test_a_mean_of_2_35_over_7_items_is_impossible():
    (finding,) = check("model,n,raw\nm,7,2.35\n").findings
    assert finding.check == "grim"
    assert "16/7 = 2.2857, 17/7 = 2.4286" in finding.reason
    # 16/7 = 2.285714… is written 2.29, or 2.286 with three decimals; not 2.285.
    assert found("model,n,raw\nm,7,2.29\n") == []
    assert found("model,n,raw\nm,7,2.286\n") == []
    assert found("model,n,raw\nm,7,2.285\n") == [("m", "grim")]


def test_grim_reads_every_mean_rate_and_delta():
    text = "model,n,final,delta,perfect,pass\nm,7,2.10,-0.25,40.0%,90.0%\n"
    values = [f.values.split(",")[0] for f in check(text).findings if f.check == "grim"]
    assert values == [
        "Final (SV) = 2.10",
        "Delta = -0.25",
        "Perfect = 40.0%",
        "Pass = 90.0%",
    ]
    assert found("model,n,perfect,pass\nm,7,42.9%,85.7%\n") == []


def test_grim_passes_anything_once_1_over_n_is_finer_than_the_rounding():
    assert found("model,n,raw\nm,200,2.35\n") == []


def test_grim_accepts_either_rounding_of_an_exact_half():
    # 1/8 = 0.125 is 0.12 rounded half to even, 0.13 rounded half up.
    assert found("model,n,perfect\na,8,0.12\nb,8,0.13\n", rates="fraction") == []
    assert found("model,n,perfect\na,8,0.11\n", rates="fraction") == [("a", "grim")]


def test_grim_keeps_counts_within_the_score_range():
    # 3.01 rounds from 3.005 ≤ x, which needs a total above 3n.
    assert ("m", "grim") in found("model,n,raw\nm,7,3.01\n")
    assert found("model,n,raw\nm,7,3.00\n") == []


# What runs, and tables Assay computes ----------------------------------------------


def test_checks_needing_absent_columns_are_skipped_and_named():
    result = check("model,raw,final,SV rate\na,2.5,2.4,3.0\n")
    assert result.run == ["range", "final_le_raw"]
    skipped = dict(result.skipped)
    assert skipped["delta"] == ["Delta"]
    assert skipped["grim"] == ["n"]
    assert skipped["bounds"] == ["Perfect", "Pass"]
    assert result.ignored == ["SV rate"]
    assert set(result.run) | set(skipped) == set(CHECKS)


def test_a_blank_cell_skips_that_row_only():
    text = "model,n,raw\na,7,–\nb,,2.35\nc,7,2.35\n"
    assert found(text) == [("c", "grim")]


def exact(values) -> Figures:
    """Values at full double precision (12 decimals stand for exact)."""
    values = np.asarray(values, dtype=float)
    return Figures(values, np.full(values.shape, 12))


def rounded(values, decimals: int, *, percent: bool = False) -> Figures:
    scale = 100 if percent else 1
    values = np.round(np.asarray(values, dtype=float) * scale, decimals)
    return Figures(values, np.full(values.shape, decimals), percent)


def scored_table(rng, n_models: int, n_items: int, round_to=None) -> SummaryTable:
    """Rows computed by judging.reporting.scoring from random 0–3 scores and SV
    flags, exact or rounded to (mean decimals, rate decimals as percentages)."""
    metrics = []
    for _ in range(n_models):
        raw = rng.integers(0, 4, n_items).astype(float)
        sv = (rng.random(n_items) < rng.uniform(0, 0.3)).astype(float)
        metrics.append(scoring.run_metrics(raw, sv))
    names = [f"m{i}" for i in range(n_models)]
    board = scoring.leaderboard(
        names, [m.raw_mean for m in metrics], [m.final_mean for m in metrics]
    )
    order = [int(row.key[1:]) for row in board]
    columns = {
        key: [getattr(metrics[i], attribute) for i in order]
        for key, attribute in (
            ("raw", "raw_mean"),
            ("final", "final_mean"),
            ("delta", "delta"),
            ("perfect", "perfect_rate"),
            ("pass", "pass_rate"),
        )
    }
    if round_to is None:
        figures = {key: exact(values) for key, values in columns.items()}
    else:
        means, rates = round_to
        figures = {
            key: rounded(values, rates, percent=True)
            if key in ("perfect", "pass")
            else rounded(values, means)
            for key, values in columns.items()
        }
    return SummaryTable(
        models=[board_row.key for board_row in board],
        figures=figures,
        integers={
            "n": np.full(n_models, float(n_items)),
            "rank": np.array([row.final_rank for row in board], dtype=float),
            "raw_rank": np.array([row.raw_rank for row in board], dtype=float),
            "rank_change": np.array([row.rank_change for row in board], dtype=float),
        },
    )


@pytest.mark.parametrize("round_to", [None, (3, 1), (2, 0), (6, 4), (1, 2)])
def test_tables_computed_from_scores_pass_every_check(round_to):
    rng = np.random.default_rng(17)
    for n_items in (1, 2, 3, 7, 11, 40, 333):
        table = scored_table(rng, 8, n_items, round_to)
        result = check_table(table)
        assert result.findings == [], (n_items, [str(f) for f in result.findings])
        assert result.run == list(CHECKS)


# Reading a pasted table ------------------------------------------------------------

LEADERBOARD_CSV = (
    "Rank,Model,Category,Final (SV),±95% CI,Items,Raw Mean,Delta,Perfect (%),"
    "Pass (%),SV rate (%),Raw rank,Δrank,Empty/invalid,Pending\r\n"
    "1,alpha,closed,2.285714,0.2,7,2.428571,-0.142857,57.1429,85.7143,14.2857,"
    "1,0.0,0,0\r\n"
    "2,beta,open,1.5,0.3,8,1.5,0.0,25.0,50.0,0.0,2,0.0,0,0\r\n"
)


def test_the_leaderboard_csv_reads_with_its_own_headers():
    table = parse_table("# Leaderboard (zh)\n" + LEADERBOARD_CSV)
    assert table.models == ["alpha", "beta"]
    assert table.lines == [3, 4]
    assert set(table.figures) == {"raw", "final", "delta", "perfect", "pass"}
    assert set(table.integers) == {"n", "rank", "raw_rank", "rank_change"}
    assert table.figures["perfect"].percent
    assert table.figures["perfect"].quantity[0] == pytest.approx(4 / 7, abs=1e-6)
    assert table.figures["final"].decimals.tolist() == [6, 1]
    assert table.ignored == [
        "Category",
        "±95% CI",
        "SV rate (%)",
        "Empty/invalid",
        "Pending",
    ]
    assert check_table(table).findings == []


def test_tab_separated_text_with_aliases_reads():
    text = (
        "\ufeffmodel\tn\traw\tfinal\tdelta\tperfect\tpass\trank\traw_rank\trank_change\n"
        "'=x\t7\t2.43\t2.29\t−0.14\t57.1%\t85.7%\t1\t1\t+0\n"
    )
    table = parse_table(text)
    assert table.models == ["=x"]  # the CSV writer's apostrophe comes off
    assert check_table(table).findings == []


def test_a_double_written_in_full_reads_with_its_decimals():
    table = parse_table(f"model,n,raw\na,7,{16 / 7!r}\n")
    assert table.figures["raw"].decimals.tolist() == [16]
    assert check_table(table).findings == []


def test_whole_numbers_written_with_a_zero_fraction_read_as_whole():
    table = parse_table("model,n,rank,raw_rank,Δrank\na,7.0,2,1,-1.0\n")
    assert table.integers["n"].tolist() == [7]
    assert table.integers["rank_change"].tolist() == [-1]


def test_unmarked_rates_are_percentages_when_any_is_above_one():
    auto = parse_table("model,perfect,pass\na,0.5,0.9\nb,20,40\n")
    assert auto.figures["pass"].percent
    fractions = parse_table("model,perfect,pass\na,0.5,0.9\n")
    assert not fractions.figures["pass"].percent
    asked = parse_table("model,perfect,pass\na,0.5,0.9\n", rates="percent")
    assert asked.figures["pass"].quantity[0] == pytest.approx(0.009)


def problems(text: str, **options) -> list[str]:
    with pytest.raises(UnreadableTable) as caught:
        parse_table(text, **options)
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "file: paste a table"),
        ("\n\n# only a title\n", "file: paste a table"),
        ("model,raw,final\n", "line 1: the table has a header but no rows."),
        ("model,score\na,2\n", "line 1: no column the checks read"),
        ("model,raw\na,2.5\nb,2.5,2.4\n", "line 3: 3 cells where the header has 2"),
        ("model\traw\na,2.5\n", "line 2: 1 cells where the header has 2"),
        ("model,raw\na,2.5\nb,2,5\n", "(separated by commas)"),
        ("model,raw\na,2.5\nb,2.5.1\n", "line 3, raw: “2.5.1” is not a decimal"),
        ("model,Final (SV)\na,1e-3\n", "line 2, Final (SV): “1e-3” is not a decimal"),
        ("model,raw\na,57%\n", "line 2, raw: “57%”: a percentage, not a mean."),
        ("model,n,raw\na,7.5,2.5\n", "line 2, n: “7.5” is not a whole number."),
        ("model,n,raw\na,0,2.5\n", "line 2, n: 0 is not a positive whole number."),
        ("model,rank,final\na,-1,2.5\n", "line 2, rank: -1 is not a positive whole"),
        ("model,raw,Raw Mean\na,2.5,2.5\n", "line 1, Raw Mean: read as Raw Mean, like"),
        ("model,n\na,99999999999\n", "“99999999999” is not a whole number."),
        ("model,raw\na,1" + "0" * 400 + "\n", "line 2, raw: “1000000000"),
        ("model,raw\na,0." + "3" * 18 + "\n", "is not a decimal number."),
    ],
)
def test_unreadable_input_names_the_line_and_column(text, expected):
    assert any(expected in problem for problem in problems(text)), problems(text)


def test_every_problem_is_listed_not_only_the_first():
    found_problems = problems("model,n,raw\na,x,2.5\nb,7,y\n")
    assert found_problems == [
        "line 2, n: “x” is not a whole number.",
        "line 3, raw: “y” is not a decimal number.",
    ]


def test_a_table_longer_than_the_limit_is_refused():
    text = "model,raw\n" + "a,2.5\n" * 1001
    assert problems(text) == ["file: 1,001 rows; the check takes 1,000."]


def test_a_cell_beyond_the_csv_field_limit_is_a_problem_not_a_crash():
    text = 'model,raw\n"' + "a" * 200_000 + '",2.5\n'
    (problem,) = problems(text)
    assert problem.startswith("line 2: a cell of 200,000 characters")
    # The same after the item importer has raised csv's process-wide field limit.
    csv.field_size_limit(2**31 - 1)
    try:
        (again,) = problems(text)
    finally:
        csv.field_size_limit(131_072)
    assert again == problem
