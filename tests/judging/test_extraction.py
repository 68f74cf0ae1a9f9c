"""Deterministic MC/TF answer extraction in Chinese, English, Russian and Vietnamese:
markers, labels, final answers, several answers and refusals (flagged), TF
negations; scoring one reply and grading many."""

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.evaluation.extraction import (
    Extraction,
    Grade,
    Outcome,
    accuracy,
    extract_all,
    extract_choice,
    extract_true_false,
    grade,
    score_choice,
)

ANSWERED, MULTIPLE = Outcome.ANSWERED, Outcome.MULTIPLE
REFUSAL, NONE = Outcome.REFUSAL, Outcome.NONE
A, B, C, D, E = range(5)

# (reply, options, outcome, values, reason)
CHOICE_TABLE = [
    # Chinese
    ("答案：C", 4, ANSWERED, (C,), "answer marker"),
    ("答案是（Ｂ）", 4, ANSWERED, (B,), "answer marker"),
    ("Ｂ．", 4, ANSWERED, (B,), "option label"),
    ("选B", 4, ANSWERED, (B,), "answer marker"),
    ("A项错误，C项片面，B项正确，故选B。", 4, ANSWERED, (B,), "answer marker"),
    ("正确答案为D。", 4, ANSWERED, (D,), "answer marker"),
    ("正确选项是A", 4, ANSWERED, (A,), "answer marker"),
    ("**答案：B**\n\n解析：螺栓的强度等级……", 4, ANSWERED, (B,), "answer marker"),
    ("答案为：**D**", 4, ANSWERED, (D,), "answer marker"),
    ("答案是B。……综上，答案是B", 4, ANSWERED, (B,), "answer marker"),
    ("答案：Ｂ、Ｄ", 4, MULTIPLE, (B, D), "answer marker"),
    ("答案是A。再想一想，答案是C", 4, MULTIPLE, (A, C), "answer marker"),
    ("答案是A。……最终答案：C", 4, ANSWERED, (C,), "final answer"),
    ("抱歉，我无法回答这个问题。", 4, REFUSAL, (), "refusal"),
    ("我不能确定。", 4, REFUSAL, (), "refusal"),
    ("我不能确定，但答案是B", 4, ANSWERED, (B,), "answer marker"),
    ("选项B的说法有一定道理。", 4, NONE, (), "nothing recognisable"),
    ("答案是F", 4, NONE, (), "nothing recognisable"),
    ("答案是B和F", 4, ANSWERED, (B,), "answer marker"),
    ("答案是F", 6, ANSWERED, (5,), "answer marker"),
    # English
    ("B", 4, ANSWERED, (B,), "option label"),
    ("(B)", 4, ANSWERED, (B,), "option label"),
    ("**B**", 4, ANSWERED, (B,), "option label"),
    ("B. 50 mm, because the flange is rated PN16.", 4, ANSWERED, (B,), "option label"),
    ("Answer: B", 4, ANSWERED, (B,), "answer marker"),
    ("The answer is (C) 50 mm.", 4, ANSWERED, (C,), "answer marker"),
    ("The correct answer is: **D**", 4, ANSWERED, (D,), "answer marker"),
    ("I would choose option A.", 4, ANSWERED, (A,), "answer marker"),
    ("Let me think about each option.\n\nC\n", 4, ANSWERED, (C,), "option label"),
    ("The answer is B and D.", 4, MULTIPLE, (B, D), "answer marker"),
    ("(A) is wrong. (B) is right.", 4, MULTIPLE, (A, B), "option label"),
    ("A. 10 mm is too thin.\nB. 20 mm fits PN16.", 4, MULTIPLE, (A, B), "option label"),
    ("A) 10 mm\nB) 20 mm\nC) 30 mm\n\nAnswer: B", 4, ANSWERED, (B,), "answer marker"),
    ("Answer: A. On reflection, final answer: D", 4, ANSWERED, (D,), "final answer"),
    ("Final answer: B. Final answer: C", 4, ANSWERED, (C,), "final answer"),
    ("I cannot answer this question.", 4, REFUSAL, (), "refusal"),
    ("I can't answer that without the drawing.", 4, REFUSAL, (), "refusal"),
    ("I cannot be sure, but the answer is B", 4, ANSWERED, (B,), "answer marker"),
    ("A bolt is a threaded fastener.", 4, NONE, (), "nothing recognisable"),
    ("The answer is a bolt.", 4, NONE, (), "nothing recognisable"),
    # Russian
    ("Ответ: C", 4, ANSWERED, (C,), "answer marker"),
    ("Правильный ответ — B.", 4, ANSWERED, (B,), "answer marker"),
    ("Ответ: вариант D", 4, ANSWERED, (D,), "answer marker"),
    ("Ответ: В", 4, ANSWERED, (B,), "answer marker"),  # Cyrillic В
    ("Ответ: В данном случае всё зависит от нагрузки.", 4, NONE, (), ""),
    ("Ответ: A или C", 4, MULTIPLE, (A, C), "answer marker"),
    ("Ответ: A. Окончательный ответ: B", 4, ANSWERED, (B,), "final answer"),
    ("Не могу ответить на этот вопрос.", 4, REFUSAL, (), "refusal"),
    # Vietnamese
    ("Đáp án: D", 4, ANSWERED, (D,), "answer marker"),
    ("Đáp án đúng là C.", 4, ANSWERED, (C,), "answer marker"),
    ("Chọn B.", 4, ANSWERED, (B,), "answer marker"),
    ("Chọn đáp án A", 4, ANSWERED, (A,), "answer marker"),
    ("Đáp án: B và D", 4, MULTIPLE, (B, D), "answer marker"),
    ("Đáp án: A. Đáp án cuối cùng: C", 4, ANSWERED, (C,), "final answer"),
    ("Tôi không thể trả lời câu hỏi này.", 4, REFUSAL, (), "refusal"),
]


@pytest.mark.parametrize(
    ("reply", "n_options", "outcome", "values", "reason"), CHOICE_TABLE
)
def test_choice_table(reply, n_options, outcome, values, reason):
    extraction = extract_choice(reply, n_options)
    assert (extraction.outcome, extraction.values) == (outcome, values)
    if reason:
        assert extraction.reason == reason


TRUE, FALSE = (True,), (False,)

TF_TABLE = [
    # Chinese
    ("正确", ANSWERED, TRUE),
    ("错误", ANSWERED, FALSE),
    ("对", ANSWERED, TRUE),
    ("错。", ANSWERED, FALSE),
    ("√", ANSWERED, TRUE),
    ("×", ANSWERED, FALSE),
    ("答案：对", ANSWERED, TRUE),
    ("判断：错", ANSWERED, FALSE),
    ("该说法错误，因为额定电压为10 kV。", ANSWERED, FALSE),
    ("这种说法是正确的。", ANSWERED, TRUE),
    ("正确答案是：错误", ANSWERED, FALSE),
    ("答案：正确。……答案：错误", MULTIPLE, (False, True)),
    ("答案：正确。……最终答案：错误", ANSWERED, FALSE),
    ("对于这种工况，需要考虑介质温度。", NONE, ()),
    ("该说法是否正确？我无法判断。", REFUSAL, ()),
    # English
    ("True", ANSWERED, TRUE),
    ("False. The rated voltage is 10 kV.", ANSWERED, FALSE),
    ("**False**", ANSWERED, FALSE),
    ("The statement is true.", ANSWERED, TRUE),
    ("Answer: True. Final answer: False", ANSWERED, FALSE),
    ("No, because the flange is rated PN16.", ANSWERED, FALSE),
    ("The true stress exceeds the yield strength.", NONE, ()),
    ("I cannot determine whether the statement is true or false.", REFUSAL, ()),
    # Russian
    ("Верно", ANSWERED, TRUE),
    ("Утверждение неверно.", ANSWERED, FALSE),
    ("Ответ: правильно", ANSWERED, TRUE),
    ("Нет, это не так.", ANSWERED, FALSE),
    ("Не могу сказать.", REFUSAL, ()),
    # Vietnamese
    ("Đúng", ANSWERED, TRUE),
    ("Sai.", ANSWERED, FALSE),
    ("Nhận định này là đúng", ANSWERED, TRUE),
    ("Đáp án cuối cùng: Sai", ANSWERED, FALSE),
    ("Không thể xác định nhận định này đúng hay sai.", REFUSAL, ()),
]


@pytest.mark.parametrize(("reply", "outcome", "values"), TF_TABLE)
def test_true_false_table(reply, outcome, values):
    extraction = extract_true_false(reply)
    assert (extraction.outcome, extraction.values) == (outcome, values)


# A negation must be read whole: its positive word sits inside it.
NEGATION_TRAPS = [
    ("不正确", False),
    ("不对", False),
    ("不完全正确", False),
    ("答案：不正确", False),
    ("该说法不正确。", False),
    ("The statement is not true.", False),
    ("The statement is not entirely correct.", False),
    ("Not true.", False),
    ("Incorrect.", False),
    ("Неверно", False),
    ("Не верно.", False),
    ("Утверждение не совсем верно.", False),
    ("Верно.", True),
    ("Утверждение верно.", True),
    ("Không đúng.", False),
    ("Nhận định này không đúng.", False),
    ("Không sai.", True),
    ("Đúng.", True),
]


@pytest.mark.parametrize(("reply", "value"), NEGATION_TRAPS)
def test_negations_are_not_read_as_their_positive_word(reply, value):
    assert extract_true_false(reply).values == (value,)


def test_a_verdict_offered_with_its_alternative_is_a_question_not_an_answer():
    for reply in ("True or false?", "正确还是错误？", "Верно или неверно?"):
        assert extract_true_false(reply).outcome is NONE


def test_spans_point_at_the_deciding_text():
    reply = "答案是A。……最终答案：C"
    (span,) = extract_choice(reply, 4).spans
    assert reply[slice(*span)] == "最终答案：C"
    reply = "The answer is B and D."
    (span,) = extract_choice(reply, 4).spans
    assert reply[slice(*span)] == "answer is B and D"


def test_decomposed_vietnamese_is_read_like_composed():
    choice = unicodedata.normalize("NFD", "Đáp án đúng là C.")
    assert extract_choice(choice, 4).values == (C,)
    verdict = unicodedata.normalize("NFD", "Nhận định này không đúng.")
    assert extract_true_false(verdict).values == (False,)


def test_score_choice_scores_answers_and_leaves_flagged_ones_unscored():
    assert score_choice(extract_choice("答案：B", 4), {B}) == 1
    assert score_choice(extract_choice("答案：C", 4), {B}) == 0
    assert score_choice(extract_choice("答案：C", 4), {B, C}) == 1  # two accepted keys
    assert score_choice(extract_choice("B and D", 4), {B}) is None
    assert score_choice(extract_choice("I cannot answer.", 4), {B}) is None
    assert score_choice(extract_choice("No idea.", 4), {B}) is None
    assert score_choice(extract_true_false("不正确"), {False}) == 1
    assert score_choice(extract_true_false("不正确"), {True}) == 0
    assert score_choice(Extraction(REFUSAL), {True}) is None


def test_extract_all_agrees_with_one_reply_at_a_time():
    rows = [(reply, n) for reply, n, *_ in CHOICE_TABLE]
    rows += [(reply, 0) for reply, *_ in TF_TABLE]
    extractions = extract_all([reply for reply, _ in rows], [n for _, n in rows])
    for k, (reply, n) in enumerate(rows):
        one = extract_choice(reply, n) if n else extract_true_false(reply)
        assert extractions.outcome[k] == one.outcome
        expected = -1 if one.value is None else int(one.value)
        assert extractions.value[k] == expected, reply


def test_grade_and_accuracy_count_each_flagged_outcome_apart():
    # Two models × four items: MC (key B), MC (keys A or C), TF (true), TF (false).
    replies = [
        ["B", "答案：C", "正确", "I cannot determine it."],
        ["Ответ: D", "A и C", "Sai", "Неверно"],
    ]
    n_options = [4, 4, 0, 0]
    accepted = np.zeros((4, 4), dtype=bool)
    accepted[0, B] = accepted[1, A] = accepted[1, C] = True
    accepted[2, 1] = True  # column 1: "true" is right
    accepted[3, 0] = True  # column 0: "false" is right
    extractions = extract_all(sum(replies, []), n_options * 2)
    grades = grade(extractions, np.tile(accepted, (2, 1))).reshape(2, 4)
    assert grades.tolist() == [
        [Grade.CORRECT, Grade.CORRECT, Grade.CORRECT, Grade.REFUSAL],
        [Grade.WRONG, Grade.MULTIPLE, Grade.WRONG, Grade.CORRECT],
    ]
    table = accuracy(grades)
    assert table.correct.tolist() == [3, 1]
    assert table.wrong.tolist() == [0, 2]
    assert table.multiple.tolist() == [0, 1]
    assert table.refusal.tolist() == [1, 0]
    assert table.none.tolist() == [0, 0]
    assert table.flagged.tolist() == [1, 1]
    np.testing.assert_allclose(table.accuracy, [1.0, 1 / 3])


def test_accuracy_of_a_model_that_answered_nothing_is_nan_not_zero():
    table = accuracy(np.array([[Grade.REFUSAL, Grade.NONE]]))
    assert np.isnan(table.accuracy[0])
    assert table.flagged.tolist() == [2]


PIECES = [
    *"ABCDEFGabcd ()（）[]*.:：,，、\n",
    *"答案 选 是 对 错 不 正确 最终答案 Answer: answer is Ответ: Đáp án "
    "Final answer: I cannot not true Неверно Không đúng".split(" "),
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=30).map("".join),
    st.integers(min_value=2, max_value=7),
)
def test_any_reply_gives_an_outcome_with_values_in_range(reply, n_options):
    choice = extract_choice(reply, n_options)
    assert all(0 <= value < n_options for value in choice.values)
    assert (len(choice.values) == 1) == (choice.outcome is ANSWERED)
    assert (len(choice.values) > 1) == (choice.outcome is MULTIPLE)
    verdict = extract_true_false(reply)
    assert set(verdict.values) <= {True, False}
    for start, end in choice.spans + verdict.spans:
        assert 0 <= start < end <= len(reply)
