"""Score maps (pure): the defaults per known scorer, the rule for numbers, the
preview's rows and the mapped distribution."""

import math

from judging.interop.score_maps import (
    BINARY_TOP,
    RUBRIC_TOP,
    ScoreMap,
    default_map,
    mapped_distribution,
    preview,
)


def test_letters_default_to_full_marks_partial_and_zero():
    rubric = default_map("model_graded_fact", ["C", "P", "I", "N"], RUBRIC_TOP)
    assert rubric.values == {"C": 3, "I": 0, "P": 1, "N": 0}
    binary = default_map("match", ["C", "I"], BINARY_TOP)
    # LPFQA counts an answer correct only with every key point: partial is wrong.
    assert binary.values == {"C": 1, "I": 0, "P": 0, "N": 0}


def test_numbers_default_by_what_they_look_like():
    assert default_map("f1", [0.0, 0.4, 1.0], RUBRIC_TOP).full == 3
    assert default_map("grader", [0.25, 0.5], RUBRIC_TOP).full == 3
    custom = default_map("rubric03", [0, 1, 2, 3], RUBRIC_TOP)
    assert custom.values == {"0": 0, "1": 1, "2": 2, "3": 3} and custom.full is None
    # Numbers beyond the scale have no default: the person says what they mean.
    assert default_map("points", [0, 5, 10], RUBRIC_TOP) == ScoreMap(top=RUBRIC_TOP)
    # Assay's own rubric scorer keeps 0–3 even where a letter slipped in.
    assert default_map("rubric", ["C", 2], RUBRIC_TOP).values["2"] == 2


def test_apply_rounds_half_up_and_refuses_off_the_scale():
    rule = ScoreMap(top=RUBRIC_TOP, full=3)
    assert [rule.apply(v)[0] for v in (0.0, 0.5, 0.4, 1.0)] == [0, 2, 1, 3]
    assert rule.apply(1.5)[1] == "score 1.5 × 3 = 5 is off the 0–3 scale."
    assert rule.apply(math.nan) == (None, "")  # no verdict: pending
    assert "not mapped" in ScoreMap(top=RUBRIC_TOP).apply("P")[1]
    listed = ScoreMap(top=RUBRIC_TOP, values={"1": 2}, full=3)
    assert listed.apply(1.0) == (2, "")  # a listed value wins over the rule


def test_preview_counts_each_value_and_the_distribution():
    values = ["I", "C", "C", math.nan, "P"]
    chosen = ScoreMap(top=RUBRIC_TOP, values={"C": 3, "I": 0})
    rows = preview(values, chosen)
    assert [(r.value, r.count, r.score, bool(r.problem)) for r in rows] == [
        ("C", 2, 3, False),
        ("I", 1, 0, False),
        ("P", 1, None, True),
        ("NaN", 1, None, False),
    ]
    assert rows[0].meaning == "correct"
    assert mapped_distribution(rows, RUBRIC_TOP) == [
        ("0", 1),
        ("1", 0),
        ("2", 0),
        ("3", 2),
        ("pending", 1),
    ]
