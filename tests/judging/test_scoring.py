"""Scoring functions against hand-computed cases and numpy/scipy references."""

import math

import numpy as np
import pytest
from scipy import stats

from judging.reporting import scoring
from judging.reporting.resampling import draw_items, resample_counts
from judging.reporting.scoring import (
    RunSummary,
    difficulty_terciles,
    final_scores,
    language_comparisons,
    leaderboard,
    mode_comparisons,
    paired_bootstrap,
    run_metrics,
    slice_means,
    slice_rates,
)

NAN = float("nan")

pytestmark = pytest.mark.smoke


def test_final_score_is_zero_when_flagged_and_pending_when_sv_failed():
    raw = np.array([3, 2, 3, 1, NAN, 0])
    sv = np.array([0, 1, NAN, 0, 0, NAN])
    unanswered = np.array([False, False, False, False, False, True])
    final = final_scores(raw, sv, unanswered)
    np.testing.assert_array_equal(final, [3, 0, NAN, 1, NAN, 0])


def test_run_metrics_hand_computed():
    # item:      0  1  2  3  4    5    6    7
    raw = np.array([3, 3, 2, 1, 0, NAN, 3, 2])
    sv = np.array([0, 1, 0, 0, NAN, 0, NAN, 0])
    empty = np.array([0, 0, 0, 0, 1, 0, 0, 0], bool)  # item 4: empty answer
    waived = np.array([0, 0, 0, 0, 0, 0, 0, 1], bool)  # item 7 waived by a manager
    m = run_metrics(raw, sv, empty=empty, waived=waived)
    # Scored: 0,1,2,3,4 (empty counts as 0). Pending: 5 (no raw), 6 (SV failed).
    assert (m.n_items, m.n_scored, m.n_pending, m.n_waived) == (8, 5, 2, 1)
    assert (m.n_empty, m.n_invalid) == (1, 0)
    assert m.raw_mean == pytest.approx((3 + 3 + 2 + 1 + 0) / 5)
    assert m.final_mean == pytest.approx((3 + 0 + 2 + 1 + 0) / 5)
    assert m.delta == pytest.approx(-3 / 5)
    assert m.perfect_rate == pytest.approx(1 / 5)
    assert m.pass_rate == pytest.approx(2 / 5)
    # SV known on non-empty, non-waived answers: items 0,1,2,3,5 -> one flag.
    assert m.n_sv_flagged == 1
    assert m.sv_rate == pytest.approx(1 / 5)
    assert not m.complete


def test_run_metrics_invalid_response_counts_as_zero_even_if_judge_said_more():
    m = run_metrics(
        np.array([3.0, 2.0]), np.array([0.0, NAN]), invalid=np.array([False, True])
    )
    assert m.n_invalid == 1 and m.n_pending == 0
    assert m.raw_mean == pytest.approx(1.5) and m.final_mean == pytest.approx(1.5)
    assert m.sv_rate == 0.0


def test_run_metrics_match_numpy_on_random_complete_runs():
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 4, 500).astype(float)
    sv = (rng.random(500) < 0.1).astype(float)
    m = run_metrics(raw, sv)
    final = np.where(sv == 1, 0, raw)
    assert m.raw_mean == pytest.approx(raw.mean())
    assert m.final_mean == pytest.approx(final.mean())
    assert m.perfect_rate == pytest.approx(np.mean(final == 3))
    assert m.pass_rate == pytest.approx(np.mean(final >= 2))
    assert m.sv_rate == pytest.approx(sv.mean())
    assert m.complete


def test_leaderboard_ranks_by_final_and_reports_change_against_raw():
    rows = leaderboard(
        ["a", "b", "c", "d"],
        raw_means=[2.8, 2.6, 2.5, 2.0],
        final_means=[2.3, 2.5, 2.4, 2.0],
    )
    assert [(r.key, r.final_rank, r.raw_rank, r.rank_change) for r in rows] == [
        ("b", 1, 2, 1),
        ("c", 2, 3, 1),
        ("a", 3, 1, -2),
        ("d", 4, 4, 0),
    ]


def test_competition_ranks_share_ties_and_put_nan_last():
    ranks = scoring.competition_ranks([2.5, 2.7, 2.5, NAN, 1.0])
    np.testing.assert_array_equal(ranks, [2, 1, 2, 5, 4])


def test_slices_match_a_nanmean_loop():
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(4, 300)).astype(float)
    scores[rng.random(scores.shape) < 0.05] = NAN
    groups = rng.integers(-1, 5, 300)
    table = slice_means(scores, groups, 5)
    rates = slice_rates(scores, groups, 5, at_least=3)
    for m in range(4):
        for k in range(5):
            cell = scores[m, groups == k]
            known = cell[~np.isnan(cell)]
            assert table.support[m, k] == known.size
            assert table.values[m, k] == pytest.approx(known.mean())
            assert rates.values[m, k] == pytest.approx(np.mean(known == 3))


def test_empty_slice_is_nan_with_zero_support():
    table = slice_means(np.array([[3.0, 2.0]]), np.array([0, 0]), 2)
    assert table.support.tolist() == [[2, 0]]
    assert table.values[0, 0] == 2.5 and math.isnan(table.values[0, 1])


def test_difficulty_terciles_hand_case_with_ties():
    # Panel of two runs over seven items; item "g" is unscored.
    panel = np.array(
        [
            [3, 2, 2, 1, 0, 2, NAN],
            [3, 2, 2, 1, 0, 2, NAN],
        ]
    )
    keys = ["a", "e", "c", "d", "b", "f", "g"]
    tercile, mean = difficulty_terciles(panel, keys)
    # Sorted: a(3) | c(2) e(2) f(2) | d(1) | b(0). The ideal cuts (after 2 and 4)
    # fall inside the run of 2s: the first moves to its start (1 away, not 2), the
    # second to its end (0 away): easy a; medium c, e, f; hard d, b.
    assert dict(zip(keys, tercile.tolist(), strict=True)) == {
        "a": 0,
        "c": 1,
        "e": 1,
        "f": 1,
        "d": 2,
        "b": 2,
        "g": -1,
    }
    assert math.isnan(mean[6])


@pytest.mark.parametrize("seed", range(20))
def test_difficulty_terciles_never_split_equal_means(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 400))
    panel = rng.integers(0, 4, size=(int(rng.integers(1, 6)), n)).astype(float)
    tercile, mean = difficulty_terciles(panel, [f"i{k:04d}" for k in range(n)])
    for value in np.unique(mean):
        assert np.unique(tercile[mean == value]).size == 1, value
    for easier, harder in ((0, 1), (1, 2)):
        if (tercile == easier).any() and (tercile == harder).any():
            assert mean[tercile == easier].min() > mean[tercile == harder].max()


def test_difficulty_terciles_without_ties_are_thirds():
    rng = np.random.default_rng(11)
    panel = rng.random((5, 100))
    keys = [f"item-{i:03d}" for i in range(100)]
    tercile, mean = difficulty_terciles(panel, keys)
    assert np.bincount(tercile).tolist() == [34, 33, 33]
    assert mean[tercile == 0].min() >= mean[tercile == 1].max()
    assert mean[tercile == 1].min() >= mean[tercile == 2].max()
    shuffled = rng.permutation(100)
    again, _ = difficulty_terciles(panel[:, shuffled], [keys[i] for i in shuffled])
    np.testing.assert_array_equal(again, tercile[shuffled])


def test_mode_and_language_comparisons():
    runs = [
        RunSummary("m1", "zh", False, raw_mean=2.5, final_mean=2.3),
        RunSummary("m1", "zh", True, raw_mean=2.6, final_mean=2.2),
        RunSummary("m1", "en", False, raw_mean=2.4, final_mean=2.0),
        RunSummary("m2", "zh", False, raw_mean=2.0, final_mean=1.9),
    ]
    (mode,) = mode_comparisons(runs)
    assert (mode.model, mode.language) == ("m1", "zh")
    assert mode.delta_mode == pytest.approx(-0.1)
    assert mode.thinking_delta == pytest.approx(-0.4)
    assert mode.non_thinking_delta == pytest.approx(-0.2)
    (lang,) = language_comparisons(runs)
    assert (lang.model, lang.thinking) == ("m1", False)
    assert lang.finals == {"zh": 2.3, "en": 2.0}
    assert lang.delta_max == pytest.approx(0.3)


def test_resample_counts_are_multinomial():
    rng = np.random.default_rng(0)
    counts = resample_counts(50, 4000, rng)
    assert counts.shape == (4000, 50)
    assert (counts.sum(axis=1) == 50).all()
    # Marginal of each cell: Binomial(50, 1/50): mean 1, variance 49/50.
    assert counts.mean() == pytest.approx(1.0)
    assert counts.var() == pytest.approx(49 / 50, rel=0.03)


def test_bootstrap_counts_formulation_equals_a_per_replicate_loop():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 4, size=(3, 40)).astype(float)
    boot = scoring.bootstrap_means(scores, n_resamples=1500, seed=9)
    replay = np.random.default_rng(9)
    expected = []
    for start in range(0, 1500, scoring.BOOTSTRAP_BLOCK):
        rows = min(scoring.BOOTSTRAP_BLOCK, 1500 - start)
        draws = replay.integers(0, 40, size=(rows, 40))
        expected.extend(scores[:, row].mean(axis=1) for row in draws)
    np.testing.assert_allclose(boot, np.array(expected), rtol=0, atol=1e-12)


def test_paired_bootstrap_agrees_with_scipy_percentile_bootstrap():
    rng = np.random.default_rng(21)
    a = rng.choice(4, 400, p=[0.1, 0.1, 0.3, 0.5]).astype(float)
    b = np.clip(a - (rng.random(400) < 0.3), 0, 3)
    result = paired_bootstrap(np.vstack([a, b]), n_resamples=10_000, seed=1)
    ref_a = stats.bootstrap(
        (a,), np.mean, n_resamples=10_000, method="percentile", random_state=2
    ).confidence_interval
    ref_diff = stats.bootstrap(
        (a, b),
        lambda x, y: np.mean(x) - np.mean(y),
        paired=True,
        n_resamples=10_000,
        method="percentile",
        random_state=2,
    ).confidence_interval
    assert result.lower[0] == pytest.approx(ref_a.low, abs=0.01)
    assert result.upper[0] == pytest.approx(ref_a.high, abs=0.01)
    assert result.diff_lower[0, 1] == pytest.approx(ref_diff.low, abs=0.01)
    assert result.diff_upper[0, 1] == pytest.approx(ref_diff.high, abs=0.01)
    assert result.significant[0, 1] and result.significant[1, 0]
    assert not result.significant[0, 0]
    assert result.diff[0, 1] == pytest.approx(a.mean() - b.mean())


def test_paired_bootstrap_is_seeded_and_paired():
    rng = np.random.default_rng(4)
    base = rng.integers(0, 4, 300).astype(float)
    shifted = base.copy()
    shifted[:6] = np.maximum(shifted[:6] - 1, 0)
    scores = np.vstack([base, shifted, rng.permutation(base)])
    first = paired_bootstrap(scores, n_resamples=2000, seed=3)
    second = paired_bootstrap(scores, n_resamples=2000, seed=3)
    np.testing.assert_array_equal(first.lower, second.lower)
    # Item resamples are shared: the CI of a tiny paired difference is far narrower
    # than the CI against an unrelated run with the same score distribution.
    paired_width = first.diff_upper[0, 1] - first.diff_lower[0, 1]
    unrelated_width = first.diff_upper[0, 2] - first.diff_lower[0, 2]
    assert paired_width < 0.25 * unrelated_width
    assert first.significant[0, 1] and not first.significant[0, 2]
    with pytest.raises(ValueError, match="complete scores"):
        scoring.bootstrap_means(np.array([[1.0, NAN]]))


def test_sv_zeroed_counts_only_judged_2_and_3_answers_with_a_verdict():
    nan = float("nan")
    raw = np.array([[3, 3, 2, 2, 1, 0, 3, nan], [1, 1, 0, 0, 1, 0, 1, 1]])
    sv = np.array([[1, 0, 1, 0, 1, 1, nan, 0], [1, 1, 1, 1, 1, 1, 1, 1]])
    share, n = scoring.sv_zeroed(raw, sv)
    assert n.tolist() == [4, 0]
    assert share[0] == pytest.approx(0.5)
    assert np.isnan(share[1])


def test_one_resampler_counts_are_the_bincount_of_its_draws():
    """Every bootstrap draws from judging.reporting.resampling: for one seed, the
    count rows the leaderboard and accuracy use are exactly the tallies of the
    index rows agreement_intervals' bootstrap_ci uses."""
    draws = draw_items(30, 50, np.random.default_rng(7))
    counts = resample_counts(30, 50, np.random.default_rng(7))
    tallied = np.stack([np.bincount(row, minlength=30) for row in draws])
    np.testing.assert_array_equal(counts, tallied)
