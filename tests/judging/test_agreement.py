"""judging.reporting.agreement and agreement_intervals against scikit-learn, scipy,
statsmodels and `krippendorff` on random inputs, against published worked examples,
and one test per known pitfall."""

import math

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judging.reporting import agreement as ag
from judging.reporting.agreement_intervals import (
    bootstrap_ci,
    paired_agreement,
    panel_agreement,
)

SEEDS = range(25)
TOL = 1e-9


def close(x, y, tol=TOL):
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= tol


def random_pair(rng, k, n=None, missing=0.0):
    n = n or int(rng.integers(8, 80))
    a = rng.integers(0, k, n).astype(float)
    # Mostly a noisy copy of `a`, sometimes random: κ spans near-zero to high.
    noisy = np.clip(a + rng.integers(-1, 2, n), 0, k - 1)
    b = np.where(rng.random(n) < 0.3, rng.integers(0, k, n), noisy).astype(float)
    if missing:
        a[rng.random(n) < missing] = np.nan
        b[rng.random(n) < missing] = np.nan
    return a, b


# ------------------------------------------------------------------ property tests


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(seed, weights):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    a, b = random_pair(rng, k, missing=0.1)
    labels = list(range(k + 1))  # one declared point nobody may use
    both = ~np.isnan(a) & ~np.isnan(b)
    expected = cohen_kappa_score(
        a[both].astype(int), b[both].astype(int), weights=weights, labels=labels
    )
    assert close(ag.cohen_kappa(a, b, weights=weights, labels=labels), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_cohen_kappa_with_a_weight_matrix_matches_the_named_weights(seed):
    rng = np.random.default_rng(seed)
    a, b = random_pair(rng, 4)
    pos = np.arange(4)
    quadratic = (pos[:, None] - pos[None, :]) ** 2
    assert close(
        ag.cohen_kappa(a, b, weights=3 * quadratic, labels=[0, 1, 2, 3]),
        ag.cohen_kappa(a, b, weights="quadratic", labels=[0, 1, 2, 3]),
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_kappa_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n_units, n_raters, k = int(rng.integers(5, 60)), int(rng.integers(2, 7)), 4
    truth = rng.integers(0, k, n_units)
    ratings = np.where(
        rng.random((n_units, n_raters)) < 0.6,
        truth[:, None],
        rng.integers(0, k, (n_units, n_raters)),
    )
    table, _ = aggregate_raters(ratings)
    assert close(ag.fleiss_kappa(ratings), sm_fleiss_kappa(table, method="fleiss"))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_matches_the_krippendorff_package(seed, level):
    rng = np.random.default_rng(seed)
    n_raters, n_units = int(rng.integers(2, 6)), int(rng.integers(5, 50))
    truth = rng.integers(1, 6, n_units)
    data = np.where(
        rng.random((n_raters, n_units)) < 0.7,
        truth,
        rng.integers(1, 6, (n_raters, n_units)),
    ).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    expected = krippendorff.alpha(data, level_of_measurement=level)
    assert close(ag.krippendorff_alpha(data, level=level), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_spearman_rho_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a, b = random_pair(rng, 4, missing=0.1)
    both = ~np.isnan(a) & ~np.isnan(b)
    expected = spearmanr(a[both], b[both]).statistic
    assert close(ag.spearman_rho(a, b), float(expected))
    continuous = rng.normal(size=(2, 40))
    assert close(ag.spearman_rho(*continuous), float(spearmanr(*continuous).statistic))


@pytest.mark.parametrize("seed", SEEDS)
def test_paired_agreement_point_values_match_the_single_functions(seed):
    rng = np.random.default_rng(seed)
    a, b = random_pair(rng, 4, missing=0.1)
    labels = [0, 1, 2, 3]
    row = paired_agreement(a, b, labels=labels)
    assert row["n"] == int((~np.isnan(a) & ~np.isnan(b)).sum())
    assert close(row["exact"], ag.exact_agreement(a, b))
    assert close(row["within_k"], ag.within_k(a, b, 1))
    assert close(row["discrepancy"], ag.discrepancy_rate(a, b, 2))
    assert close(row["kappa"], ag.cohen_kappa(a, b, labels=labels))
    for weights in ("linear", "quadratic"):
        assert close(
            row[f"kappa_{weights}"],
            ag.cohen_kappa(a, b, weights=weights, labels=labels),
        )
    assert close(row["rho"], ag.spearman_rho(a, b))


@pytest.mark.parametrize("seed", range(10))
def test_panel_agreement_matches_per_unit_and_pairwise_definitions(seed):
    rng = np.random.default_rng(seed)
    ratings = rng.integers(0, 4, (3, 200)).astype(float)
    ratings[rng.random(ratings.shape) < 0.05] = np.nan
    row = panel_agreement(ratings, labels=[0, 1, 2, 3])
    complete = ratings[:, ~np.isnan(ratings).any(0)]
    assert row["n"] == complete.shape[1]
    assert close(row["full_agreement"], ag.full_agreement_rate(complete))
    assert close(row["high_discrepancy"], ag.high_discrepancy_rate(complete, 2))
    pairs = [(0, 1), (0, 2), (1, 2)]
    for weights in ("linear", "quadratic"):
        expected = np.mean(
            [
                cohen_kappa_score(
                    complete[i], complete[j], weights=weights, labels=[0, 1, 2, 3]
                )
                for i, j in pairs
            ]
        )
        assert close(row[f"kappa_{weights}"], expected)
    expected_rho = np.mean(
        [spearmanr(complete[i], complete[j]).statistic for i, j in pairs]
    )
    assert close(row["rho"], float(expected_rho))


# -------------------------------------------------------- published worked examples

# Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
# Psychological Bulletin 76(5), 378–382: 30 patients, 6 psychiatrists, 5 diagnoses;
# κ = 0.430. Raw ratings as in R's irr::diagnoses and statsmodels' test data.
FLEISS_1971_DIAGNOSES = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip

# Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg
# School for Communication, University of Pennsylvania, section C: 4 observers ×
# 12 units with missing values; α nominal 0.743, ordinal 0.815, interval 0.849,
# ratio 0.797. The same data is Gwet's `cac.raw4raters` (irrCAC R package; Gwet
# 2014, Handbook of Inter-Rater Reliability, 4th ed., ch. 4): AC1 = 0.7754
# (pa 0.8182, pe 0.1903), AC2 linear 0.859, AC2 quadratic 0.914.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def table_to_pairs(table):
    """Expand a k × k contingency table into two raters' label arrays."""
    table = np.asarray(table)
    k = table.shape[0]
    rows, cols = np.divmod(np.arange(k * k), k)
    return np.repeat(rows, table.ravel()), np.repeat(cols, table.ravel())


@pytest.mark.smoke
def test_fleiss_1971_psychiatric_diagnoses():
    assert ag.fleiss_kappa(FLEISS_1971_DIAGNOSES) == pytest.approx(0.430, abs=5e-4)


@pytest.mark.smoke
def test_fleiss_kappa_wikipedia_example():
    # Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5
    # categories, counts per subject; κ = 0.210.
    counts = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    ratings = [np.repeat(np.arange(5), row) for row in counts]
    assert ag.fleiss_kappa(ratings) == pytest.approx(0.210, abs=5e-4)


@pytest.mark.smoke
def test_krippendorff_2011_worked_example_with_missing_data():
    assert ag.krippendorff_alpha(KRIPPENDORFF_2011) == pytest.approx(0.743, abs=5e-4)
    assert ag.krippendorff_alpha(KRIPPENDORFF_2011, level="ordinal") == pytest.approx(
        0.815, abs=5e-4
    )
    assert ag.krippendorff_alpha(KRIPPENDORFF_2011, level="interval") == pytest.approx(
        0.849, abs=5e-4
    )
    assert ag.krippendorff_alpha(KRIPPENDORFF_2011, level="ratio") == pytest.approx(
        0.797, abs=5e-4
    )


@pytest.mark.smoke
def test_gwet_ac1_and_ac2_handbook_example():
    assert ag.gwet_ac(KRIPPENDORFF_2011) == pytest.approx(0.77544, abs=5e-6)
    assert ag.gwet_ac(KRIPPENDORFF_2011, weights="linear") == pytest.approx(
        0.859, abs=5e-4
    )
    assert ag.gwet_ac(KRIPPENDORFF_2011, weights="quadratic") == pytest.approx(
        0.914, abs=5e-4
    )


def test_gwet_and_cohen_on_the_abstractors_table():
    # Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.; irrCAC vignette
    # "cont3x3abstractors": two abstractors, 3 categories. Cohen's κ 0.7964094,
    # AC1 0.849, AC2 linear 0.900, AC2 quadratic 0.940.
    a, b = table_to_pairs([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    both = np.vstack([a, b])
    assert ag.cohen_kappa(a, b) == pytest.approx(0.7964094, abs=5e-8)
    assert ag.gwet_ac(both) == pytest.approx(0.849, abs=5e-4)
    assert ag.gwet_ac(both, weights="linear") == pytest.approx(0.900, abs=5e-4)
    assert ag.gwet_ac(both, weights="quadratic") == pytest.approx(0.940, abs=5e-4)


@pytest.mark.smoke
def test_cohen_kappa_wikipedia_example():
    # Wikipedia, "Cohen's kappa", worked example: 50 grant proposals, both yes 20,
    # A yes / B no 5, A no / B yes 10, both no 15; κ = 0.4.
    a, b = table_to_pairs([[20, 5], [10, 15]])
    assert ag.cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)


def test_weighted_kappa_sas_example():
    # SAS PROC FREQ AGREE output quoted in statsmodels' test suite (table10):
    # simple κ 0.4842, linearly weighted κ (Cicchetti–Allison) 0.4701.
    a, b = table_to_pairs([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert ag.cohen_kappa(a, b) == pytest.approx(0.4842, abs=5e-5)
    assert ag.cohen_kappa(a, b, weights="linear") == pytest.approx(0.4701, abs=5e-5)


# ------------------------------------------------------------------------- pitfalls


def test_weighted_kappa_must_say_linear_or_quadratic():
    a, b = table_to_pairs([[10, 4, 1, 0], [2, 12, 3, 1], [0, 3, 9, 4], [1, 0, 2, 8]])
    linear = ag.cohen_kappa(a, b, weights="linear")
    quadratic = ag.cohen_kappa(a, b, weights="quadratic")
    assert abs(linear - quadratic) > 0.02
    with pytest.raises(ValueError, match="linear"):
        ag.cohen_kappa(a, b, weights="weighted")
    assert "linear" in ag.cohen_kappa.__doc__ and "quadratic" in ag.cohen_kappa.__doc__


def test_weights_use_the_declared_scale_not_the_observed_levels():
    # Nobody used 2 on the 0–3 scale: 1 vs 3 is two steps apart, not one.
    a = [0, 1, 3, 3, 1, 0, 3, 1]
    b = [1, 3, 3, 1, 1, 0, 3, 0]
    declared = ag.cohen_kappa(a, b, weights="linear", labels=[0, 1, 2, 3])
    observed_only = ag.cohen_kappa(a, b, weights="linear")
    assert declared == pytest.approx(
        cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2, 3]), abs=TOL
    )
    assert declared != pytest.approx(observed_only, abs=1e-3)
    assert ag.gwet_ac([a, b], labels=[0, 1, 2, 3]) != pytest.approx(
        ag.gwet_ac([a, b]), abs=1e-3
    )


def test_string_labels_follow_the_declared_order_not_the_alphabet():
    order = ["low", "mid", "high"]  # alphabetically: high, low, mid
    coded = np.random.default_rng(3).integers(0, 3, (3, 40))
    words = np.array(order, dtype=object)[coded]
    assert ag.krippendorff_alpha(words, level="ordinal", labels=order) == (
        pytest.approx(ag.krippendorff_alpha(coded, level="ordinal"), abs=TOL)
    )
    assert ag.cohen_kappa(
        words[0], words[1], weights="quadratic", labels=order
    ) == pytest.approx(ag.cohen_kappa(coded[0], coded[1], weights="quadratic"))
    with pytest.raises(ValueError, match="labels"):
        ag.krippendorff_alpha(words, level="ordinal")
    with pytest.raises(ValueError, match="labels"):
        ag.cohen_kappa(words[0], words[1], weights="linear")
    # Nominal statistics do not depend on order, so no labels are needed.
    assert ag.cohen_kappa(words[0], words[1]) == pytest.approx(
        ag.cohen_kappa(coded[0], coded[1]), abs=TOL
    )


def test_units_with_a_single_rating_hold_no_pairable_values():
    data = np.array(KRIPPENDORFF_2011, dtype=float)
    lonely = np.full((4, 5), np.nan)
    lonely[0] = [1, 2, 3, 4, 5]  # five more units, each rated by one observer
    padded = np.hstack([data, lonely])
    for level in ("nominal", "ordinal", "interval"):
        alpha = ag.krippendorff_alpha(padded, level=level)
        assert alpha == pytest.approx(ag.krippendorff_alpha(data, level=level))
        assert alpha == pytest.approx(
            krippendorff.alpha(padded, level_of_measurement=level), abs=TOL
        )
    rates = ag.consensus_rates(padded)
    assert rates["n"] == 11  # 12 units, minus unit 12 (one rating), minus the five


def test_spearman_handles_ties_with_mid_ranks():
    a = [3, 3, 3, 3, 2, 3, 1, 3, 3, 0, 2, 3]
    b = [3, 3, 2, 3, 3, 3, 1, 3, 2, 1, 2, 3]
    rho = ag.spearman_rho(a, b)
    assert rho == pytest.approx(spearmanr(a, b).statistic, abs=TOL)
    # The no-ties shortcut on ordinal ranks gives a different (wrong) number.
    ra, rb = np.argsort(np.argsort(a)) + 1, np.argsort(np.argsort(b)) + 1
    n = len(a)
    shortcut = 1 - 6 * ((ra - rb) ** 2).sum() / (n * (n**2 - 1))
    assert rho != pytest.approx(shortcut, abs=1e-3)


def test_two_raters_in_fleiss_kappa_is_scotts_pi_not_cohens_kappa():
    a, b = table_to_pairs([[20, 5], [15, 10]])  # unequal marginals
    fleiss = ag.fleiss_kappa(np.column_stack([a, b]))
    assert fleiss == pytest.approx(ag.scott_pi(a, b), abs=TOL)
    assert fleiss != pytest.approx(ag.cohen_kappa(a, b), abs=1e-3)


def test_fleiss_kappa_names_the_unit_with_a_different_rating_count():
    ratings = [[1, 1, 2], [2, 2, 2], [1, None, 2], [3, 3, 3]]
    with pytest.raises(ValueError, match="unit 2 has 2 ratings"):
        ag.fleiss_kappa(ratings)


# ------------------------------------------------------------- summaries and binary


def test_consensus_classes_and_median_ensemble():
    ratings = [
        [3, 3, 1, 0, 1, 2],
        [3, 2, 2, 3, None, None],
        [3, 3, 3, 1, 1, None],
    ]
    # Column 4 (1, missing, 1): two of the three raters agree — a majority, never
    # full agreement (one rule with the labelling runs: judging.reporting.consensus).
    assert ag.consensus_classes(ratings).tolist() == [
        "full", "majority", "none", "none", "majority", "",
    ]  # fmt: skip
    median = ag.median_ensemble(ratings)
    assert median[:4].tolist() == [3, 3, 2, 1]
    assert np.isnan(median[4:]).all()
    assert ag.median_ensemble(ratings, min_ratings=2)[4] == 1
    pairs = [[0, 3, 1], [2, 3, None]]
    assert ag.median_ensemble(pairs, min_ratings=2).tolist()[:2] == [1.0, 3.0]
    assert ag.median_ensemble(pairs, min_ratings=2, even="lower")[0] == 0
    assert ag.median_ensemble(pairs, min_ratings=2, even="upper")[0] == 2
    rng = np.random.default_rng(0)
    odd = rng.integers(0, 4, (3, 50)).astype(float)
    assert np.array_equal(ag.median_ensemble(odd), np.median(odd, axis=0))
    assert ag.full_agreement_rate(ratings) == pytest.approx(1 / 5)
    assert ag.high_discrepancy_rate(ratings) == pytest.approx(2 / 5)


def test_binary_metrics_use_violating_as_the_positive_class():
    truth = [True, True, True, False, False, False, False, None]
    judge = [True, True, False, True, False, False, False, True]
    m = ag.binary_metrics(truth, judge)
    assert (m["tp"], m["fp"], m["fn"], m["tn"], m["n"]) == (2, 1, 1, 3, 7)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 / 3)
    assert m["specificity"] == pytest.approx(3 / 4)
    labelled = ag.binary_metrics(
        ["violating" if t else "safe" for t in truth[:7]],
        ["violating" if p else "safe" for p in judge[:7]],
        positive="violating",
    )
    assert labelled["precision"] == m["precision"]
    matrix, labels = ag.confusion_matrix(truth, judge, labels=[False, True])
    assert matrix.tolist() == [[3, 1], [1, 2]] and labels == [False, True]


# ------------------------------------------------------------------------ bootstrap


def test_bootstrap_ci_is_seeded_paired_and_vectorizable():
    rng = np.random.default_rng(7)
    a, b = random_pair(rng, 4, n=120)
    first = bootstrap_ci(ag.cohen_kappa, a, b, n_resamples=300, seed=5)
    assert first == bootstrap_ci(ag.cohen_kappa, a, b, n_resamples=300, seed=5)
    assert first != bootstrap_ci(ag.cohen_kappa, a, b, n_resamples=300, seed=6)
    assert first[0] < ag.cohen_kappa(a, b) < first[1]

    def exact_batch(x, y):
        return (x == y).mean(-1)

    loop = bootstrap_ci(ag.exact_agreement, a, b, n_resamples=300)
    batch = bootstrap_ci(exact_batch, a, b, n_resamples=300, vectorized=True)
    assert loop == pytest.approx(batch, abs=TOL)
    # Pairing: a statistic of (a, a) resampled together never sees a disagreement.
    assert bootstrap_ci(ag.exact_agreement, a, a, n_resamples=200) == (1.0, 1.0)


def test_summary_intervals_agree_with_item_resampling():
    rng = np.random.default_rng(11)
    a, b = random_pair(rng, 4, n=400)
    row = paired_agreement(a, b, labels=[0, 1, 2, 3], n_resamples=4000, seed=1)
    loop = bootstrap_ci(
        lambda x, y: ag.cohen_kappa(x, y, weights="quadratic", labels=[0, 1, 2, 3]),
        a,
        b,
        n_resamples=4000,
        seed=2,
    )
    assert row["kappa_quadratic_ci"] == pytest.approx(loop, abs=0.01)
    assert row["kappa_quadratic_ci"][0] < row["kappa_quadratic"]
    assert row["kappa_quadratic"] < row["kappa_quadratic_ci"][1]
    again = paired_agreement(a, b, labels=[0, 1, 2, 3], n_resamples=4000, seed=1)
    assert again == row


def test_missing_values_are_none_or_nan_and_out_of_scale_values_are_refused():
    a = [0, 1, None, 3, float("nan"), 2]
    b = [0, 1, 2, None, 1, 2]
    assert ag.exact_agreement(a, b) == 1.0
    assert paired_agreement(a, b, labels=[0, 1, 2, 3])["n"] == 3
    with pytest.raises(ValueError, match="not in labels"):
        ag.cohen_kappa([0, 4], [0, 1], labels=[0, 1, 2, 3])
