"""What the tested model is asked for one item (pure: no ORM).

An answering prompt is given three variables (judging.evaluation.actions
STAGE_PLACEHOLDERS): ``question``, the rendering's question text; ``options``, the
rendering's own option texts as lines under the letters the answer key uses
("A. …", "B. …"), empty for an item without options and for one whose question
already lists them; and ``answer_format``, one line in the rendering's language
saying how to reply (a letter, several letters, true or false, a short answer).

An item imported with its options written into the question ("A. 640 MPa",
"B) …", "（A）…" on lines of their own) already shows them: ``options`` is then
empty, so they are not shown twice.

`answer_kind` names which of the shipped per-format prompts an item takes
(judging.llm.prompts.FORMAT_ANSWER_TEMPLATES).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchmark.formats import (
    LETTERS,
    MULTIPLE_CHOICE,
    SHORT_ANSWER,
    TRUE_FALSE,
    letter_range,
)

MC_SINGLE = "mc_single"
MC_MULTIPLE = "mc_multiple"
TF = "true_false"
SHORT = "short_answer"
OPEN = "open"
ANSWER_KINDS = (MC_SINGLE, MC_MULTIPLE, TF, SHORT, OPEN)
KIND_NAMES = {
    MC_SINGLE: "multiple choice",
    MC_MULTIPLE: "multiple choice, several correct",
    TF: "true/false",
    SHORT: "short answer",
    OPEN: "open",
}

# The shipped answer prompts (judging.llm.prompts installs them): one per kind and
# language, in our own words. The option texts reach the model under the letters
# the answer key uses. A run started with no answer prompt chosen asks each
# binary item with its kind's prompt in the run's language (English for a
# language with none), and open items with the default answer prompt.
ANSWERING_SYSTEM = (
    "You are a knowledgeable industrial engineer. Answer the question accurately "
    "and concisely, stating units, conditions and constraints where they matter."
)
ANSWERING_SYSTEMS = {
    "en": ANSWERING_SYSTEM,
    "zh": "你是一名经验丰富的工业工程师。请准确、简洁地作答，必要时写明单位和条件。",
}

ANSWER_MC_SINGLE_EN = """\
{{question}}

Options:
{{options}}

Exactly one option is correct. {{answer_format}}"""

ANSWER_MC_MULTIPLE_EN = """\
{{question}}

Options:
{{options}}

One or more options are correct. {{answer_format}}"""

ANSWER_TF_EN = """\
Is the following statement true or false?

{{question}}

{{answer_format}}"""

ANSWER_SHORT_EN = """\
{{question}}

{{answer_format}} State the result and the conditions it depends on."""

ANSWER_MC_SINGLE_ZH = """\
{{question}}

选项：
{{options}}

只有一个选项正确。{{answer_format}}"""

ANSWER_MC_MULTIPLE_ZH = """\
{{question}}

选项：
{{options}}

正确选项可能不止一个。{{answer_format}}"""

ANSWER_TF_ZH = """\
判断下面的说法是否正确。

{{question}}

{{answer_format}}"""

ANSWER_SHORT_ZH = """\
{{question}}

{{answer_format}}给出结论及其成立的条件。"""

FORMAT_ANSWER_LANGUAGES = ("en", "zh")
FORMAT_ANSWER_TEXTS = {
    (MC_SINGLE, "en"): ANSWER_MC_SINGLE_EN,
    (MC_SINGLE, "zh"): ANSWER_MC_SINGLE_ZH,
    (MC_MULTIPLE, "en"): ANSWER_MC_MULTIPLE_EN,
    (MC_MULTIPLE, "zh"): ANSWER_MC_MULTIPLE_ZH,
    (TF, "en"): ANSWER_TF_EN,
    (TF, "zh"): ANSWER_TF_ZH,
    (SHORT, "en"): ANSWER_SHORT_EN,
    (SHORT, "zh"): ANSWER_SHORT_ZH,
}
_STEMS = {MC_SINGLE: "mc-single", MC_MULTIPLE: "mc-multiple", TF: "tf", SHORT: "short"}
FORMAT_ANSWER_TEMPLATES = {
    kind: {
        language: f"answer-{stem}-{language}" for language in FORMAT_ANSWER_LANGUAGES
    }
    for kind, stem in _STEMS.items()
}
# (name, language, system text, text, note) of each, for the installer.
FORMAT_ANSWER_SPECS = tuple(
    (
        FORMAT_ANSWER_TEMPLATES[kind][language],
        language,
        ANSWERING_SYSTEMS[language],
        text,
        f"Answer prompt for {KIND_NAMES[kind]} items ({language})",
    )
    for (kind, language), text in FORMAT_ANSWER_TEXTS.items()
)


def format_answer_names(language: str) -> dict[str, str]:
    """{answer kind: the name of its shipped prompt in `language`, or English}."""
    if language not in FORMAT_ANSWER_LANGUAGES:
        language = "en"
    return {kind: by[language] for kind, by in FORMAT_ANSWER_TEMPLATES.items()}


# An option written into a question: on its own line, a letter A–G as "A.",
# "A．", "A)", "A）", "(A)", "（A）", "A、", "A:" or "A：", then its text.
_OPTION_LINE = re.compile(
    r"^[ \t]*(?:[(（]([A-G])[)）]|([A-G])[.．)）、:：])[ \t]*\S", re.MULTILINE
)

# The reply instruction per kind and language; the letters are filled in.
_ANSWER_FORMATS = {
    "en": {
        MC_SINGLE: "Reply with the letter of the one correct option ({letters}).",
        MC_MULTIPLE: (
            "Reply with the letters of every correct option ({letters}), "
            "separated by commas."
        ),
        TF: "Reply with true or false.",
        SHORT: "Reply with a short answer.",
        OPEN: "",
    },
    "zh": {
        MC_SINGLE: "请只回答唯一正确选项的字母（{letters}）。",
        MC_MULTIPLE: "请回答所有正确选项的字母（{letters}），用逗号分隔。",
        TF: "请回答“正确”或“错误”。",
        SHORT: "请简要作答。",
        OPEN: "",
    },
}


def answer_kind(item_format: str, multiple_answers: bool = False) -> str:
    if item_format == MULTIPLE_CHOICE:
        return MC_MULTIPLE if multiple_answers else MC_SINGLE
    if item_format == TRUE_FALSE:
        return TF
    if item_format == SHORT_ANSWER:
        return SHORT
    return OPEN


def listed_options(question: str) -> int:
    """How many options the question lists itself: lines marked A, B, … in order
    from A, at least two; 0 when it lists none."""
    letters = [a or b for a, b in _OPTION_LINE.findall(question)]
    if len(letters) >= 2 and letters == list(LETTERS[: len(letters)]):
        return len(letters)
    return 0


def embeds_options(question: str) -> bool:
    return listed_options(question) > 0


def options_text(options: Sequence[str], question: str = "") -> str:
    """The options as the model sees them, one "A. text" line each; empty for
    none, and when `question` already lists them."""
    if not options or embeds_options(question):
        return ""
    return "\n".join(
        f"{letter}. {text.strip()}"
        for letter, text in zip(LETTERS, options, strict=False)
    )


def answer_format(kind: str, language: str, n_options: int = 0) -> str:
    formats = _ANSWER_FORMATS.get(language, _ANSWER_FORMATS["en"])
    return formats[kind].format(letters=letter_range(n_options))


def answer_variables(
    *,
    item_format: str,
    multiple_answers: bool,
    question: str,
    options: Sequence[str],
    language: str,
) -> dict[str, str]:
    """The variables of one item's answering prompt."""
    kind = answer_kind(item_format, multiple_answers)
    # The letters the model is told to choose from are those it is shown.
    shown = listed_options(question) or len(options)
    return {
        "question": question,
        "options": options_text(options, question),
        "answer_format": answer_format(kind, language, shown),
    }
