"""The binary key-point judge (LPFQA): its shipped prompt states LPFQA's rules and
never shows the question; its verdicts parse from "Score: 1" lines, JSON, or both,
and a reply that states both 0 and 1 is no verdict."""

import pytest

from judging.llm.outputs import OutputError, binary_verdict_validator
from judging.llm.prompts import DEFAULT_TEMPLATES


@pytest.mark.parametrize(
    ("reply", "score", "basis"),
    [
        (
            'Score: 1\n{"score": 1, "basis": "both key points met"}',
            1,
            "both key points met",
        ),
        ('{"score": 0, "basis": "misses the unit"}', 0, "misses the unit"),
        (
            "Score: 0\nThe answer gives 12 V where the key point needs 24 V.",
            0,
            "The answer gives 12 V where the key point needs 24 V.",
        ),
        ("**Score:** 1\nAll key points are present.", 1, "All key points are present."),
        ('得分：1\n{"score": 1, "basis": "要点均满足"}', 1, "要点均满足"),
        ('score: 1\n```json\n{"score": 1, "reason": "met"}\n```', 1, "met"),
        # LPFQA's published output (001, Appendix): basis line, score line, then
        # "JSON:" and {"answer_score": x}.
        (
            "Grading Basis: Both process and path differ from the reference.\n"
            'Score: 0\nJSON:\n{"answer_score": 0}',
            0,
            "Both process and path differ from the reference.",
        ),
        (
            "- Grading Basis: every evaluation point is met.\n- Score: 1\n- JSON:\n"
            '```json\n{"answer_score": 1}\n```',
            1,
            "every evaluation point is met.",
        ),
        ('{"answer_score": 1}', 1, ""),
    ],
)
def test_verdicts_parse(reply, score, basis):
    assert binary_verdict_validator(reply) == {"score": score, "basis": basis}


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "The answer looks right to me.",
        'Score: 1\n{"score": 0, "basis": "contradiction"}',
        "Score: 1\nScore: 0",
        '{"score": 2, "basis": "out of range"}',
        'Score: 1 {"score": 1} and {"score": 0}',
        'Grading Basis: fine.\nScore: 1\nJSON:\n{"answer_score": 0}',
        '{"answer_score": 2}',
    ],
)
def test_no_verdict_is_an_error_never_a_default(reply):
    with pytest.raises(OutputError):
        binary_verdict_validator(reply)


def test_the_prompt_states_lpfqas_rules_and_hides_the_question():
    (spec,) = [t for t in DEFAULT_TEMPLATES if t.name == "lpfqa-keypoint-judge"]
    text = spec.system_text + spec.text
    assert "{{question}}" not in text
    for variable in ("{{reference_answer}}", "{{key_points}}", "{{response}}"):
        assert variable in spec.text
    for rule in (
        "key points take precedence over the reference answer",
        "meets every key point",
        "later correction overrides an earlier",
        "Equivalent terms",
    ):
        assert rule in " ".join(text.split())
    assert spec.output_schema["properties"]["score"]["maximum"] == 1
