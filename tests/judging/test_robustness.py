"""Robustness under metamorphic relations: the issue's worked example, exclusions,
and random designs against a plain loop over seeds."""

import numpy as np
import pytest

from judging.evaluation.extraction import extract_all
from judging.robustness.measures import (
    REFUSED,
    UNREADABLE,
    Change,
    Variants,
    answer_codes,
    robustness,
)

RELATIONS = ("synonym", "logic", "magnitude", "order", "irrelevant")
SECTORS = ("power", "chemicals")
TRUE, A, B, C, E = 1, 0, 1, 2, 4


def worked_example():
    """Seed 0 is TF (true), answered right; seed 1 is MC (key B), answered C."""
    variants = Variants(
        seed=np.array([0, 0, 0, 1, 1]),
        relation=np.array([0, 1, 2, 3, 4]),
        sector=np.array([0, 0, 0, 1, 1]),
        change=np.array(
            [Change.IDENTITY, Change.FLIP, Change.IDENTITY, Change.REMAP, Change.ADDED]
        ),
        # Order: the variant shows C, A, B, D; irrelevant: A–D then the added E.
        option_map=np.array(
            [
                [-1, -1, -1, -1, -1],
                [-1, -1, -1, -1, -1],
                [-1, -1, -1, -1, -1],
                [2, 0, 1, 3, -1],
                [0, 1, 2, 3, -1],
            ]
        ),
    )
    seed_answer = np.array([[TRUE, C]])
    seed_correct = np.array([[True, False]])
    # Synonym: true (consistent); logic: true again (should flip: inconsistent);
    # magnitude: refused; order: A, which shows C (consistent); irrelevant: E.
    variant_answer = np.array([[TRUE, TRUE, REFUSED, A, E]])
    return seed_answer, seed_correct, variant_answer, variants


def test_the_issue_worked_example():
    result = robustness(*worked_example(), relations=RELATIONS, sectors=SECTORS).pooled
    assert result.correct[0, 0] == 0.5
    assert result.incorrect[0, 0] == 0.5
    assert result.correct_seeds[0, 0] == result.incorrect_seeds[0, 0] == 1
    assert result.correct_variants[0, 0] == 2  # the refusal is not compared …
    assert result.refused_variants[0, 0] == 1  # … but counted
    assert result.incorrect_variants[0, 0] == 2
    assert result.refused_seeds[0, 0] == result.unreadable_seeds[0, 0] == 0


def test_after_reordering_the_same_letter_is_another_option():
    seed_answer, seed_correct, variant_answer, variants = worked_example()
    variant_answer[0, 3] = C  # the order variant shows seed option B at C
    result = robustness(
        seed_answer,
        seed_correct,
        variant_answer,
        variants,
        relations=RELATIONS,
        sectors=SECTORS,
    ).pooled
    assert result.incorrect[0, 0] == 0


def test_the_worked_example_per_relation_and_per_sector():
    result = robustness(*worked_example(), relations=RELATIONS, sectors=SECTORS)
    by_relation = result.by_relation
    assert by_relation.groups == RELATIONS
    np.testing.assert_array_equal(by_relation.correct[0], [1, 0, np.nan] + [np.nan] * 2)
    np.testing.assert_array_equal(by_relation.incorrect[0], [np.nan] * 3 + [1, 0])
    assert by_relation.refused_variants[0].tolist() == [0, 0, 1, 0, 0]
    by_sector = result.by_sector
    np.testing.assert_array_equal(by_sector.correct[0], [0.5, np.nan])
    np.testing.assert_array_equal(by_sector.incorrect[0], [np.nan, 0.5])


def test_an_unanswered_seed_takes_its_variants_with_it_and_is_counted():
    seed_answer, seed_correct, variant_answer, variants = worked_example()
    seed_answer = np.array([[REFUSED, UNREADABLE]])
    result = robustness(
        seed_answer,
        seed_correct,
        variant_answer,
        variants,
        relations=RELATIONS,
        sectors=SECTORS,
    ).pooled
    assert np.isnan(result.correct[0, 0]) and np.isnan(result.incorrect[0, 0])
    assert result.refused_seeds[0, 0] == result.unreadable_seeds[0, 0] == 1
    assert result.refused_variants[0, 0] == 0  # not counted twice
    assert result.correct_variants[0, 0] == result.incorrect_variants[0, 0] == 0


def test_robustness_pools_variants_as_study_002_defines_it():
    # Study 002 §3: "the ratio of variants that share the same answer as the seed".
    # Seed 0: 1 of 1 variants consistent; seed 1: 1 of 3. Pooled: 2 of 4 variants;
    # Assay's earlier mean of the seeds' shares, (1 + 1/3) / 2, only beside it.
    variants = Variants(
        seed=np.array([0, 1, 1, 1]),
        relation=np.zeros(4, dtype=int),
        sector=np.zeros(4, dtype=int),
        change=np.full(4, Change.IDENTITY),
    )
    result = robustness(
        np.array([[B, B]]),
        np.array([[True, True]]),
        np.array([[B, B, A, C]]),
        variants,
        relations=("synonym",),
        sectors=("power",),
    ).pooled
    assert result.correct[0, 0] == pytest.approx(2 / 4)
    assert result.correct_seed_mean[0, 0] == pytest.approx((1 + 1 / 3) / 2)


def test_answer_codes_keep_refusals_apart_from_other_flagged_replies():
    extractions = extract_all(
        ["答案：C", "我无法回答。", "B and D", "嗯。", "Sai"], [4, 4, 4, 4, 0]
    )
    assert answer_codes(extractions).tolist() == [C, REFUSED, UNREADABLE, UNREADABLE, 0]


def loop_robustness(
    seed_answer, seed_correct, variant_answer, variants, group, n_groups
):
    """The definitions written out: per model and group, consistent variants over
    compared variants, pooled (study 002), and the mean over seeds of each seed's
    share (Assay's earlier figure)."""
    n_models = seed_answer.shape[0]
    correct = np.full((n_models, n_groups), np.nan)
    incorrect = np.full((n_models, n_groups), np.nan)
    refused = np.zeros((n_models, n_groups), dtype=int)
    seeds = np.zeros((2, n_models, n_groups), dtype=int)  # answered right, wrong
    means = np.full((2, n_models, n_groups), np.nan)
    for m in range(n_models):
        for g in range(n_groups):
            right_shares, wrong_shares = [], []
            pooled = {True: [0, 0], False: [0, 0]}  # consistent, compared
            for s in range(seed_answer.shape[1]):
                mine = [
                    v
                    for v in range(len(group))
                    if variants.seed[v] == s and group[v] == g
                ]
                if not mine or seed_answer[m, s] < 0:
                    continue
                same = []
                for v in mine:
                    answer = variant_answer[m, v]
                    if answer == REFUSED:
                        refused[m, g] += 1
                    if answer < 0:
                        continue
                    change = variants.change[v]
                    if change == Change.FLIP:
                        meant = 1 - answer
                    elif change in (Change.REMAP, Change.ADDED):
                        meant = variants.option_map[v, answer]
                    else:
                        meant = answer
                    same.append(meant == seed_answer[m, s])
                if same:
                    shares = right_shares if seed_correct[m, s] else wrong_shares
                    shares.append(sum(same) / len(same))
                    side = pooled[bool(seed_correct[m, s])]
                    side[0] += sum(same)
                    side[1] += len(same)
            seeds[:, m, g] = len(right_shares), len(wrong_shares)
            if right_shares:
                correct[m, g] = pooled[True][0] / pooled[True][1]
                means[0, m, g] = np.mean(right_shares)
            if wrong_shares:
                incorrect[m, g] = pooled[False][0] / pooled[False][1]
                means[1, m, g] = np.mean(wrong_shares)
    return correct, incorrect, refused, seeds, means


def random_design(rng, n_models=4, n_seeds=30, n_options=4):
    """TF and MC seeds with variants of every kind; answers with refusals and
    unreadable replies."""
    is_tf = rng.random(n_seeds) < 0.4
    seeds, changes, maps = [], [], []
    for s in range(n_seeds):
        for _ in range(rng.integers(0, 6)):
            seeds.append(s)
            row = np.full(n_options + 1, -1)
            if is_tf[s]:
                change = rng.choice([Change.IDENTITY, Change.FLIP])
            else:
                change = rng.choice([Change.IDENTITY, Change.REMAP, Change.ADDED])
            if change == Change.REMAP:
                row[:n_options] = rng.permutation(n_options)
            elif change == Change.ADDED:
                row[:n_options] = np.arange(n_options)
            changes.append(change)
            maps.append(row)
    n_variants = len(seeds)
    variants = Variants(
        seed=np.array(seeds),
        relation=rng.integers(0, 3, n_variants),
        sector=np.zeros(n_variants, dtype=int),
        change=np.array(changes),
        option_map=np.array(maps),
    )
    width = np.where(is_tf, 2, n_options)
    seed_answer = rng.integers(0, 100, (n_models, n_seeds)) % width
    seed_answer[rng.random(seed_answer.shape) < 0.1] = REFUSED
    seed_answer[rng.random(seed_answer.shape) < 0.05] = UNREADABLE
    seed_correct = rng.random((n_models, n_seeds)) < 0.6
    variant_width = width[variants.seed] + (variants.change == Change.ADDED)
    variant_answer = rng.integers(0, 100, (n_models, n_variants)) % variant_width
    variant_answer[rng.random(variant_answer.shape) < 0.1] = REFUSED
    variant_answer[rng.random(variant_answer.shape) < 0.05] = UNREADABLE
    return seed_answer, seed_correct, variant_answer, variants


@pytest.mark.parametrize("seed", range(20))
def test_random_designs_match_the_loop(seed):
    rng = np.random.default_rng(seed)
    seed_answer, seed_correct, variant_answer, variants = random_design(rng)
    result = robustness(
        seed_answer,
        seed_correct,
        variant_answer,
        variants,
        relations=("a", "b", "c"),
        sectors=("s",),
    )
    for table, group, n_groups in (
        (result.pooled, np.zeros(len(variants.seed), dtype=int), 1),
        (result.by_relation, variants.relation, 3),
    ):
        correct, incorrect, refused, seeds, means = loop_robustness(
            seed_answer, seed_correct, variant_answer, variants, group, n_groups
        )
        np.testing.assert_allclose(table.correct, correct)
        np.testing.assert_allclose(table.incorrect, incorrect)
        np.testing.assert_allclose(table.correct_seed_mean, means[0])
        np.testing.assert_allclose(table.incorrect_seed_mean, means[1])
        np.testing.assert_array_equal(table.refused_variants, refused)
        np.testing.assert_array_equal(table.correct_seeds, seeds[0])
        np.testing.assert_array_equal(table.incorrect_seeds, seeds[1])
