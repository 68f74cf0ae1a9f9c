"""LPFQA's construction prompts (paper 001 §3.2 and its appendix B): a forum
post to a question–answer pair, the quality filter, and the conversion to
multiple choice or to a short answer with key points — the protocol the paper
describes in Assay's own wording (the paper's prompt texts are not reproduced).
`prompts.py` installs them as templates; construction.forum fills them.

The section headings ("Post title:", "Question:", …) are the contract with the
stages' variables; the replies are JSON objects the stages' validators
(construction.forum.outputs) check."""

from judging.llm.models import PromptTemplate

Purpose = PromptTemplate.Purpose
STRING = {"type": "string"}

LPFQA_WORDING = (
    "follows the construction protocol LPFQA describes (paper 001, §3.2 and "
    "appendix B); Assay's own wording, not the paper's prompt"
)

FORUM_EXTRACT_SYSTEM = (
    "You turn discussions from professional technical forums into exam "
    "questions for experts. You read the post as it is given (its text, and the "
    "screenshot of its page when one is attached) and never invent facts it "
    "does not contain."
)

FORUM_EXTRACT_TEXT = """\
Read the forum post below ({{forum}}). If a screenshot of the page is attached, \
read it too: the question or its replies may be visible only there.

1. Decide whether this is a real discussion that asks something. An error page, \
an empty or sign-in page, an advertisement, a title without a body, or an \
announcement that asks nothing is not: answer {"is_valid": false} and nothing else.
2. Otherwise write one question from what the original poster asks. It must \
stand on its own (no "the above", no "this post"), be phrased clearly, need \
specialist knowledge and several reasoning steps rather than a fact lookup, and \
have one answer that reasoning or experiment can confirm. Keep the post's language.
3. If the replies hold a substantive answer, write the most complete and \
accurate answer they support, and explain the reasoning behind it. If no reply \
answers it, leave both empty.

Post title: {{title}}

Post body:
{{post_text}}

Reply with only this JSON object:
{"is_valid": true, "question": "...", "answer": "...", "explanation": "...", \
"has_answer": 1}
("has_answer" is 1 when the replies gave an answer, else 0.)"""

FORUM_QUALITY_SYSTEM = (
    "You are a strict reviewer of expert-level benchmark questions. You keep a "
    "question only when it meets every criterion you are given."
)

FORUM_QUALITY_TEXT = """\
Judge whether the question–answer pair below is good enough for an expert \
benchmark. Keep it only if all of these hold:
- correct: every fact, figure and piece of background it states is right;
- complete: it gives everything needed to solve it, and nothing superfluous;
- professional: it takes specialist knowledge and analysis, not common sense;
- lasting: its answer does not depend on when it is asked;
- hard enough: deep domain knowledge, a multi-step (possibly cross-disciplinary) \
chain of reasoning, abstraction, and no shortcut to the answer.

Question: {{question}}

Answer: {{answer}}

Explanation: {{explanation}}

Reply with only this JSON object: {"is_qualified": true or false, "reason": \
"why it falls short (empty when it is kept)"}"""

FORUM_MULTIPLE_CHOICE_SYSTEM = (
    "You write hard multiple-choice questions for an expert benchmark, with "
    "wrong options that a knowledgeable but careless reader would pick."
)

FORUM_MULTIPLE_CHOICE_TEXT = """\
Rewrite the question–answer pair below as one multiple-choice question.
- Keep what the question asks; adjust the wording to fit a choice among options.
- Give 5 to 7 options: exactly one is correct (it carries the answer below), the \
others are distinct, plausible mistakes from the same field — common errors or \
misconceptions, not jokes.
- Put the correct option at a random place; give all options the same \
grammatical shape; do not number or letter them.
- Keep it hard (several reasoning steps) and in the language of the question.

Question: {{question}}

Answer: {{answer}}

Explanation: {{explanation}}

Reply with only this JSON object: {"question": "...", "options": ["...", ...], \
"correct": "the letter of the correct option (A for the first)", "explanation": \
"why that option is right"}"""

FORUM_SHORT_ANSWER_SYSTEM = (
    "You write short-answer questions for an expert benchmark, with the key "
    "points a grader checks an answer against."
)

FORUM_SHORT_ANSWER_TEXT = """\
Rewrite the question–answer pair below as one short-answer question.
- Keep what the question asks; adjust the wording to ask for a written answer.
- Write a reference answer that carries everything the explanation establishes, \
specific and well reasoned, in professional language.
- List 1 to 5 key points: the facts or conclusions an answer must contain to be \
correct.
- Keep it hard and in the language of the question.

Question: {{question}}

Answer: {{answer}}

Explanation: {{explanation}}

Reply with only this JSON object: {"question": "...", "answer": "...", \
"key_points": ["...", ...]}"""


def _object(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required}


# The DefaultTemplate fields of each (judging.llm.prompts installs them).
LPFQA_TEMPLATES = (
    {
        "name": "lpfqa-forum-extract",
        "purpose": Purpose.FORUM_EXTRACT,
        "system_text": FORUM_EXTRACT_SYSTEM,
        "text": FORUM_EXTRACT_TEXT,
        "output_schema": _object(
            {
                "is_valid": {"type": "boolean"},
                "question": STRING,
                "answer": STRING,
                "explanation": STRING,
                "has_answer": {"type": "integer", "enum": [0, 1]},
            },
            ["is_valid"],
        ),
        "note": "LPFQA forum post (and screenshot) to a QA pair; " + LPFQA_WORDING,
    },
    {
        "name": "lpfqa-forum-quality",
        "purpose": Purpose.FORUM_QUALITY,
        "system_text": FORUM_QUALITY_SYSTEM,
        "text": FORUM_QUALITY_TEXT,
        "output_schema": _object(
            {"is_qualified": {"type": "boolean"}, "reason": STRING},
            ["is_qualified", "reason"],
        ),
        "note": "LPFQA quality filter of an extracted QA pair; " + LPFQA_WORDING,
    },
    {
        "name": "lpfqa-forum-multiple-choice",
        "purpose": Purpose.FORUM_MULTIPLE_CHOICE,
        "system_text": FORUM_MULTIPLE_CHOICE_SYSTEM,
        "text": FORUM_MULTIPLE_CHOICE_TEXT,
        "output_schema": _object(
            {
                "question": STRING,
                "options": {
                    "type": "array",
                    "items": STRING,
                    "minItems": 5,
                    "maxItems": 7,
                },
                "correct": STRING,
                "explanation": STRING,
            },
            ["question", "options", "correct"],
        ),
        "note": "LPFQA conversion to multiple choice (5-7 options, one key); "
        + LPFQA_WORDING,
    },
    {
        "name": "lpfqa-forum-short-answer",
        "purpose": Purpose.FORUM_SHORT_ANSWER,
        "system_text": FORUM_SHORT_ANSWER_SYSTEM,
        "text": FORUM_SHORT_ANSWER_TEXT,
        "output_schema": _object(
            {
                "question": STRING,
                "answer": STRING,
                "key_points": {
                    "type": "array",
                    "items": STRING,
                    "minItems": 1,
                    "maxItems": 5,
                },
            },
            ["question", "answer", "key_points"],
        ),
        "note": "LPFQA conversion to a short answer with 1-5 key points; "
        + LPFQA_WORDING,
    },
)
