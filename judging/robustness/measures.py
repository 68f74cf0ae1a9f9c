"""Robustness of models under metamorphic relations (no ORM), as study 002 defines it.

A seed item is rewritten into variants by metamorphic relations (relations.py); each
relation says how the answer should change. A variant is *consistent* when its
answer, mapped back through that change, equals the model's answer to the seed.

Definitions, per model (study 002; judging.reporting.definitions names them):

* *Robustness* (§3) is the ratio of variants that share the seed's answer: the
  consistent variants over all compared variants, pooled — a seed with ten
  variants weighs ten times a seed with one.
* *Correct robustness* pools the variants of the seeds the model answered right,
  *incorrect robustness* those of the seeds it answered wrong (§5.2, Table 4).
* Per relation and per sector (Table 6, Figure 3) the study reports correct
  robustness only, as means: the score of a sector is the mean over the
  relations of the relation's pooled share in that sector, the score of a
  relation the mean over the sectors (`sector_score`, `relation_score`; a cell
  without a compared variant is left out of the mean).
* Table 3 counts the variants per sector and relation (`variant_counts`).
* Assay's earlier figure — the mean over seeds of each seed's share — survives as
  `correct_seed_mean` / `incorrect_seed_mean`, for a named secondary column only.
* A reply with no single answer is excluded: a seed without one takes all its
  variants with it; a variant without one leaves its seed's other variants. Each
  kind is counted: the model's refusal, a reply with no single answer (several,
  none recognisable, no majority over trials), and the provider's refusal (its
  content filter declined; §5.2 leaves these out so they change no score).

Answers are integers: an option index (A = 0), or 1 true / 0 false; REFUSED (-1),
UNREADABLE (-2) and PROVIDER_REFUSED (-3) mark replies without one
(`answer_codes` reads the first two from extraction.py's output; `majority`
reduces k trials to one code).

Expected changes (Change), per variant:

* IDENTITY — the same answer (magnitude, precision, synonyms, contexts).
* FLIP — the opposite TF answer (logic: the statement is negated).
* REMAP — options reordered (order): answers compare by option *content*, so the
  variant's answer is mapped through ``option_map[v]``, the seed option shown at
  each of the variant's positions.
* ADDED — an option that is never right was added (irrelevant content):
  ``option_map[v]`` holds -1 at its position, so choosing it is inconsistent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from judging.evaluation.extraction import Extractions, Outcome

REFUSED = -1
UNREADABLE = -2
PROVIDER_REFUSED = -3


class Change(IntEnum):
    IDENTITY = 0
    FLIP = 1
    REMAP = 2
    ADDED = 3


def answer_codes(extractions: Extractions) -> np.ndarray:
    """The answer of each extracted reply, REFUSED or UNREADABLE."""
    outcome = extractions.outcome
    codes = np.where(outcome == Outcome.REFUSAL, REFUSED, UNREADABLE)
    return np.where(outcome == Outcome.ANSWERED, extractions.value, codes)


def majority(cell: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One code per cell from k trials (study 002 §4: a majority vote over
    repeated runs): the code most of the cell's trials give; UNREADABLE when two
    codes tie for the most. `cell` numbers each trial's cell (any order),
    `codes` its code. Returns the cells (sorted) and their codes."""
    cell = np.asarray(cell, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    # Codes run from PROVIDER_REFUSED up to the widest option index: offset them
    # to non-negative numbers and count each (cell, code) pair once.
    low = min(PROVIDER_REFUSED, UNREADABLE, int(codes.min(initial=0)))
    width = int(codes.max(initial=0)) - low + 1
    pairs, counts = np.unique(cell * width + (codes - low), return_counts=True)
    pair_cell, pair_code = np.divmod(pairs, width)
    cells, first = np.unique(pair_cell, return_index=True)
    # Per cell, the highest count and how many codes reach it.
    top = np.maximum.reduceat(counts, first)
    at_top = counts == np.repeat(top, np.diff(np.append(first, len(counts))))
    winners = np.add.reduceat(at_top.astype(np.int64), first)
    chosen = np.flatnonzero(at_top)
    code_of = np.full(len(cells), UNREADABLE, dtype=np.int64)
    owner = np.searchsorted(cells, pair_cell[chosen])
    single = winners[owner] == 1
    code_of[owner[single]] = pair_code[chosen[single]] + low
    return cells, code_of


@dataclass(frozen=True)
class Variants:
    """The design: one entry per variant item (the same for every model)."""

    seed: np.ndarray  # index of its seed
    relation: np.ndarray  # index into the relation names
    sector: np.ndarray  # index into the sector names (its seed's sector)
    change: np.ndarray  # Change code
    # Seed option shown at each variant position (-1: an added option), padded with
    # -1; read on REMAP and ADDED rows only. None when there are none.
    option_map: np.ndarray | None = None


@dataclass(frozen=True)
class Table:
    """One column per group (relation, sector, or "all"), one row per model."""

    groups: tuple[str, ...]
    correct: np.ndarray  # pooled share over the variants of seeds answered right
    incorrect: np.ndarray  # … of seeds answered wrong; NaN without one
    correct_seed_mean: np.ndarray  # Assay's earlier per-seed mean (secondary)
    incorrect_seed_mean: np.ndarray
    correct_seeds: np.ndarray  # seeds behind `correct`
    incorrect_seeds: np.ndarray
    correct_variants: np.ndarray  # variants compared behind `correct`
    incorrect_variants: np.ndarray
    refused_seeds: np.ndarray  # seeds excluded, with all their variants
    unreadable_seeds: np.ndarray
    provider_refused_seeds: np.ndarray
    refused_variants: np.ndarray  # variants excluded (of answered seeds)
    unreadable_variants: np.ndarray
    provider_refused_variants: np.ndarray


@dataclass(frozen=True)
class Robustness:
    pooled: Table
    by_relation: Table  # pooled per relation, over every sector
    by_sector: Table  # pooled per sector, over every relation
    # Correct robustness pooled in each relation × sector cell: models ×
    # relations × sectors (NaN: no compared variant of a right seed there).
    by_cell: np.ndarray
    variant_counts: np.ndarray  # sectors × relations (Table 3)

    @property
    def sector_score(self) -> np.ndarray:
        """models × sectors: the mean over relations of the cells (Figure 3)."""
        return _nanmean(self.by_cell, axis=1)

    @property
    def relation_score(self) -> np.ndarray:
        """models × relations: the mean over sectors of the cells (Table 6)."""
        return _nanmean(self.by_cell, axis=2)


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    present = ~np.isnan(values)
    n = present.sum(axis=axis)
    total = np.where(present, values, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def robustness(
    seed_answer: np.ndarray,
    seed_correct: np.ndarray,
    variant_answer: np.ndarray,
    variants: Variants,
    *,
    relations: Sequence[str],
    sectors: Sequence[str],
) -> Robustness:
    """Pooled, per-relation, per-sector and per-cell results.

    `seed_answer`, `seed_correct`: (models × seeds); `variant_answer`: (models ×
    variants), in the order of `variants`.
    """
    seed = np.asarray(variants.seed)
    seed_answer = np.atleast_2d(seed_answer)
    after = np.atleast_2d(variant_answer)
    before = seed_answer[:, seed]  # (models × variants)
    maps = _answer_maps(variants, width=max(2, after.max(initial=0) + 1))
    meant = maps[np.arange(len(seed)), np.maximum(after, 0)]
    answered = (before >= 0) & (after >= 0)
    counts = _Counts(
        compared=answered,
        consistent=answered & (meant == before),
        refused=(before >= 0) & (after == REFUSED),
        unreadable=(before >= 0) & (after == UNREADABLE),
        provider_refused=(before >= 0) & (after == PROVIDER_REFUSED),
        seed_answer=seed_answer,
        seed_correct=np.atleast_2d(np.asarray(seed_correct, dtype=bool)),
        seed=seed,
    )
    relation = np.asarray(variants.relation)
    sector = np.asarray(variants.sector)
    n_relations, n_sectors = len(relations), len(sectors)
    cell = relation * n_sectors + sector
    by_cell = counts.pooled_correct(cell, n_relations * n_sectors)
    variant_counts = np.bincount(
        sector * n_relations + relation, minlength=n_sectors * n_relations
    ).reshape(n_sectors, n_relations)
    return Robustness(
        pooled=counts.table(np.zeros(len(seed), dtype=np.intp), ("all",)),
        by_relation=counts.table(relation, tuple(relations)),
        by_sector=counts.table(sector, tuple(sectors)),
        by_cell=by_cell.reshape(-1, n_relations, n_sectors),
        variant_counts=variant_counts,
    )


def _answer_maps(variants: Variants, width: int) -> np.ndarray:
    """(variants × width): the seed answer each variant answer stands for; -1 for
    none (an added option, or a position the variant does not have)."""
    change = np.asarray(variants.change)
    maps = np.tile(np.arange(width), (len(change), 1))
    maps[change == Change.FLIP, :2] = (1, 0)
    mapped = (change == Change.REMAP) | (change == Change.ADDED)
    if mapped.any():
        if variants.option_map is None:
            raise ValueError("REMAP and ADDED variants need an option_map")
        option_map = np.asarray(variants.option_map)[mapped]
        maps[mapped] = -1
        shown = min(width, option_map.shape[1])
        maps[mapped, :shown] = option_map[:, :shown]
    return maps


def _summed(values: np.ndarray, bins: np.ndarray, n_bins: int) -> np.ndarray:
    """Sum (models × n) `values` into n_bins per model: bincount sums every model
    at once, each model's row offset by its index times the number of bins."""
    n_models = values.shape[0]
    offsets = np.arange(n_models)[:, None] * n_bins + bins
    total = np.bincount(offsets.ravel(), values.ravel(), minlength=n_models * n_bins)
    return total.reshape(n_models, n_bins)


@dataclass(frozen=True)
class _Counts:
    """Per-variant facts (models × variants) and the seeds, summed into a Table
    for any grouping of the variants."""

    compared: np.ndarray
    consistent: np.ndarray
    refused: np.ndarray
    unreadable: np.ndarray
    provider_refused: np.ndarray
    seed_answer: np.ndarray  # (models × seeds)
    seed_correct: np.ndarray
    seed: np.ndarray  # (variants,)

    def _right(self) -> np.ndarray:
        """(models × variants): the variant's seed was answered right."""
        return self.seed_correct[:, self.seed] & (self.seed_answer[:, self.seed] >= 0)

    def pooled_correct(self, group: np.ndarray, n_groups: int) -> np.ndarray:
        """(models × groups) correct robustness pooled in each group."""
        right = self._right()
        compared = _summed(self.compared & right, group, n_groups)
        consistent = _summed(self.consistent & right, group, n_groups)
        with np.errstate(invalid="ignore"):
            return np.where(compared > 0, consistent / np.maximum(compared, 1), np.nan)

    def table(self, group: np.ndarray, names: tuple[str, ...]) -> Table:
        n_groups = len(names)
        # One share per (seed, group) pair, for the per-seed mean and the counts
        # of seeds.
        pairs, pair_of = np.unique(self.seed * n_groups + group, return_inverse=True)
        pair_seed, pair_group = np.divmod(pairs, n_groups)

        def per_pair(values: np.ndarray) -> np.ndarray:
            return _summed(values, pair_of, len(pairs))

        def per_group(values: np.ndarray) -> np.ndarray:
            return _summed(values, pair_group, n_groups)

        compared = per_pair(self.compared)
        consistent = per_pair(self.consistent)
        share = consistent / np.maximum(compared, 1)
        answer = self.seed_answer[:, pair_seed]
        counted = (answer >= 0) & (compared > 0)
        right = counted & self.seed_correct[:, pair_seed]
        wrong = counted & ~self.seed_correct[:, pair_seed]
        correct_seeds, incorrect_seeds = per_group(right), per_group(wrong)
        correct_variants = per_group(compared * right)
        incorrect_variants = per_group(compared * wrong)
        with np.errstate(invalid="ignore", divide="ignore"):  # 0 / 0: none, NaN
            correct = per_group(consistent * right) / correct_variants
            incorrect = per_group(consistent * wrong) / incorrect_variants
            correct_seed_mean = per_group(share * right) / correct_seeds
            incorrect_seed_mean = per_group(share * wrong) / incorrect_seeds
        return Table(
            groups=names,
            correct=correct,
            incorrect=incorrect,
            correct_seed_mean=correct_seed_mean,
            incorrect_seed_mean=incorrect_seed_mean,
            correct_seeds=_int(correct_seeds),
            incorrect_seeds=_int(incorrect_seeds),
            correct_variants=_int(correct_variants),
            incorrect_variants=_int(incorrect_variants),
            refused_seeds=_int(per_group(answer == REFUSED)),
            unreadable_seeds=_int(per_group(answer == UNREADABLE)),
            provider_refused_seeds=_int(per_group(answer == PROVIDER_REFUSED)),
            refused_variants=_int(per_group(per_pair(self.refused))),
            unreadable_variants=_int(per_group(per_pair(self.unreadable))),
            provider_refused_variants=_int(per_group(per_pair(self.provider_refused))),
        )


def _int(counts: np.ndarray) -> np.ndarray:
    return counts.astype(np.int64)  # bincount sums whole numbers in floats: exact
