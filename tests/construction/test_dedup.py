"""construction/dedup.py against a brute-force implementation (the full similarity
matrix and a plain loop), on random vectors with planted near-duplicates, and on
Chinese near-duplicate questions."""

import numpy as np
import pytest

from construction.dedup import (
    KEPT,
    char_ngram_embeddings,
    exact_twins,
    find_duplicates,
    greedy_clusters,
    normalise,
    threshold_sweep,
)


def brute_force(vectors: np.ndarray, threshold: float) -> np.ndarray:
    similar = vectors @ vectors.T
    twins = np.full(len(vectors), KEPT)
    for row in range(len(vectors)):
        for column in range(row):
            if twins[column] == KEPT and similar[row, column] >= threshold:
                twins[row] = column
                break
    return twins


def planted(seed: int, n: int = 300, dim: int = 32) -> np.ndarray:
    """Random unit vectors, a third of them noisy copies of earlier ones at
    similarities spread around the thresholds tested."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim))
    for row in range(1, n, 3):
        vectors[row] = vectors[rng.integers(row)] + rng.uniform(0.1, 1.2) * (
            rng.standard_normal(dim)
        )
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.9])
@pytest.mark.parametrize("block", [1, 7, 64, 1000])
def test_blocked_greedy_equals_brute_force(seed, threshold, block):
    vectors = planted(seed)
    clusters = greedy_clusters(vectors, threshold, block=block)
    expected = brute_force(vectors, threshold)
    assert np.array_equal(clusters.twins, expected)
    joined = np.flatnonzero(expected != KEPT)
    assert joined.size > 10
    similar = np.einsum("ij,ij->i", vectors[joined], vectors[expected[joined]])
    assert np.allclose(clusters.similarity[joined], similar)


def test_sparse_vectors_give_the_same_clusters_as_dense():
    texts = [f"question {i % 40} about bolt torque {i % 7}" for i in range(200)]
    vectors = char_ngram_embeddings(texts)
    sparse_twins = greedy_clusters(vectors, 0.8, block=33).twins
    assert np.array_equal(sparse_twins, brute_force(vectors.toarray(), 0.8))


def test_sweep_counts_match_one_threshold_at_a_time():
    vectors = planted(11)
    rows = threshold_sweep(vectors, samples=2, block=50)
    assert [row.threshold for row in rows] == [
        0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5
    ]  # fmt: skip
    for row in rows:
        expected = brute_force(vectors, row.threshold)
        assert row.clusters == np.count_nonzero(expected == KEPT)
        assert row.clusters + row.duplicates == len(vectors)
        for earlier, later, similarity in row.near_pairs:
            assert earlier < later
            assert row.threshold <= similarity < row.threshold + 0.05
            assert similarity == pytest.approx(vectors[earlier] @ vectors[later])
    counts = [row.clusters for row in rows]
    assert counts == sorted(counts, reverse=True)


def test_normal_form_ignores_width_case_space_and_punctuation():
    assert normalise("额定电压是多少？") == normalise("额定电压是多少?")
    assert normalise("ＧＢ／Ｔ 1234 的 Scope") == normalise("gb/t1234的scope")
    assert exact_twins(["A b。", "ab", "c", "a B"]).tolist() == [KEPT, 0, KEPT, 0]


CHINESE = [
    "GB/T 2099.1 规定的插座额定电压最高是多少伏？",
    "按照 GB/T 2099.1，插座的额定电压最高为多少伏？",
    "不锈钢螺栓 A2-70 的抗拉强度是多少？",
    "GB/T 2099.1 规定的插座额定电压最高是多少伏?",
    "A2-70 不锈钢螺栓的抗拉强度为多少？",
    "变压器油的闪点应不低于多少摄氏度？",
]


def test_chinese_near_duplicates():
    found = {d.index: d for d in find_duplicates(CHINESE, 0.4)}
    assert found[3].twin == 0 and found[3].exact and found[3].similarity == 1.0
    assert found[1].twin == 0 and not found[1].exact
    assert found[4].twin == 2 and 0.4 <= found[4].similarity < 1
    assert set(found) == {1, 3, 4}
    assert find_duplicates(CHINESE, 0.99) == [found[3]]
