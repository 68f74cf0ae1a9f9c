"""A translated item checked part by part for what must survive translation —
numbers, units, standard identifiers, formulas, model designations — with the
token comparison of `preservation.py`: question against question, answer against
answer, each option and key point against its source, and counts that differ
named. The flag a reviewer reads names the part: "option C: 10.9 → 109"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from judging.translation.parts import part_names
from judging.translation.preservation import (
    CATEGORIES,
    PreservationResult,
    check_preservation,
)


@dataclass(frozen=True)
class PartCheck:
    """One option or key point, source against translation."""

    name: str  # "option C", "key point 2" (judging.translation.parts)
    result: PreservationResult


@dataclass(frozen=True)
class RenderingCheck:
    question: PreservationResult
    answer: PreservationResult
    missing: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, list[str]] = field(default_factory=dict)
    # Options and key points, in order; a count that differs is its own problem.
    parts: tuple[PartCheck, ...] = ()
    count_problems: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return (
            self.question.passed
            and self.answer.passed
            and all(part.result.passed for part in self.parts)
            and not self.count_problems
        )

    def problems(self) -> list[str]:
        """Each part that failed, named, with what changed: "option C: 10.9 → 109"."""
        return list(self.count_problems) + [
            f"{name}: {change}" for name, change in self.part_problems().items()
        ]

    def part_problems(self) -> dict[str, str]:
        """What changed in each part that failed, by part name ("question",
        "option C", "key point 2", "answer"): "10.9 → 109", "M8 missing"."""
        named = [("question", self.question), ("answer", self.answer)]
        named += [(part.name, part.result) for part in self.parts]
        found = {}
        for name, result in named:
            if result.passed:
                continue
            missing = ", ".join(dict.fromkeys(t.text for t in result.missing))
            extra = ", ".join(dict.fromkeys(t.text for t in result.extra))
            if missing and extra:
                found[name] = f"{missing} → {extra}"
            elif missing:
                found[name] = f"{missing} missing"
            else:
                found[name] = f"{extra} added"
        return found

    def as_dict(self) -> dict:
        return {
            "passed": self.passed,
            "missing": self.missing,
            "extra": self.extra,
            "problems": self.problems(),
            "part_problems": self.part_problems(),
            "count_problems": list(self.count_problems),
            "question": {
                "source_spans": self.question.source_spans(),
                "target_spans": self.question.target_spans(),
            },
            "answer": {
                "source_spans": self.answer.source_spans(),
                "target_spans": self.answer.target_spans(),
            },
            "parts": [
                {
                    "name": part.name,
                    "passed": part.result.passed,
                    "source_spans": part.result.source_spans(),
                    "target_spans": part.result.target_spans(),
                }
                for part in self.parts
            ],
        }


def _by_category(tokens) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for token in tokens:
        texts = grouped.setdefault(token.category, [])
        if token.text not in texts:
            texts.append(token.text)
    return {
        category: grouped[category] for category in CATEGORIES if category in grouped
    }


def check_rendering(
    source_question: str,
    source_answer: str,
    target_question: str,
    target_answer: str,
    *,
    source_language: str,
    target_language: str,
    source_options: Sequence[str] = (),
    target_options: Sequence[str] = (),
    source_key_points: Sequence[str] = (),
    target_key_points: Sequence[str] = (),
) -> RenderingCheck:
    """Check an item part by part: question against question, answer against
    answer, option C against option C, key point 2 against key point 2."""
    languages = {"source_language": source_language, "target_language": target_language}
    question = check_preservation(source_question, target_question, **languages)
    answer = check_preservation(source_answer, target_answer, **languages)
    count_problems = [
        f"{noun}: {len(sources)} in the source, {len(targets)} translated"
        for noun, sources, targets in (
            ("options", source_options, target_options),
            ("key points", source_key_points, target_key_points),
        )
        if len(sources) != len(targets)
    ]
    pairs = [
        *zip(source_options, target_options, strict=False),
        *zip(source_key_points, target_key_points, strict=False),
    ]
    names = part_names(
        min(len(source_options), len(target_options)),
        min(len(source_key_points), len(target_key_points)),
    )
    parts = [
        PartCheck(name, check_preservation(source, target, **languages))
        for name, (source, target) in zip(names, pairs, strict=True)
    ]
    results = [question, answer, *(part.result for part in parts)]
    return RenderingCheck(
        question=question,
        answer=answer,
        missing=_by_category([t for r in results for t in r.missing]),
        extra=_by_category([t for r in results for t in r.extra]),
        parts=tuple(parts),
        count_problems=tuple(count_problems),
    )


def segments(text: str, spans: list[dict]) -> list[dict]:
    """Split `text` into runs for highlighting: tokens carry their status and
    category, the text between them has empty ones."""
    runs, position = [], 0
    for span in sorted(spans, key=lambda span: span["start"]):
        if span["start"] < position:
            continue
        if span["start"] > position:
            runs.append(
                {"text": text[position : span["start"]], "status": "", "category": ""}
            )
        runs.append(
            {
                "text": text[span["start"] : span["end"]],
                "status": span["status"],
                "category": span["category"],
            }
        )
        position = span["end"]
    if position < len(text):
        runs.append({"text": text[position:], "status": "", "category": ""})
    return runs
