"""Reports read from the database agree with the pure scoring functions."""

import numpy as np
import pytest
from django.utils import timezone

from benchmark.models import Item
from judging.evaluation.models import Judgment, Response
from judging.evaluation.scores import load_scores
from judging.leaderboard.building import build_report
from judging.reporting import scoring
from tests.judging.factories import make_items, make_run

NAN = float("nan")


@pytest.fixture
def items(benchmark):
    return make_items(benchmark, 40)


def column(table, label):
    return [c.label for c in table.columns].index(label)


def test_leaderboard_rows_match_scoring_on_the_same_arrays(benchmark, items):
    rng = np.random.default_rng(0)
    arrays = {}
    for name, skill in (("alpha", 0.7), ("beta", 0.5), ("gamma", 0.3)):
        raw = rng.choice(4, 40, p=[0.1, 0.1, 0.8 - skill, skill])
        sv = (rng.random(40) < 0.1) & (raw >= 2)
        make_run(benchmark, items, raw.tolist(), sv.tolist(), model=name)
        arrays[name] = scoring.run_metrics(raw, sv.astype(float))
    report = build_report(benchmark, resamples=500)
    table = report.tables["leaderboard"]
    finals = [row[column(table, "Final (SV)")] for row in table.rows]
    assert finals == sorted(finals, reverse=True)
    for row in table.rows:
        expected = arrays[row[column(table, "Model")]]
        assert row[column(table, "Final (SV)")] == pytest.approx(expected.final_mean)
        assert row[column(table, "Raw Mean")] == pytest.approx(expected.raw_mean)
        assert row[column(table, "SV rate")] == pytest.approx(expected.sv_rate)
        assert row[column(table, "Perfect")] == pytest.approx(expected.perfect_rate)


def test_pending_and_waived_items_are_reported_not_dropped(benchmark, items):
    raw = [3] * 40
    raw[0] = None  # judge unparseable
    sv = [False] * 40
    sv[1] = None  # SV check failed: never read as "no violation"
    run = make_run(benchmark, items, raw, sv)
    Response.objects.filter(run=run, item=items[2]).update(
        status=Response.Status.EMPTY, text=""
    )
    report = build_report(benchmark, resamples=200)
    (metrics,) = report.metrics
    assert (metrics.n_pending, metrics.n_empty, metrics.n_scored) == (2, 1, 38)
    assert metrics.final_mean == pytest.approx(37 * 3 / 38)
    assert report.bootstrap_excluded == 2
    assert any("2 items are pending" in n for n in report.tables["leaderboard"].notes)

    Response.objects.filter(run=run, item=items[0]).update(waived_at=timezone.now())
    (metrics,) = build_report(benchmark, resamples=200).metrics
    assert (metrics.n_pending, metrics.n_waived) == (1, 1)


def test_only_the_runs_own_judges_count(benchmark, items):
    run = make_run(benchmark, items, [3] * 40, [False] * 40)
    Judgment.objects.bulk_create(
        Judgment(
            response=response,
            kind=Judgment.Kind.RUBRIC,
            judge_name="other-judge",
            score=0,
            status=Judgment.Status.DONE,
        )
        for response in run.responses.all()
    )
    matrix = load_scores([run])
    assert np.all(matrix.raw == 3)
    run.judge_name = "other-judge"
    run.save(update_fields=["judge_name"])
    assert np.all(load_scores([run]).raw == 0)


def test_report_query_count_is_bounded(benchmark, items, django_assert_max_num_queries):
    for i in range(4):
        make_run(benchmark, items, [i % 4] * 40, [False] * 40, model=f"m{i}")
    with django_assert_max_num_queries(12):
        report = build_report(benchmark, resamples=200)
    assert len(report.tables["leaderboard"].rows) == 4


def test_slices_mode_and_language_tables(benchmark, items):
    make_run(benchmark, items, [3] * 40, [False] * 40, model="m", language="zh")
    make_run(
        benchmark,
        items,
        [2] * 40,
        [False] * 40,
        model="m",
        language="zh",
        thinking=True,
    )
    make_run(benchmark, items, [1] * 40, [False] * 40, model="m", language="en")
    report = build_report(benchmark, resamples=200)
    (mode,) = report.tables["mode"].rows  # one model: no Average row
    assert mode[-1] == pytest.approx(-1.0)
    (multi,) = report.tables["multilingual"].rows
    assert multi[0] == "m" and multi[-1] == pytest.approx(2.0)
    capability = report.tables["capability"]
    assert sum(capability.support[0]) == 40
    assert {v for v in capability.rows[0][1:] if v == v} == {3.0}
    # 40 items cut into 14/13/13 by the panel of the two zh runs.
    difficulty = report.tables["difficulty"]
    model_rows = difficulty.support[:2]  # the last row is the mean over models
    # Every item has the panel mean 2.5: one tier, never split.
    assert [sum(col) for col in zip(*model_rows, strict=True)] == [0, 0, 80, 80, 0, 0]
    assert "Items per tier: Easy 0, Medium 40, Hard 0." in difficulty.notes[0]


def test_each_ci_belongs_to_the_score_beside_it_and_mixed_item_sets_are_flagged(
    benchmark, items
):
    rng = np.random.default_rng(3)
    full = rng.choice(4, 40, p=[0.2, 0.2, 0.3, 0.3])
    short = rng.choice(4, 36, p=[0.1, 0.2, 0.3, 0.4])
    make_run(benchmark, items, full.tolist(), [False] * 40, model="full")
    make_run(benchmark, items[:36], short.tolist(), [False] * 36, model="short")
    report = build_report(benchmark, resamples=500)
    table = report.tables["leaderboard"]
    rows = {row[column(table, "Model")]: row for row in table.rows}
    for name, scores in (("full", full), ("short", short)):
        row = rows[name]
        assert row[column(table, "Items")] == scores.size
        own = scoring.paired_bootstrap(scores[None, :].astype(float), n_resamples=500)
        assert row[column(table, "Final (SV)")] == pytest.approx(own.means[0])
        assert row[column(table, "±95% CI")] == pytest.approx(own.half_widths[0])
    assert report.mixed_item_sets
    assert any(
        note.startswith("Ranked across different item sets") for note in table.notes
    )
    assert "Scored on 40 items: full." in table.notes
    assert report.bootstrap_items == 36  # the CI table's common items, and says so
    assert "common items" in report.tables["ci"].title


def test_runs_on_the_same_items_share_one_bootstrap_and_no_flag(benchmark, items):
    for name in ("a", "b"):
        make_run(benchmark, items, [2] * 20 + [3] * 20, [False] * 40, model=name)
    report = build_report(benchmark, resamples=300)
    assert not report.mixed_item_sets
    table = report.tables["leaderboard"]
    ci = {row[0]: row[-1] for row in report.tables["ci"].rows}
    for row in table.rows:
        assert row[column(table, "±95% CI")] == pytest.approx(
            ci[row[column(table, "Model")]]
        )
    assert not any("different item sets" in note for note in table.notes)


def test_difficulty_table_gives_mean_and_perfect_rate_per_tercile(benchmark, items):
    rng = np.random.default_rng(11)
    finals = {}
    for name in ("a", "b", "c"):
        raw = rng.choice(4, 40)
        make_run(benchmark, items, raw.tolist(), [False] * 40, model=name)
        finals[name] = raw
    tiers = {"easy": items[:12], "medium": items[12:30], "hard": items[30:]}
    for tier, members in tiers.items():
        Item.objects.filter(pk__in=[i.pk for i in members]).update(difficulty=tier)
    table = build_report(benchmark, resamples=200).tables["difficulty"]
    # 12, 18 and 10 items: every tier is below the support threshold, marked †.
    assert [c.label for c in table.columns[1:]] == [
        "Easy mean †",
        "Easy Perfect †",
        "Medium mean †",
        "Medium Perfect †",
        "Hard mean †",
        "Hard Perfect †",
    ]
    assert [c.kind for c in table.columns[1:]] == ["num", "rate"] * 3
    bounds = {"easy": (0, 12), "medium": (12, 30), "hard": (30, 40)}
    *model_rows, mean_row = table.rows
    for row in model_rows:
        scores = finals[row[0]]
        expected = []
        for tier in ("easy", "medium", "hard"):
            part = scores[slice(*bounds[tier])]
            expected += [part.mean(), np.mean(part == 3)]
        assert row[1:] == pytest.approx(expected)
    assert mean_row[0] == "Mean over models"
    assert mean_row[1:] == pytest.approx(np.mean([r[1:] for r in model_rows], axis=0))
    assert table.support[-1] == [12, 12, 18, 18, 10, 10]
    assert "Items per tier: Easy 12, Medium 18, Hard 10." in table.notes[0]
    assert "Hard Perfect (n = 10)" in table.notes[1]


def test_pairs_table_marks_only_the_better_direction_among_the_top_k(benchmark, items):
    levels = {"best": 3, "good": 2, "fair": 1, "poor": 0}
    rng = np.random.default_rng(2)
    means = {}
    for name, level in levels.items():
        scores = np.clip(level + rng.choice([-1, 0, 0, 0, 1], 40), 0, 3)
        make_run(benchmark, items, scores.tolist(), [False] * 40, model=name)
        means[name] = scores.mean()
    report = build_report(benchmark, resamples=500, pairs_top=3)
    pairs = report.tables["pairs"]
    names = [row[0] for row in pairs.rows]
    assert names == ["best", "good", "fair"]
    assert [c.label for c in pairs.columns[1:]] == names
    assert "top 3 of 4" in pairs.title
    for r, row in enumerate(pairs.rows):
        for c, cell in enumerate(row[1:]):
            if r == c:
                assert cell is None
                continue
            # Row r is better than column c exactly when it ranks higher here.
            assert cell.endswith(" ✓") == (r < c), (names[r], names[c])
            assert pairs.highlight[r][c] == (r < c)
            assert float(cell.split()[0]) == pytest.approx(
                means[names[r]] - means[names[c]], abs=5e-4
            )


def test_mode_table_has_ranks_raw_and_final_delta_mode_and_the_bold_rule(
    benchmark, items
):
    # (model, non-thinking raw/sv, thinking raw/sv): SV zeroes 2–3 answers.
    plans = {
        "a": ([3] * 40, [False] * 40, [3] * 40, [True] * 10 + [False] * 30),
        "b": ([2] * 40, [False] * 40, [2] * 36 + [3] * 4, [False] * 40),
        "c": ([1] * 40, [False] * 40, [2] * 40, [True] * 2 + [False] * 38),
    }
    for model, (raw_off, sv_off, raw_on, sv_on) in plans.items():
        make_run(benchmark, items, raw_off, sv_off, model=model)
        make_run(benchmark, items, raw_on, sv_on, model=model, thinking=True)
    table = build_report(benchmark, resamples=200).tables["mode"]
    keys = [c.key for c in table.columns]
    rows = {row[0]: dict(zip(keys, row, strict=True)) for row in table.rows}
    expected = {
        # final off, final on, raw off, raw on
        "a": (3.0, 2.25, 3.0, 3.0),
        "b": (2.0, 2.1, 2.0, 2.1),
        "c": (1.0, 1.9, 1.0, 2.0),
    }
    for model, (f_off, f_on, r_off, r_on) in expected.items():
        row = rows[model]
        assert (row["final_off"], row["final_on"]) == pytest.approx((f_off, f_on))
        assert (row["raw_off"], row["raw_on"]) == pytest.approx((r_off, r_on))
        assert row["delta_mode"] == pytest.approx(f_on - f_off)
        assert row["delta_mode_raw"] == pytest.approx(r_on - r_off)
    assert [rows[m]["rank_off"] for m in "abc"] == [1, 2, 3]
    assert [rows[m]["rank_on"] for m in "abc"] == [1, 2, 3]
    average = rows["Average"]
    assert average["delta_mode"] == pytest.approx(np.mean([-0.75, 0.1, 0.9]))
    assert average["delta_mode_raw"] == pytest.approx(np.mean([0.0, 0.1, 1.0]))
    assert average["rank_on"] is None
    # Bold where |Δmode| ≥ 0.20: a's −0.75 and c's +0.9 on Final, c's +1.0 on Raw.
    bold = {
        (table.rows[r][0], table.columns[c + 2].key)
        for r, flags in enumerate(table.highlight)
        for c, flag in enumerate(flags)
        if flag
    }
    assert bold == {
        ("a", "delta_mode"),
        ("c", "delta_mode"),
        ("c", "delta_mode_raw"),
        ("Average", "delta_mode_raw"),
    }
    assert "\\textbf{-0.750}" in table.to_latex()


def test_language_table_keeps_models_valid_in_every_language(benchmark, items):
    benchmark.target_languages = ["en", "ru"]
    benchmark.save(update_fields=["target_languages"])
    finals = {
        ("full", "zh"): 3,
        ("full", "en"): 2,
        ("full", "ru"): 1,
        ("partial", "zh"): 2,
        ("partial", "en"): 3,
    }
    for (model, language), score in finals.items():
        make_run(
            benchmark, items, [score] * 40, [False] * 40, model=model, language=language
        )
    table = build_report(benchmark, resamples=200).tables["multilingual"]
    assert [c.label for c in table.columns] == ["Model", "zh", "en", "ru", "Δmax"]
    assert table.rows == [["full", 3.0, 2.0, 1.0, 2.0]]
    assert table.highlight == [[True, False, False, False]]  # zh is its best
    assert "Left out: partial, which has no valid Final (SV) in ru." in table.notes


def test_sv_zeroed_table_per_model_and_mode(benchmark, items):
    make_run(benchmark, items, [3] * 40, [True] * 8 + [False] * 32, model="m")
    make_run(
        benchmark,
        items,
        [2] * 20 + [1] * 20,
        [True] * 10 + [False] * 10 + [True] * 20,
        model="m",
        thinking=True,
    )
    (row,) = build_report(benchmark, resamples=200).tables["sv_zeroed"].rows
    assert row == ["m", pytest.approx(0.2), pytest.approx(0.5), 40, 20]
