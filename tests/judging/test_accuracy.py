"""Accuracy over trials (judging.reporting.accuracy) against plain loops and
scipy's bootstrap; grading MC/TF replies one by one and in bulk agree
(judging.evaluation.choices)."""

import numpy as np
import pytest
from scipy import stats

from judging.evaluation.choices import AnswerKey, read_answer, read_answers
from judging.evaluation.extraction import Grade
from judging.reporting.accuracy import bootstrap_accuracy, trial_accuracy


def random_scores(rng, items, trials, missing=0.2):
    scores = (rng.random((items, trials)) < rng.random()).astype(float)
    scores[rng.random(scores.shape) < missing] = np.nan
    return scores


@pytest.mark.parametrize("seed", range(5))
def test_trial_accuracy_matches_a_loop(seed):
    rng = np.random.default_rng(seed)
    scores = random_scores(rng, 40, 3)
    scores[:, 2] = np.nan if seed == 0 else scores[:, 2]  # a trial never scored
    per_trial = []
    for t in range(scores.shape[1]):
        column = scores[:, t][~np.isnan(scores[:, t])]
        per_trial.append(100 * column.mean() if column.size else np.nan)
    asked = [value for value in per_trial if not np.isnan(value)]
    result = trial_accuracy(scores)
    np.testing.assert_allclose(result.per_trial, per_trial)
    assert result.accuracy == pytest.approx(np.mean(asked))
    assert result.low == pytest.approx(min(asked))
    assert result.high == pytest.approx(max(asked))
    assert result.sd == pytest.approx(np.std(asked, ddof=1))
    assert result.scored == int((~np.isnan(scores)).sum())
    assert result.items == int((~np.isnan(scores)).any(axis=1).sum())


def test_nothing_scored_is_nan_not_zero():
    result = trial_accuracy(np.full((5, 3), np.nan))
    assert np.isnan(result.accuracy) and np.isnan(result.low) and result.items == 0


@pytest.mark.parametrize("seed", range(3))
def test_bootstrap_agrees_with_scipy_on_one_trial(seed):
    rng = np.random.default_rng(seed)
    values = (rng.random(300) < 0.3 + 0.4 * rng.random()).astype(float)
    ours = bootstrap_accuracy(values[None, :, None], resamples=4000, seed=seed)
    theirs = stats.bootstrap(
        (100 * values,),
        np.mean,
        n_resamples=4000,
        method="percentile",
        random_state=np.random.default_rng(seed + 100),
    ).confidence_interval
    # Two independent sets of resamples: the bounds agree to Monte Carlo error.
    assert ours.lower[0] == pytest.approx(theirs.low, abs=1.0)
    assert ours.upper[0] == pytest.approx(theirs.high, abs=1.0)


def test_bootstrap_is_paired_and_reproducible():
    rng = np.random.default_rng(7)
    scores = np.stack([random_scores(rng, 60, 3, missing=0.0)] * 2)
    first = bootstrap_accuracy(scores, resamples=500, seed=3)
    again = bootstrap_accuracy(scores, resamples=500, seed=3)
    # The same items drawn for both runs: identical scores, identical CIs.
    np.testing.assert_array_equal(first.lower[0], first.lower[1])
    np.testing.assert_array_equal(first.lower, again.lower)
    point = trial_accuracy(scores[0]).accuracy
    assert first.lower[0] <= point <= first.upper[0]


def test_bootstrap_resamples_items_across_trials():
    # Item 0 is right in every trial, item 1 wrong in every trial: a resample
    # holds whole items, so every resampled accuracy is 0, 50 or 100.
    scores = np.array([[[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]])
    interval = bootstrap_accuracy(scores, resamples=300, seed=1)
    assert interval.lower[0] == 0.0 and interval.upper[0] == 100.0


REPLIES = [
    ("答案：B", AnswerKey(4, frozenset({1})), ("B", Grade.CORRECT)),
    ("The answer is (C).", AnswerKey(4, frozenset({1})), ("C", Grade.WRONG)),
    ("答案是A和C", AnswerKey(4, frozenset({1})), ("A, C", Grade.MULTIPLE)),
    ("答案是A和C", AnswerKey(4, frozenset({0, 2}), True), ("A, C", Grade.CORRECT)),
    ("Answer: A", AnswerKey(4, frozenset({0, 2}), True), ("A", Grade.WRONG)),
    ("I cannot answer this.", AnswerKey(4, frozenset({1})), ("", Grade.REFUSAL)),
    ("It depends.", AnswerKey(5, frozenset({4})), ("", Grade.NONE)),
    ("", AnswerKey(4, frozenset({1})), ("", Grade.NONE)),
    ("正确。", AnswerKey(0, frozenset({True})), ("true", Grade.CORRECT)),
    ("Неверно", AnswerKey(0, frozenset({True})), ("false", Grade.WRONG)),
    ("Đáp án: Sai", AnswerKey(0, frozenset({False})), ("false", Grade.CORRECT)),
    ("Tôi không biết.", AnswerKey(0, frozenset({False})), ("", Grade.REFUSAL)),
]


@pytest.mark.parametrize(("reply", "key", "expected"), REPLIES)
def test_read_answer(reply, key, expected):
    assert read_answer(reply, key) == expected


def test_read_answers_in_bulk_equal_one_by_one():
    texts = [reply for reply, _, _ in REPLIES] * 3
    keys = [key for _, key, _ in REPLIES] * 3
    answers, grades = read_answers(texts, keys)
    assert list(zip(answers, grades.tolist(), strict=True)) == [
        read_answer(text, key) for text, key in zip(texts, keys, strict=True)
    ]
