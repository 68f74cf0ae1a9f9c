"""The funnel table, reject reasons and release composition (pure), and the funnel
chart."""

from collections import Counter

import numpy as np
import pytest

from construction.figures import funnel_figure
from construction.funnel import (
    ALL,
    NO_LABEL,
    FunnelRow,
    composition,
    funnel,
    funnel_cells,
    pivot,
    reason_pattern,
    top_reasons,
)
from judging.reporting.figures import write

KINDS = ["gbt_standard", "product_record"]


def test_rows_per_stage_and_kind_with_totals():
    counts = {
        ("generation", "gbt_standard", "pass"): 6,
        ("generation", "product_record", "pass"): 4,
        ("dedup", "gbt_standard", "pass"): 5,
        ("dedup", "gbt_standard", "reject"): 1,
        ("dedup", "product_record", "pass"): 2,
        ("dedup", "product_record", "reject"): 2,
        ("quality", "gbt_standard", "pass"): 3,
        ("quality", "gbt_standard", "pending"): 1,
        ("quality", "gbt_standard", "reject"): 1,
        ("deep", "product_record", "refine"): 2,
        ("deep", "product_record", "pending"): 1,
    }
    rows = funnel(counts, ["generation", "dedup", "quality", "search", "deep"], KINDS)
    assert [(r.stage, r.group) for r in rows] == [
        (stage, kind)
        for stage in ("generation", "dedup", "quality", "search", "deep")
        for kind in (*KINDS, ALL)
    ]
    dedup_all = rows[5]
    assert dedup_all == FunnelRow("dedup", ALL, 10, 7, 3, 0, True)
    assert dedup_all.rejected_share == 0.3
    assert rows[6] == FunnelRow("quality", "gbt_standard", 5, 3, 1, 1, True)
    assert rows[7] == FunnelRow("quality", "product_record", 0, 0, 0, 0, True)
    assert [row.ran for row in rows[9:12]] == [False, False, False]
    # A refined candidate comes out of deep verification with its new answer.
    assert rows[13] == FunnelRow("deep", "product_record", 3, 2, 0, 1, True)
    assert funnel_cells(ALL, rows[5]) == [
        "dedup",
        ALL,
        ALL,
        10,
        7,
        3,
        0,
        30.0,
        "ran",
    ]


def test_a_stage_that_has_not_run_is_shown_as_not_run():
    rows = funnel({("dedup", "gbt_standard", "pass"): 1}, ["dedup", "deep"], KINDS)
    assert [row.ran for row in rows] == [True, True, True, False, False, False]
    assert rows[-1] == FunnelRow("deep", ALL, 0, 0, 0, 0, False)
    assert funnel_cells(ALL, rows[-1])[-2:] == ["", "not run"]
    # A kind without candidates in a stage that ran has no share.
    assert rows[1].entered == 0 and rows[1].rejected_share is None
    assert [(stage, ran, len(group)) for stage, ran, group in pivot(rows)] == [
        ("dedup", True, 3),
        ("deep", False, 3),
    ]


def test_funnel_matches_a_direct_count_on_random_ledgers():
    rng = np.random.default_rng(7)
    stages = ["generation", "dedup", "quality", "post"]
    outcomes = ["pass", "reject", "pending", "refine"]
    labels = ["a", "b", "c"]
    decided = [
        (rng.choice(stages), rng.choice(labels), rng.choice(outcomes))
        for _ in range(500)
    ]
    rows = funnel(Counter(decided), stages, labels)
    for row in rows:
        mine = [o for s, g, o in decided if s == row.stage and row.group in (g, ALL)]
        assert row.entered == len(mine)
        assert row.passed == mine.count("pass") + mine.count("refine")
        assert row.rejected == mine.count("reject")
        assert row.pending == mine.count("pending")


def test_reasons_are_counted_with_numbers_as_n():
    assert (
        reason_pattern("Duplicate of candidate 12 (similarity 0.93)")
        == "Duplicate of candidate N (similarity N)"
    )
    assert reason_pattern("  ") == "(no reason given)"
    stages = ["dedup", "dedup", "dedup", "quality", "quality", "quality", "quality"]
    reasons = [
        "Exact duplicate of candidate 3",
        "Duplicate of candidate 4 (similarity 0.91)",
        "Exact duplicate of candidate 9",
        "答案无法从来源得出",
        "问题缺少约束条件",
        "答案无法从来源得出",
        "问题缺少约束条件",
    ]
    assert top_reasons(stages, reasons, k=5) == {
        "dedup": [
            ("Exact duplicate of candidate N", 2),
            ("Duplicate of candidate N (similarity N)", 1),
        ],
        # Ties: alphabetical.
        "quality": sorted([("答案无法从来源得出", 2), ("问题缺少约束条件", 2)]),
    }
    assert top_reasons(stages, reasons, k=1)["dedup"] == [
        ("Exact duplicate of candidate N", 2)
    ]


def test_composition_of_a_release():
    released = composition(
        ["GB/T standard", "GB/T standard", "GB/T standard", "Product record"],
        ["electrical", "", "electrical", "machinery"],
        ["GB/T standard", "Product record", "Other"],
    )
    assert released.total == 4
    assert [(s.name, s.count, s.share) for s in released.kinds] == [
        ("GB/T standard", 3, 0.75),
        ("Product record", 1, 0.25),
        ("Other", 0, 0.0),
    ]
    assert [(s.name, s.count, s.percent) for s in released.labels] == [
        ("electrical", 2, 50.0),
        (NO_LABEL, 1, 25.0),
        ("machinery", 1, 25.0),
    ]
    assert composition([], [], ["GB/T standard"]).kinds[0].share == 0.0


@pytest.mark.parametrize("entered", [[10, 8, 0], [0, 0, 0]])
def test_the_chart_draws_every_stage(entered):
    figure = funnel_figure(
        ["Generation", "Deduplication", "Deep verification"],
        ["GB/T standard", "Product record"],
        entered,
        [[6, 2], [5, 1], [0, 0]] if entered[0] else [[0, 0]] * 3,
        [bool(entered[0]), bool(entered[0]), False],
    )
    notes = [text.get_text() for text in figure.axes[0].texts]
    assert notes[2] == "not run"
    if entered[0]:
        assert notes[:2] == ["10 → 8  (−20.0 %)", "8 → 6  (−25.0 %)"]
    ticks = [tick.get_text() for tick in figure.axes[0].get_yticklabels()]
    assert ticks == ["Generation", "Deduplication", "Deep verification"]
    assert write(figure, "svg").startswith(b"<?xml")
