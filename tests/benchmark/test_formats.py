"""The format rules (benchmark.formats), checked directly: every rule, both ways."""

import pytest

from benchmark.formats import (
    MULTIPLE_CHOICE,
    OPEN,
    SHORT_ANSWER,
    TRUE_FALSE,
    FormatIssue,
    RenderingFormat,
    format_issues,
    parse_bool,
    parse_letters,
)

FOUR = ["8.8", "10.9", "12.9", "4.6"]


def rendering(language="zh", answer="", options=(), key_points=()):
    return RenderingFormat(language, answer, list(options), list(key_points))


def issues(
    item_format,
    *renderings,
    correct_options=(),
    multiple_answers=False,
    correct_answer=None,
):
    return [
        (issue.field, issue.language, issue.index, issue.message)
        for issue in format_issues(
            item_format,
            correct_options=list(correct_options),
            multiple_answers=multiple_answers,
            correct_answer=correct_answer,
            renderings=list(renderings),
            source_language="zh",
        )
    ]


def test_each_format_accepts_its_data():
    assert issues(OPEN, rendering(answer="800 MPa")) == []
    assert issues(MULTIPLE_CHOICE, rendering(options=FOUR), correct_options="B") == []
    assert issues(TRUE_FALSE, rendering(), correct_answer=False) == []
    assert (
        issues(SHORT_ANSWER, rendering(answer="800 MPa", key_points=["800 MPa"])) == []
    )


def test_multiple_choice_takes_four_to_seven_options():
    for count in (4, 7):
        options = [f"option {n}" for n in range(count)]
        assert (
            issues(MULTIPLE_CHOICE, rendering(options=options), correct_options="A")
            == []
        )
    assert issues(
        MULTIPLE_CHOICE, rendering(options=FOUR[:3]), correct_options="A"
    ) == [("options", "zh", None, "3 options; a multiple-choice item has 4 to 7")]
    eight = [f"option {n}" for n in range(8)]
    assert issues(MULTIPLE_CHOICE, rendering(options=eight), correct_options="A") == [
        ("options", "zh", None, "8 options; a multiple-choice item has 4 to 7")
    ]


def test_multiple_choice_options_are_non_empty_and_distinct():
    options = ["8.8", " ", "12.9", "8.8 "]
    assert issues(MULTIPLE_CHOICE, rendering(options=options), correct_options="A") == [
        ("options", "zh", 1, "empty option"),
        ("options", "zh", 3, "repeats an earlier option"),
    ]


def test_multiple_choice_needs_a_correct_option_within_range():
    assert issues(MULTIPLE_CHOICE, rendering(options=FOUR)) == [
        (
            "correct_options",
            "",
            None,
            "a multiple-choice item needs its correct option(s)",
        )
    ]
    assert issues(MULTIPLE_CHOICE, rendering(options=FOUR), correct_options="E") == [
        (
            "correct_options",
            "",
            None,
            "E is not an option (the item has options A–D)",
        )
    ]


def test_multiple_choice_has_exactly_one_correct_option_unless_it_declares_a_set():
    assert issues(MULTIPLE_CHOICE, rendering(options=FOUR), correct_options="AC") == [
        (
            "correct_options",
            "",
            None,
            "2 correct options but multiple_answers is not set; set it to true when "
            "the answer is a set of options",
        )
    ]
    assert (
        issues(
            MULTIPLE_CHOICE,
            rendering(options=FOUR),
            correct_options="AC",
            multiple_answers=True,
        )
        == []
    )
    # A declared set may hold a single option ("choose all that apply").
    assert (
        issues(
            MULTIPLE_CHOICE,
            rendering(options=FOUR),
            correct_options="C",
            multiple_answers=True,
        )
        == []
    )
    assert issues(MULTIPLE_CHOICE, rendering(options=FOUR), correct_options="AA") == [
        ("correct_options", "", None, "A given twice")
    ]


def test_a_translation_has_as_many_options_as_the_source_or_none_yet():
    english = rendering("en", options=["8.8", "10.9", "12.9", "4.6", "5.6"])
    assert issues(
        MULTIPLE_CHOICE, rendering(options=FOUR), english, correct_options="A"
    ) == [
        (
            "options",
            "en",
            None,
            "5 options where the source language has 4; a translation renders the "
            "same ones",
        )
    ]
    # A machine translation of the question alone: its options are still to come.
    assert (
        issues(
            MULTIPLE_CHOICE,
            rendering(options=FOUR),
            rendering("en"),
            correct_options="A",
        )
        == []
    )


def test_multiple_choice_and_true_false_need_no_reference_answer_but_others_do():
    assert issues(MULTIPLE_CHOICE, rendering(options=FOUR), correct_options="A") == []
    assert issues(TRUE_FALSE, rendering(), correct_answer=True) == []
    assert issues(OPEN, rendering(answer=" ")) == [
        ("answer", "zh", None, "empty answer")
    ]
    assert issues(SHORT_ANSWER, rendering(key_points=["800 MPa"])) == [
        ("answer", "zh", None, "empty answer")
    ]


def test_true_false_needs_its_answer_and_no_options():
    assert issues(TRUE_FALSE, rendering()) == [
        ("correct_answer", "", None, "a true/false item needs true or false")
    ]
    assert issues(TRUE_FALSE, rendering(options=FOUR), correct_answer=True) == [
        (
            "options",
            "zh",
            None,
            "only a multiple-choice item has options; this item's format is true_false",
        )
    ]


def test_short_answer_takes_one_to_five_non_empty_key_points():
    def short(*renderings):
        return issues(SHORT_ANSWER, *renderings)

    five = [f"point {n}" for n in range(5)]
    assert short(rendering(answer="a", key_points=five)) == []
    assert short(rendering(answer="a")) == [
        ("key_points", "zh", None, "0 key points; a short-answer item has 1 to 5")
    ]
    assert short(rendering(answer="a", key_points=[*five, "point 5"])) == [
        ("key_points", "zh", None, "6 key points; a short-answer item has 1 to 5")
    ]
    assert short(rendering(answer="a", key_points=["800 MPa", ""])) == [
        ("key_points", "zh", 1, "empty key point")
    ]
    assert short(
        rendering(answer="a", key_points=["800 MPa", "640 MPa"]),
        rendering("en", answer="a", key_points=["800 MPa"]),
    ) == [
        (
            "key_points",
            "en",
            None,
            "1 key point where the source language has 2; a translation renders "
            "the same ones",
        )
    ]


@pytest.mark.parametrize(
    ("item_format", "data", "field"),
    [
        (OPEN, {"correct_options": "A"}, "correct_options"),
        (TRUE_FALSE, {"correct_options": "A"}, "correct_options"),
        (SHORT_ANSWER, {"multiple_answers": True}, "multiple_answers"),
        (OPEN, {"correct_answer": True}, "correct_answer"),
        (MULTIPLE_CHOICE, {"correct_answer": True}, "correct_answer"),
    ],
)
def test_a_format_carries_no_other_formats_answer_key(item_format, data, field):
    options = FOUR if item_format == MULTIPLE_CHOICE else ()
    key_points = ["800 MPa"] if item_format == SHORT_ANSWER else ()
    data = {
        "correct_options": "A" if options else "",
        "correct_answer": True if item_format == TRUE_FALSE else None,
        **data,
    }
    found = issues(
        item_format,
        rendering(answer="a", options=options, key_points=key_points),
        **data,
    )
    assert [issue[0] for issue in found] == [field]
    assert "only a" in found[0][3] and item_format in found[0][3]


def test_open_items_have_no_options_or_key_points():
    assert issues(OPEN, rendering(answer="a", options=FOUR, key_points=["p"])) == [
        (
            "options",
            "zh",
            None,
            "only a multiple-choice item has options; this item's format is open",
        ),
        (
            "key_points",
            "zh",
            None,
            "only a short-answer item has key points; this item's format is open",
        ),
    ]


@pytest.mark.parametrize(
    ("value", "letters"),
    [
        ("B", ["B"]),
        ("a, c", ["A", "C"]),
        ("A;C", ["A", "C"]),
        ("A C", ["A", "C"]),
        ("A、C", ["A", "C"]),
        ("ACD", ["A", "C", "D"]),
        (" A, ", ["A"]),
        (["A", "C"], ["A", "C"]),
        ("", []),
        (None, []),
    ],
)
def test_option_letters_read_the_usual_ways(value, letters):
    assert parse_letters(value) == (letters, "")


@pytest.mark.parametrize("value", ["H", "1", "A or B", [1], ["AB?"], 3])
def test_anything_else_is_not_an_option_letter(value):
    letters, error = parse_letters(value)
    assert letters == [] and error


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        ("TRUE", True),
        ("yes", True),
        ("1", True),
        ("对", True),
        ("false", False),
        ("No", False),
        ("0", False),
        ("错误", False),
        ("", None),
        (None, None),
    ],
)
def test_true_false_answers(value, expected):
    assert parse_bool(value) == (expected, "")


@pytest.mark.parametrize("value", ["maybe", 1, 0.0, ["true"]])
def test_other_values_are_not_true_or_false(value):
    assert parse_bool(value)[0] is None and parse_bool(value)[1]


def test_issues_name_their_field_and_language():
    issue = format_issues(
        SHORT_ANSWER,
        correct_options=[],
        multiple_answers=False,
        correct_answer=None,
        renderings=[rendering(answer="a", key_points=["", "p"])],
        source_language="zh",
    )[0]
    assert issue == FormatIssue("key_points", "empty key point", "zh", 0)
