"""The funnel table from decision counts (pure)."""

from construction.funnel import ALL, FunnelRow, funnel, funnel_cells

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
    assert [(r.stage, r.source_kind) for r in rows] == [
        (stage, kind)
        for stage in ("generation", "dedup", "quality", "deep")
        for kind in (*KINDS, ALL)
    ]
    dedup_all = rows[5]
    assert dedup_all == FunnelRow("dedup", ALL, 10, 7, 3, 0)
    assert dedup_all.rejected_share == 0.3
    assert rows[6] == FunnelRow("quality", "gbt_standard", 5, 3, 1, 1)
    assert rows[7] == FunnelRow("quality", "product_record", 0, 0, 0, 0)
    # A refined candidate comes out of deep verification with its new answer.
    assert rows[10] == FunnelRow("deep", "product_record", 3, 2, 0, 1)
    assert funnel_cells(rows[5]) == ["dedup", ALL, 10, 7, 3, 0, 30.0]


def test_a_kind_without_candidates_has_no_share():
    rows = funnel({("dedup", "gbt_standard", "pass"): 1}, ["dedup"], KINDS)
    assert rows[1].entered == 0 and rows[1].rejected_share is None
    assert funnel_cells(rows[1])[-1] == ""
