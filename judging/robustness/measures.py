"""Robustness of models under metamorphic relations (no ORM).

A seed item is rewritten into variants by metamorphic relations (relations.py); each
relation says how the answer should change. A model is robust on a seed when its
answers to the variants match its answer to the seed after that change, whether the
seed answer was right or not.

Definitions, per model:

* The *share* of a seed is the fraction of its compared variants whose answer,
  mapped back through the variant's expected change, equals the seed's answer.
* *Correct robustness* is the mean share over the seeds the model answered right;
  *incorrect robustness* the mean share over the seeds it answered wrong. Each seed
  weighs the same, however many variants it has.
* A reply with no single answer is excluded: a seed without one takes all its
  variants with it; a variant without one leaves its seed's other variants. Both
  are counted, refusals apart from other flagged replies (several answers, nothing
  recognisable), so a model that refuses its way to consistency is seen to.
* Tables are pooled, per relation (the share of a seed is over its variants of that
  relation) and per sector.

Answers are integers: an option index (A = 0), or 1 true / 0 false; REFUSED (-1)
and UNREADABLE (-2) mark replies without one (`answer_codes` reads them from
extraction.py's output).

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
    correct: np.ndarray  # mean share over the seeds answered right; NaN if none
    incorrect: np.ndarray  # mean share over the seeds answered wrong; NaN if none
    correct_seeds: np.ndarray  # seeds behind `correct`
    incorrect_seeds: np.ndarray
    correct_variants: np.ndarray  # variants compared behind `correct`
    incorrect_variants: np.ndarray
    refused_seeds: np.ndarray  # seeds excluded, with all their variants
    unreadable_seeds: np.ndarray
    refused_variants: np.ndarray  # variants excluded (of answered seeds)
    unreadable_variants: np.ndarray


@dataclass(frozen=True)
class Robustness:
    pooled: Table
    by_relation: Table
    by_sector: Table


def robustness(
    seed_answer: np.ndarray,
    seed_correct: np.ndarray,
    variant_answer: np.ndarray,
    variants: Variants,
    *,
    relations: Sequence[str],
    sectors: Sequence[str],
) -> Robustness:
    """Pooled, per-relation and per-sector tables.

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
        seed_answer=seed_answer,
        seed_correct=np.atleast_2d(np.asarray(seed_correct, dtype=bool)),
        seed=seed,
    )
    return Robustness(
        pooled=counts.table(np.zeros(len(seed), dtype=np.intp), ("all",)),
        by_relation=counts.table(np.asarray(variants.relation), tuple(relations)),
        by_sector=counts.table(np.asarray(variants.sector), tuple(sectors)),
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


@dataclass(frozen=True)
class _Counts:
    """Per-variant facts (models × variants) and the seeds, summed into a Table
    for any grouping of the variants."""

    compared: np.ndarray
    consistent: np.ndarray
    refused: np.ndarray
    unreadable: np.ndarray
    seed_answer: np.ndarray  # (models × seeds)
    seed_correct: np.ndarray
    seed: np.ndarray  # (variants,)

    def table(self, group: np.ndarray, names: tuple[str, ...]) -> Table:
        n_models, n_groups = self.compared.shape[0], len(names)
        # One share per (seed, group) pair. bincount sums every model at once: each
        # model's row is offset by its index times the number of bins.
        pairs, pair_of = np.unique(self.seed * n_groups + group, return_inverse=True)
        pair_seed, pair_group = np.divmod(pairs, n_groups)

        def summed(values: np.ndarray, bins: np.ndarray, n_bins: int) -> np.ndarray:
            offsets = np.arange(n_models)[:, None] * n_bins + bins
            total = np.bincount(
                offsets.ravel(), values.ravel(), minlength=n_models * n_bins
            )
            return total.reshape(n_models, n_bins)

        def per_pair(values: np.ndarray) -> np.ndarray:
            return summed(values, pair_of, len(pairs))

        def per_group(values: np.ndarray) -> np.ndarray:
            return summed(values, pair_group, n_groups)

        compared = per_pair(self.compared)
        share = per_pair(self.consistent) / np.maximum(compared, 1)
        answer = self.seed_answer[:, pair_seed]
        counted = (answer >= 0) & (compared > 0)
        right = counted & self.seed_correct[:, pair_seed]
        wrong = counted & ~self.seed_correct[:, pair_seed]
        correct_seeds, incorrect_seeds = per_group(right), per_group(wrong)
        with np.errstate(invalid="ignore"):  # 0 / 0: no seed, NaN
            correct = per_group(share * right) / correct_seeds
            incorrect = per_group(share * wrong) / incorrect_seeds
        return Table(
            groups=names,
            correct=correct,
            incorrect=incorrect,
            correct_seeds=_int(correct_seeds),
            incorrect_seeds=_int(incorrect_seeds),
            correct_variants=_int(per_group(compared * right)),
            incorrect_variants=_int(per_group(compared * wrong)),
            refused_seeds=_int(per_group(answer == REFUSED)),
            unreadable_seeds=_int(per_group(answer == UNREADABLE)),
            refused_variants=_int(per_group(per_pair(self.refused))),
            unreadable_variants=_int(per_group(per_pair(self.unreadable))),
        )


def _int(counts: np.ndarray) -> np.ndarray:
    return counts.astype(np.int64)  # bincount sums whole numbers in floats: exact
