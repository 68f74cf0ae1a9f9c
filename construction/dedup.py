"""Duplicate candidates, exact and semantic (pure: no ORM, numpy and scikit-learn).

Exact: two questions are the same when their normal forms are — NFKC, case-folded,
with whitespace and punctuation taken out, so "额定电压是多少？" and "额定电压是多少?"
are one question.

Semantic: cosine similarity of L2-normalised embedding vectors at a threshold, and
greedy clusters in the given (stable) order: each vector joins the earliest kept
vector it is at least `threshold` similar to, else it is kept itself. So the earliest
of a group is always the one kept, and re-running on the same list keeps the same.

Similarities are computed in blocks of rows against the rows before them (the only
ones a row can join), so memory is `block × n` whatever n is, never `n × n`.

Embeddings: `char_ngram_embeddings` is the offline default (character n-gram TF-IDF,
2–4 characters within word boundaries, L2-normalised; no model to download), and
works as well on Chinese as on English since it needs no word segmentation. A
model's embeddings (an /v1/embeddings endpoint, fetched through the gateway by the
pipeline) go through `unit_rows` and `duplicates_among`: every function here but
`find_duplicates` takes the vectors, not the texts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

Embed = Callable[[Sequence[str]], "np.ndarray | sparse.spmatrix"]

KEPT = -1
DEFAULT_BLOCK = 512
SWEEP_THRESHOLDS = tuple(round(0.95 - 0.05 * step, 2) for step in range(10))
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The question as exact deduplication compares it."""
    folded = _SPACE.sub("", unicodedata.normalize("NFKC", text).casefold())
    return "".join(
        char for char in folded if not unicodedata.category(char).startswith("P")
    )


def exact_twins(texts: Sequence[str]) -> np.ndarray:
    """For each text, the index of the earliest text with the same normal form,
    or KEPT (-1) for that earliest one."""
    first: dict[str, int] = {}
    twins = np.full(len(texts), KEPT, dtype=np.int64)
    for index, text in enumerate(texts):
        earliest = first.setdefault(normalise(text), index)
        if earliest != index:
            twins[index] = earliest
    return twins


def char_ngram_embeddings(texts: Sequence[str]) -> sparse.csr_matrix:
    """Character 2–4-gram TF-IDF vectors, L2-normalised (sparse rows)."""
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), norm="l2")
    return vectorizer.fit_transform(texts).tocsr()


def unit_rows(vectors) -> np.ndarray:
    """Dense rows scaled to length 1 (a zero row stays zero: similar to nothing)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


@dataclass
class Clusters:
    """Greedy clusters at one threshold: `twins[i]` is the kept vector i joined
    (KEPT for a kept one) and `similarity[i]` how similar they are."""

    threshold: float
    twins: np.ndarray
    similarity: np.ndarray
    near_pairs: list[tuple[int, int, float]] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return int(np.count_nonzero(self.twins == KEPT))


def _blocks(vectors, block: int) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, similarities of rows [first, first + block) to rows before
    the block's end) — a dense `block × end` array each time."""
    n = vectors.shape[0]
    for start in range(0, n, block):
        end = min(start + block, n)
        product = vectors[start:end] @ vectors[:end].T
        yield start, product.toarray() if sparse.issparse(product) else product


def greedy_clusters_at(
    vectors, thresholds: Sequence[float], *, block: int = DEFAULT_BLOCK, near: int = 0
) -> list[Clusters]:
    """Greedy clusters at each threshold, from one pass over the similarities.

    `near` > 0 also collects, per threshold, up to that many pairs (earlier row,
    row, similarity) whose similarity lies within 0.05 above the threshold — the
    pairs a reviewer looks at to choose one."""
    n = vectors.shape[0]
    results = [
        Clusters(
            threshold=t,
            twins=np.full(n, KEPT, dtype=np.int64),
            similarity=np.zeros(n, dtype=np.float64),
        )
        for t in thresholds
    ]
    for start, similar in _blocks(vectors, block):
        rows = similar.shape[0]
        # A row may join only rows before it: the diagonal and above are out.
        own = similar[:, start:]
        own[np.triu_indices(rows, m=own.shape[1])] = -np.inf
        # A row whose best similarity is below a threshold stays kept there; the
        # rows maxima spare a pass over the block per threshold.
        best = similar.max(axis=1)
        for result in results:
            t = result.threshold
            candidates = np.flatnonzero(best >= t)
            for row in candidates:
                columns = np.flatnonzero(similar[row] >= t)
                keepers = columns[result.twins[columns] == KEPT]
                if keepers.size:
                    twin = int(keepers[0])
                    result.twins[start + row] = twin
                    result.similarity[start + row] = similar[row, twin]
            if near and len(result.near_pairs) < near and candidates.size:
                shown = similar[candidates]
                band = (shown >= t) & (shown < t + 0.05)
                for row, column in np.argwhere(band)[: near - len(result.near_pairs)]:
                    result.near_pairs.append(
                        (
                            int(column),
                            start + int(candidates[row]),
                            float(shown[row, column]),
                        )
                    )
    return results


def greedy_clusters(vectors, threshold: float, *, block: int = DEFAULT_BLOCK):
    """Greedy clusters at one threshold (see the module docstring)."""
    return greedy_clusters_at(vectors, [threshold], block=block)[0]


@dataclass(frozen=True)
class Duplicate:
    index: int
    twin: int  # the kept one it duplicates
    similarity: float
    exact: bool


def find_duplicates(
    texts: Sequence[str],
    threshold: float,
    *,
    embed: Embed = char_ngram_embeddings,
    block: int = DEFAULT_BLOCK,
) -> list[Duplicate]:
    """Exact duplicates, then semantic ones among the distinct texts, in order;
    every duplicate names the earliest kept text it repeats."""
    exact = exact_twins(texts)
    distinct = np.flatnonzero(exact == KEPT)
    clusters = (
        greedy_clusters(embed([texts[i] for i in distinct]), threshold, block=block)
        if distinct.size > 1
        else None
    )
    return duplicates_among(exact, clusters)


def duplicates_among(exact: np.ndarray, clusters: Clusters | None) -> list[Duplicate]:
    """Exact duplicates (from `exact_twins`), then semantic ones among the
    distinct texts, clustered in `clusters` (over one vector per KEPT entry of
    `exact`, in order; None when there are fewer than two)."""
    distinct = np.flatnonzero(exact == KEPT)
    found = [
        Duplicate(int(index), int(exact[index]), 1.0, True)
        for index in np.flatnonzero(exact != KEPT)
    ]
    if clusters is not None:
        for position in np.flatnonzero(clusters.twins != KEPT):
            found.append(
                Duplicate(
                    int(distinct[position]),
                    int(distinct[clusters.twins[position]]),
                    round(float(clusters.similarity[position]), 4),
                    False,
                )
            )
    return sorted(found, key=lambda duplicate: duplicate.index)


@dataclass(frozen=True)
class SweepRow:
    threshold: float
    clusters: int
    duplicates: int
    near_pairs: list[tuple[int, int, float]]


def threshold_sweep(
    vectors,
    thresholds: Sequence[float] = SWEEP_THRESHOLDS,
    *,
    samples: int = 3,
    block: int = DEFAULT_BLOCK,
) -> list[SweepRow]:
    """Cluster counts at each threshold (0.95 down to 0.50 by default) with
    sample pairs just above each, to choose the threshold from."""
    return sweep_rows(
        greedy_clusters_at(vectors, thresholds, block=block, near=samples)
    )


def sweep_rows(clusters: Sequence[Clusters]) -> list[SweepRow]:
    """The sweep's rows from clusters computed at its thresholds (with `near`
    pairs), e.g. in the same pass as a run's own threshold."""
    return [
        SweepRow(c.threshold, c.kept, c.twins.size - c.kept, c.near_pairs)
        for c in clusters
    ]
