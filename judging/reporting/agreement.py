"""Agreement statistics on plain arrays: no ORM, no Django, vectorized with numpy.

Missing values are ``None`` or NaN. Two layouts are used, each named in the docstring:
*paired* functions take two 1-D arrays over the same units; multi-rater functions take
``raters × units`` (the `krippendorff` package's reliability-data layout), except
`fleiss_kappa`, which takes ``units × raters`` like statsmodels.

Categories: ``labels`` is the declared, ordered scale (e.g. ``[0, 1, 2, 3]`` or
``["low", "mid", "high"]``). Weighted and ordinal statistics use positions in it, so a
scale point nobody used still counts. Without ``labels`` the categories are the
observed values, in numeric order for numbers; non-numeric values have no order, so
weighted / ordinal statistics on them require ``labels``.

Bootstrap intervals and the agreement tables' rows are in agreement_intervals.py,
built on the coding (`Coded`, `paired_codes`, `panel_codes`) and the batched
count-table statistics (`kappa_from_tables`, `spearman_from_tables`, `cell_share`)
here.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import krippendorff
import numpy as np
from scipy import stats

from judging.reporting import consensus

__all__ = [
    "binary_metrics",
    "cohen_kappa",
    "confusion_matrix",
    "consensus_classes",
    "consensus_rates",
    "discrepancy_rate",
    "exact_agreement",
    "fleiss_kappa",
    "full_agreement_rate",
    "gwet_ac",
    "high_discrepancy_rate",
    "krippendorff_alpha",
    "median_ensemble",
    "scott_pi",
    "spearman_rho",
    "within_k",
]

LEVELS = ("nominal", "ordinal", "interval", "ratio")


# --------------------------------------------------------------------------- coding


class Coded:
    """Integer codes (-1 = missing) for one or more arrays over one category list."""

    def __init__(self, codes: list[np.ndarray], categories: list, numeric: bool):
        self.codes = codes
        self.categories = categories
        self.numeric = numeric

    @property
    def k(self) -> int:
        return len(self.categories)

    @property
    def values(self) -> np.ndarray:
        """Category values as floats (numeric scales) or positions (ordered labels)."""
        if self.numeric:
            return np.asarray(self.categories, dtype=float)
        return np.arange(self.k, dtype=float)


def as_array(values) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    return np.array(values, dtype=object)


def _missing(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    if arr.dtype.kind == "O":
        # None is missing; NaN is the one value not equal to itself.
        return np.asarray(np.equal(arr, None) | np.not_equal(arr, arr), dtype=bool)
    return np.zeros(arr.shape, dtype=bool)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, complex)


def _numeric_view(arr: np.ndarray, missing: np.ndarray) -> np.ndarray | None:
    """`arr` as floats (NaN = missing), or None if a present value is not a number."""
    if arr.dtype.kind in "biuf":
        return arr.astype(float)
    present = arr[~missing]
    if not all(_is_number(v) for v in present.ravel()):
        return None
    out = np.full(arr.shape, np.nan)
    out[~missing] = present.astype(float)
    return out


def _encode(arrays: Sequence, labels=None, *, ordered: bool = False) -> Coded:
    """Code `arrays` against `labels` (declared) or the union of observed values.

    `ordered`: the statistic uses the order of categories (weights, ranks, ordinal
    distances), so non-numeric values need a declared `labels` order.
    """
    arrs = [as_array(a) for a in arrays]
    masks = [_missing(a) for a in arrs]
    numeric_views = [_numeric_view(a, m) for a, m in zip(arrs, masks, strict=True)]
    all_numeric = all(v is not None for v in numeric_views)

    if labels is not None:
        categories = list(labels)
        if len(set(categories)) != len(categories):
            raise ValueError(f"labels contain duplicates: {categories}")
        numeric = all_numeric and all(_is_number(c) for c in categories)
    elif all_numeric:
        present = np.concatenate([v[~np.isnan(v)] for v in numeric_views])
        categories = np.unique(present).tolist()
        numeric = True
    else:
        if ordered:
            raise ValueError(
                "non-numeric values have no order: pass labels=[...] with the "
                "declared scale (alphabetical order would be wrong)"
            )
        present = set()
        for arr, mask in zip(arrs, masks, strict=True):
            present.update(arr[~mask].ravel().tolist())
        categories = sorted(present, key=str)
        numeric = False

    codes = []
    if numeric:
        cats = np.asarray(categories, dtype=float)
        order = np.argsort(cats, kind="stable")
        sorted_cats = cats[order]
        for view in numeric_views:
            code = np.full(view.shape, -1, dtype=np.int64)
            present = ~np.isnan(view)
            pos = np.searchsorted(sorted_cats, view[present])
            pos_clipped = np.minimum(pos, len(cats) - 1)
            bad = (pos >= len(cats)) | (sorted_cats[pos_clipped] != view[present])
            if bad.any():
                raise ValueError(
                    f"value {view[present][bad][0]:g} is not in labels {categories}"
                )
            code[present] = order[pos_clipped]
            codes.append(code)
    else:
        index = {c: i for i, c in enumerate(categories)}
        for arr, mask in zip(arrs, masks, strict=True):
            code = np.full(arr.shape, -1, dtype=np.int64)
            flat_present = arr[~mask].ravel()
            try:
                code[~mask] = [index[v] for v in flat_present]
            except KeyError as exc:
                raise ValueError(
                    f"value {exc.args[0]!r} is not in labels {categories}"
                ) from None
            codes.append(code)
    return Coded(codes, categories, numeric)


def paired_codes(a, b, labels, ordered):
    a_arr, b_arr = as_array(a), as_array(b)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise ValueError(
            f"a and b must be 1-D arrays of the same length, got shapes "
            f"{a_arr.shape} and {b_arr.shape}"
        )
    coded = _encode([a_arr, b_arr], labels, ordered=ordered)
    ca, cb = coded.codes
    both = (ca >= 0) & (cb >= 0)
    return ca[both], cb[both], coded


def _rater_unit_counts(codes: np.ndarray, k: int) -> np.ndarray:
    """units × categories counts from raters × units codes (-1 = missing)."""
    n_units = codes.shape[1]
    unit = np.broadcast_to(np.arange(n_units), codes.shape)
    present = codes >= 0
    flat = unit[present] * k + codes[present]
    return np.bincount(flat, minlength=n_units * k).reshape(n_units, k)


def _ratings_2d(ratings) -> np.ndarray:
    arr = as_array(ratings)
    if arr.ndim != 2:
        raise ValueError(f"ratings must be 2-D, got shape {arr.shape}")
    return arr


# ------------------------------------------------------------------------- weights


def _disagreement_weights(weights, coded: Coded) -> np.ndarray:
    """k × k disagreement weights on positions in the category list."""
    k = coded.k
    pos = np.arange(k, dtype=float)
    if weights is None:
        return 1.0 - np.eye(k)
    if isinstance(weights, str):
        if weights == "linear":
            return np.abs(pos[:, None] - pos[None, :])
        if weights == "quadratic":
            return (pos[:, None] - pos[None, :]) ** 2
        raise ValueError(
            f"weights must be None, 'linear', 'quadratic' or a matrix, got {weights!r}"
        )
    matrix = np.asarray(weights, dtype=float)
    if matrix.shape != (k, k):
        raise ValueError(
            f"weights matrix must be {k}×{k} (one row per category in "
            f"{coded.categories}), got {matrix.shape}"
        )
    return matrix


def _weights_need_order(weights) -> bool:
    return weights is not None


# ----------------------------------------------------------------- paired statistics


def _pair_tables(ca: np.ndarray, cb: np.ndarray, k: int) -> np.ndarray:
    """One flat (1, k·k) count table of the pairs (ca, cb)."""
    return np.bincount(ca * k + cb, minlength=k * k).astype(float)[None, :]


# Batched statistics work on flat count tables T of shape (resamples, k·k), cell
# i·k + j counting units with first value i and second value j; everything is a
# matrix product, so 10,000 bootstrap tables cost little more than one.


def _margins(flat: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column margins, (resamples, k) each, as matrix products (fast for
    many small tables, unlike reductions over short axes)."""
    cell_row, cell_col = np.divmod(np.arange(k * k), k)
    eye = np.eye(k)
    return flat @ eye[cell_row], flat @ eye[cell_col]


def kappa_from_tables(flat: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cohen's κ with disagreement weights `w` (k × k) for each flat table."""
    k = w.shape[0]
    rows, cols = _margins(flat, k)
    n = rows.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # κ = 1 − (Σ w·O / n) / (Σ w·E / n²), E = outer(row margins, column margins).
        return 1.0 - n * (flat @ w.ravel()) / ((rows @ w) * cols).sum(1)


def _scott_from_tables(flat: np.ndarray, k: int) -> np.ndarray:
    rows, cols = _margins(flat, k)
    n = flat.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = flat[:, :: k + 1].sum(1) / n
        pooled = (rows + cols) / (2 * n[:, None])
        expected = (pooled**2).sum(1)
        return (observed - expected) / (1.0 - expected)


def spearman_from_tables(flat: np.ndarray, k: int) -> np.ndarray:
    """Spearman ρ as the Pearson correlation of mid-ranks, for each flat table."""
    rows, cols = _margins(flat, k)
    n = flat.sum(1)
    mean = ((n + 1) / 2)[:, None]
    # The mid-rank of a category: the number of values below it plus (count + 1)/2.
    ra = np.cumsum(rows, 1) - rows + (rows + 1) / 2 - mean
    rb = np.cumsum(cols, 1) - cols + (cols + 1) / 2 - mean
    tables = flat.reshape(-1, k, k)
    cov = (np.matmul(tables, rb[:, :, None])[:, :, 0] * ra).sum(1)
    var_a = (rows * ra**2).sum(1)
    var_b = (cols * rb**2).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return cov / np.sqrt(var_a * var_b)


def cell_share(flat: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Share of units in the cells where the k × k boolean mask `cells` is true."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (flat @ cells.ravel().astype(float)) / flat.sum(1)


def cohen_kappa(a, b, *, weights=None, labels=None) -> float:
    """Cohen's κ between two raters over the same units.

    ``weights``: ``None`` — unweighted κ; ``"linear"`` — linearly weighted κ
    (disagreement |i − j|); ``"quadratic"`` — quadratically weighted κ ((i − j)²);
    or a k × k matrix of disagreement weights. i and j are positions in ``labels``
    (the declared scale), so an unused scale point still widens the distances.
    Pairs where either value is missing are dropped. NaN if no pair remains or the
    expected disagreement is zero. Matches ``sklearn.metrics.cohen_kappa_score``.
    """
    ca, cb, coded = paired_codes(a, b, labels, _weights_need_order(weights))
    w = _disagreement_weights(weights, coded)
    if ca.size == 0:
        return float("nan")
    return float(kappa_from_tables(_pair_tables(ca, cb, coded.k), w)[0])


def scott_pi(a, b, *, labels=None) -> float:
    """Scott's π between two raters: chance agreement from the pooled marginals.

    This is what Fleiss' κ reduces to with two raters; it is not Cohen's κ, whose
    chance agreement uses each rater's own marginals. Pairs with a missing value are
    dropped.
    """
    ca, cb, coded = paired_codes(a, b, labels, False)
    if ca.size == 0:
        return float("nan")
    return float(_scott_from_tables(_pair_tables(ca, cb, coded.k), coded.k)[0])


def spearman_rho(a, b, *, labels=None) -> float:
    """Spearman's ρ: the Pearson correlation of mid-ranks (average ranks for ties).

    Never the no-ties shortcut 1 − 6Σd²/(n(n²−1)), which is wrong with ties (and 0–3
    scores are nearly all ties). Pairs with a missing value are dropped. Non-numeric
    ordinal values need ``labels`` for their order. Matches ``scipy.stats.spearmanr``.
    """
    ca, cb, coded = paired_codes(a, b, labels, True)
    if ca.size < 2:
        return float("nan")
    va, vb = coded.values[ca], coded.values[cb]
    ra = stats.rankdata(va, method="average")
    rb = stats.rankdata(vb, method="average")
    ra -= ra.mean()
    rb -= rb.mean()
    denominator = np.sqrt((ra**2).sum() * (rb**2).sum())
    if denominator == 0:
        return float("nan")
    return float((ra * rb).sum() / denominator)


def _paired_differences(a, b, labels) -> np.ndarray:
    ca, cb, coded = paired_codes(a, b, labels, True)
    return np.abs(coded.values[ca] - coded.values[cb])


def exact_agreement(a, b) -> float:
    """Share of units (both rated) where the two values are identical."""
    ca, cb, _ = paired_codes(a, b, None, False)
    return float(np.mean(ca == cb)) if ca.size else float("nan")


def within_k(a, b, k: float = 1, *, labels=None) -> float:
    """Share of units (both rated) with |a − b| ≤ k (on values; positions in labels
    for non-numeric scales)."""
    diff = _paired_differences(a, b, labels)
    return float(np.mean(diff <= k)) if diff.size else float("nan")


def discrepancy_rate(a, b, k: float = 2, *, labels=None) -> float:
    """Share of units (both rated) with |a − b| ≥ k: large disagreements."""
    diff = _paired_differences(a, b, labels)
    return float(np.mean(diff >= k)) if diff.size else float("nan")


# ------------------------------------------------------------- multi-rater statistics


def fleiss_kappa(ratings, *, labels=None) -> float:
    """Fleiss' κ for ``units × raters`` ratings (statsmodels' layout).

    Every unit must have the same number m ≥ 2 of ratings (missing values allowed as
    long as the count of present ones is equal); otherwise ``ValueError`` names the
    first unit that differs. With two raters this is Scott's π, not Cohen's κ.
    Matches ``statsmodels.stats.inter_rater.fleiss_kappa(method="fleiss")``.
    """
    arr = _ratings_2d(ratings)
    coded = _encode([arr], labels)
    codes = coded.codes[0]
    counts = _rater_unit_counts(codes.T, coded.k).astype(float)
    per_unit = counts.sum(1)
    m = per_unit[0] if per_unit.size else 0
    uneven = np.flatnonzero(per_unit != m)
    if uneven.size:
        unit = int(uneven[0])
        raise ValueError(
            f"unit {unit} has {int(per_unit[unit])} ratings but unit 0 has {int(m)}: "
            "Fleiss' κ needs the same number of ratings for every unit"
        )
    if m < 2:
        raise ValueError("Fleiss' κ needs at least two ratings per unit")
    n_units = counts.shape[0]
    p_unit = ((counts**2).sum(1) - m) / (m * (m - 1))
    p_cat = counts.sum(0) / (n_units * m)
    p_bar = p_unit.mean()
    p_e = (p_cat**2).sum()
    if p_e == 1:
        return float("nan")
    return float((p_bar - p_e) / (1 - p_e))


def krippendorff_alpha(ratings, *, level: str = "nominal", labels=None) -> float:
    """Krippendorff's α for ``raters × units`` ratings with missing values.

    ``level``: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"`` (the
    distance metric). ``labels`` fixes the order of non-numeric ordinal values (and
    the declared scale). Units with fewer than two ratings hold no pairable values
    and do not count. Computed by the ``krippendorff`` package from value counts.
    NaN when no unit has two ratings or all pairable values are identical.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    arr = _ratings_2d(ratings)
    coded = _encode([arr], labels, ordered=level != "nominal")
    if level in ("interval", "ratio") and not coded.numeric:
        raise ValueError(f"{level} α needs numeric values")
    counts = _rater_unit_counts(coded.codes[0], coded.k)
    pairable = counts[counts.sum(1) >= 2]
    if pairable.size == 0 or np.count_nonzero(pairable.sum(0)) < 2:
        return float("nan")
    domain = coded.values if level in ("interval", "ratio") else np.arange(coded.k)
    return float(
        krippendorff.alpha(
            value_counts=pairable, value_domain=domain, level_of_measurement=level
        )
    )


def _agreement_weights(weights, coded: Coded) -> np.ndarray:
    """Gwet's agreement weights in [0, 1]: 1 on the diagonal."""
    if weights is None:
        return np.eye(coded.k)
    d = _disagreement_weights(weights, coded)
    top = d.max()
    return 1.0 - d / top if top > 0 else np.ones_like(d)


def gwet_ac(ratings, *, weights=None, labels=None) -> float:
    """Gwet's AC1 (``weights=None``) or AC2 (weighted) for ``raters × units``.

    ``weights``: ``"linear"`` (agreement 1 − |i − j|/(q − 1)), ``"quadratic"``
    (1 − (i − j)²/(q − 1)²) or a q × q matrix of disagreement weights, scaled to a
    maximum of 1 and turned into agreement weights 1 − d. q is the number of
    categories in ``labels`` (the declared scale), which enters chance agreement.
    Missing values as in Gwet's Handbook (4th ed., ch. 4): observed agreement over
    units with ≥ 2 ratings, category prevalence over units with ≥ 1 rating. Unlike κ
    it stays high when nearly every rating falls in one category.
    """
    arr = _ratings_2d(ratings)
    coded = _encode([arr], labels, ordered=_weights_need_order(weights))
    q = coded.k
    w = _agreement_weights(weights, coded)
    counts = _rater_unit_counts(coded.codes[0], q).astype(float)
    per_unit = counts.sum(1)
    rated = counts[per_unit >= 1]
    r_rated = per_unit[per_unit >= 1]
    paired = per_unit >= 2
    if not paired.any() or q < 2:
        return float("nan")
    r = per_unit[paired]
    weighted = counts[paired] @ w.T
    p_a = ((counts[paired] * (weighted - 1)).sum(1) / (r * (r - 1))).mean()
    prevalence = (rated / r_rated[:, None]).mean(0)
    p_e = w.sum() / (q * (q - 1)) * (prevalence * (1 - prevalence)).sum()
    return float((p_a - p_e) / (1 - p_e))


def panel_codes(ratings, labels, ordered=False) -> tuple[np.ndarray, Coded]:
    arr = _ratings_2d(ratings)
    coded = _encode([arr], labels, ordered=ordered)
    return coded.codes[0], coded


def _panel_values(ratings, labels) -> np.ndarray:
    """raters × units floats (NaN missing): numeric values or positions in labels."""
    codes, coded = panel_codes(ratings, labels, ordered=True)
    values = np.full(codes.shape, np.nan)
    present = codes >= 0
    values[present] = coded.values[codes[present]]
    return values


def full_agreement_rate(ratings) -> float:
    """Share of units (``raters × units``, ≥ 2 ratings) where every rating is equal."""
    classes = consensus_classes(ratings)
    rated = classes != ""
    return float(np.mean(classes[rated] == "full")) if rated.any() else float("nan")


def high_discrepancy_rate(ratings, k: float = 2, *, labels=None) -> float:
    """Share of units (``raters × units``, ≥ 2 ratings) whose ratings span ≥ k:
    max − min ≥ k (values; positions in labels for non-numeric scales)."""
    values = _panel_values(ratings, labels)
    rated = (~np.isnan(values)).sum(0) >= 2
    if not rated.any():
        return float("nan")
    spread = np.nanmax(values[:, rated], 0) - np.nanmin(values[:, rated], 0)
    return float(np.mean(spread >= k))


def consensus_classes(ratings, *, labels=None) -> np.ndarray:
    """Per unit of ``raters × units``: ``"full"``, ``"majority"`` or ``"none"`` by
    the one consensus rule (`judging.reporting.consensus`: the panel is every rater,
    so a missing rating never makes agreement full); ``""`` for units with fewer
    than two ratings, which no consensus statistic counts."""
    codes, _ = panel_codes(ratings, labels)
    outcome, _, _ = consensus.consensus(
        np.where(codes >= 0, codes, consensus.MISSING).T
    )
    classes = np.asarray(consensus.OUTCOME_NAMES, dtype=object)[outcome]
    classes[(codes >= 0).sum(0) < 2] = ""
    return classes


def consensus_rates(ratings, *, labels=None) -> dict[str, float]:
    """Shares of units (with ≥ 2 ratings) in each consensus class, plus ``n``."""
    classes = consensus_classes(ratings, labels=labels)
    rated = classes[classes != ""]
    n = rated.size
    out = {
        name: (float(np.mean(rated == name)) if n else float("nan"))
        for name in ("full", "majority", "none")
    }
    out["n"] = n
    return out


def median_ensemble(
    ratings, *, min_ratings: int | None = None, even: str = "mean"
) -> np.ndarray:
    """Per-unit median of numeric ``raters × units`` ratings (e.g. median of judges).

    Units with fewer than ``min_ratings`` present ratings (default: all raters) get
    NaN. With an even number of present ratings, ``even`` picks ``"mean"`` (of the
    middle two, which can fall between scale points), ``"lower"`` or ``"upper"``.
    """
    if even not in ("mean", "lower", "upper"):
        raise ValueError(f"even must be 'mean', 'lower' or 'upper', got {even!r}")
    values = _panel_values(ratings, None)
    needed = values.shape[0] if min_ratings is None else min_ratings
    present = (~np.isnan(values)).sum(0)
    out = np.full(values.shape[1], np.nan)
    enough = present >= max(needed, 1)
    if not enough.any():
        return out
    # NaN sorts last, so the present values of a unit are its first `count` rows.
    ordered = np.sort(values[:, enough], axis=0)
    count = present[enough]
    columns = np.arange(count.size)
    lower = ordered[(count - 1) // 2, columns]
    upper = ordered[count // 2, columns]
    out[enough] = {"mean": (lower + upper) / 2, "lower": lower, "upper": upper}[even]
    return out


# ---------------------------------------------------------------- binary and tables


def confusion_matrix(truth, predicted, *, labels=None) -> tuple[np.ndarray, list]:
    """Counts with rows = ``truth`` and columns = ``predicted``, over ``labels``.

    Returns ``(matrix, labels)``; pairs with a missing value are dropped.
    """
    ca, cb, coded = paired_codes(truth, predicted, labels, False)
    matrix = _pair_tables(ca, cb, coded.k).reshape(coded.k, coded.k).astype(int)
    return matrix, list(coded.categories)


def binary_metrics(truth, predicted, *, positive=True) -> dict[str, float]:
    """Precision, recall, F1 and specificity with ``positive`` as the positive class
    (for safety labels: violating = True). Pairs with a missing value are dropped.

    Returns counts ``tp``, ``fp``, ``fn``, ``tn``, ``n`` and the four rates (NaN when
    their denominator is zero).
    """
    ca, cb, coded = paired_codes(truth, predicted, None, False)
    pos_code = coded.categories.index(positive) if positive in coded.categories else -2
    t, p = ca == pos_code, cb == pos_code
    tp = int(np.sum(t & p))
    fp = int(np.sum(~t & p))
    fn = int(np.sum(t & ~p))
    tn = int(np.sum(~t & ~p))

    def ratio(num, den):
        return num / den if den else float("nan")

    precision = ratio(tp, tp + fp)
    recall = ratio(tp, tp + fn)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "n": tp + fp + fn + tn,
        "precision": precision,
        "recall": recall,
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
        "specificity": ratio(tn, tn + fp),
    }
