"""Other tools' score values mapped onto Assay's scales, pure.

Inspect's scorers write letters (`C` correct, `I` incorrect, `P` partial, `N` no
answer: inspect_ai/scorer/_metric.py CORRECT … NOANSWER), floats (0–1 from `f1`,
`exact`, a model-graded numeric scale) or any number a custom scorer returns;
lm-evaluation-harness writes per-sample metrics (`acc`, `acc_norm`,
`exact_match`: 0/1). Assay keeps 0–3 rubric scores or, on a binary benchmark,
correct (1) / incorrect (0). A `ScoreMap` says, value by value, what each becomes,
and `None` keeps the answer pending (no verdict); the import page shows the
distinct values found with their counts and what they map to before anything is
written (`preview`).

Numbers not named in `values` follow `full`, what 1.0 means on the target scale:
`round(value × full)` half up, which must land on the scale (0.5 × 3 = 1.5 → 2).
`full` None leaves such numbers unmapped: the import names them. NaN — what
Inspect's model-graded scorers write when the grader's reply holds no grade — is
no verdict, so pending.

A map's problems and the letters' meanings are Notes (benchmark.notes): English on
the command line and in the REST API, the reader's language on the import page.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

from benchmark.notes import Note

RUBRIC_TOP = 3
BINARY_TOP = 1
# inspect_ai/scorer/_metric.py: the letter values of a Score.
LETTERS = ("C", "I", "P", "N")
LETTER_NAMES = {
    "C": Note(gettext_noop("correct")),
    "I": Note(gettext_noop("incorrect")),
    "P": Note(gettext_noop("partially correct")),
    "N": Note(gettext_noop("no answer")),
    "NaN": Note(gettext_noop("no verdict (the grader gave no grade)")),
}
# Inspect's built-in scorers that write letters (inspect_ai/scorer/: match, includes,
# pattern, answer, choice, model_graded_qa, model_graded_fact) and those that write
# 0–1 floats (f1, exact).
LETTER_SCORERS = frozenset(
    {
        "match",
        "includes",
        "pattern",
        "answer",
        "choice",
        "model_graded_qa",
        "model_graded_fact",
    }
)
FRACTION_SCORERS = frozenset({"f1", "exact"})
# Assay's own export writes the 0–3 rubric verdict under this scorer name
# (judging.interop.inspect_log.RUBRIC_SCORER).
ASSAY_RUBRIC = "rubric"


@dataclass(frozen=True)
class ScoreMap:
    """`values`: a value's text (`C`, `0.5`, `2`) → the Assay score, None for
    pending; `full`: what 1.0 means for numbers not listed (None: unmapped)."""

    top: int
    values: dict[str, int | None] = field(default_factory=dict)
    full: int | None = None

    def apply(self, value) -> tuple[int | None, Note | str]:
        """(score, problem): the mapped score (None: pending), or a problem naming a
        value the map does not place on the scale."""
        if value is None or is_nan(value):
            return None, ""
        text = value_text(value)
        if text in self.values:
            return self.values[text], ""
        number = as_number(value)
        if number is None:
            return None, Note(
                gettext_noop("score %(value)s is not mapped; choose what it means."),
                value=repr(text[:40]),
            )
        if self.full is None:
            return None, Note(
                gettext_noop(
                    "score %(value)s is not mapped; say what 1.0 means on the "
                    "0–%(top)s scale."
                ),
                value=text[:40],
                top=self.top,
            )
        mapped = math.floor(number * self.full + 0.5)
        if not 0 <= mapped <= self.top:
            return None, Note(
                gettext_noop(
                    "score %(value)s × %(full)s = %(mapped)s is off the 0–%(top)s "
                    "scale."
                ),
                value=text[:40],
                full=self.full,
                mapped=mapped,
                top=self.top,
            )
        return mapped, ""


def wrong_scale(top: int) -> Note:
    """A map chosen for another scale than the benchmark's."""
    return Note(gettext_noop("the score map is for a 0–%(top)s scale."), top=top)


def is_nan(value) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip().lower() == "nan"


def value_text(value) -> str:
    """The text a value is listed under: `1` for 1 and 1.0, `0.5`, `C`."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if is_nan(value):
        return "NaN"
    number = as_number(value)
    if number is not None and not isinstance(value, str):
        return str(int(number)) if number.is_integer() else repr(number)
    return str(value).strip()


def as_number(value) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def default_map(scorer: str, values: list, top: int) -> ScoreMap:
    """The map the import page starts from. Letters: C full marks, I and N 0, P a
    1 on the rubric (partially correct) and incorrect on the binary scale (LPFQA
    counts an answer correct only with every key point). A known 0–1 scorer, or
    numbers all within 0–1: 1.0 is full marks. Integers already on the scale
    (a custom 0–3 scorer) keep their value. Anything else starts unmapped."""
    if scorer == ASSAY_RUBRIC:
        return ScoreMap(top=top, values={str(n): n for n in range(top + 1)})
    values = [v for v in values if v is not None and not is_nan(v)]
    texts = {value_text(v) for v in values}
    numbers = [as_number(v) for v in values]
    mapped: dict[str, int | None] = {}
    if texts & set(LETTERS) or scorer in LETTER_SCORERS:
        partial = 1 if top == RUBRIC_TOP else 0
        mapped = {"C": top, "I": 0, "P": partial, "N": 0}
        return ScoreMap(top=top, values=mapped)
    if any(n is None for n in numbers):
        return ScoreMap(top=top)
    within_unit = all(0 <= n <= 1 for n in numbers)
    on_scale = all(n.is_integer() and 0 <= n <= top for n in numbers)
    if scorer in FRACTION_SCORERS or (within_unit and not on_scale):
        return ScoreMap(top=top, full=top)
    if on_scale:
        return ScoreMap(top=top, values={t: int(as_number(t)) for t in texts})
    return ScoreMap(top=top)


@dataclass(frozen=True)
class PreviewRow:
    value: str
    meaning: Note | str
    count: int
    score: int | None
    problem: Note | str


def preview(values: list, score_map: ScoreMap) -> list[PreviewRow]:
    """Each distinct value found, how often, and what it becomes; letters first,
    then numbers in order."""
    counts = Counter(value_text(v) for v in values if v is not None)

    def order(text):
        number = as_number(text)
        return (
            text not in LETTERS,
            LETTERS.index(text) if text in LETTERS else 0,
            number if number is not None else math.inf,
            text,
        )

    rows = []
    for text in sorted(counts, key=order):
        score, problem = score_map.apply(text)
        rows.append(
            PreviewRow(
                value=text,
                meaning=LETTER_NAMES.get(text, ""),
                count=counts[text],
                score=score,
                problem=problem,
            )
        )
    return rows


def mapped_distribution(rows: list[PreviewRow], top: int) -> list[tuple[str, int]]:
    """(Assay score, answers) after the map, pending last."""
    totals = Counter()
    for row in rows:
        if not row.problem:
            totals[row.score] += row.count
    return [(str(s), totals[s]) for s in range(top + 1)] + [("pending", totals[None])]
