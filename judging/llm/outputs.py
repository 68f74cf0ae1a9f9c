"""Structured LLM output: find the JSON object in a reply and check it against the
purpose's contract. Pure functions, no ORM.

A validator takes the reply text and returns the parsed value or raises OutputError
with a message the gateway sends back to the model when it re-asks. Nothing here ever
invents a value: a reply that does not satisfy the contract is an error.
"""

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

OutputValidator = Callable[[str], Any]


class OutputError(ValueError):
    """The reply does not satisfy the output contract; the message says why."""


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_decoder = json.JSONDecoder()


def extract_json_object(text: str) -> dict:
    """The JSON object in `text`: inside a code fence, bare, or amid prose.

    A reply holding two different objects (`{"score": 3} … really {"score": 0}`)
    has no single answer: that is an error, never the first one taken.
    """
    if not text or not text.strip():
        raise OutputError("The reply is empty.")
    found = []
    for candidate in [match.group(1) for match in _FENCE.finditer(text)] + [text]:
        for value in _top_level_objects(candidate):
            if value not in found:
                found.append(value)
    if not found:
        raise OutputError("The reply contains no JSON object.")
    if len(found) > 1:
        raise OutputError(
            f"The reply contains {len(found)} different JSON objects; give exactly one."
        )
    return found[0]


def _top_level_objects(text: str) -> list[dict]:
    """The JSON objects in `text` that are not inside another one, in order."""
    objects, position = [], 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = _decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict):
            objects.append(value)
        position = end
    return objects


def _require_text(obj: dict, key: str, *, allow_empty: bool = True) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise OutputError(f'"{key}" must be a string.')
    if not allow_empty and not value.strip():
        raise OutputError(f'"{key}" must not be empty.')
    return value


def _require_int(obj: dict, key: str, low: int, high: int) -> int:
    value = obj.get(key)
    # JSON has one number type; 2.0 is accepted as 2, 2.5 and "2" are not.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OutputError(f'"{key}" must be an integer from {low} to {high}.')
    if isinstance(value, float) and not value.is_integer():
        raise OutputError(f'"{key}" must be an integer, not {value}.')
    if not low <= int(value) <= high:
        raise OutputError(f'"{key}" must be between {low} and {high}, not {value}.')
    return int(value)


def labelling_validator(dimensions: Mapping[str, Iterable[str]]) -> OutputValidator:
    """{"<dimension code>": "<label code>", …, "rationale": "…"}.

    `dimensions` maps each dimension code to its allowed label codes.
    """
    allowed = {code: frozenset(labels) for code, labels in dimensions.items()}

    def validate(text: str) -> dict:
        obj = extract_json_object(text)
        result = {}
        for dimension, codes in allowed.items():
            value = obj.get(dimension)
            if not isinstance(value, str) or value.strip() not in codes:
                raise OutputError(
                    f'"{dimension}" must be one of: {", ".join(sorted(codes))}; '
                    f"got {json.dumps(value, ensure_ascii=False)}."
                )
            result[dimension] = value.strip()
        result["rationale"] = str(obj.get("rationale") or "")
        return result

    return validate


# A verdict line before the JSON object ("Score: 2", "评分：2"; "Violation: no",
# "违规：否"): judges asked for one in their own language write it so, now and
# then as a list item ("- Score: 1", "• Score: 1", as LPFQA's format is laid out).
_SCORE_LINE = re.compile(
    r"^[ \t]*(?:[-•][ \t]+)?\**[ \t]*(?:score|评分|分数|得分)[ \t]*\**[ \t]*"
    r"[:：][ \t]*\**[ \t]*(-?\d+(?:\.\d+)?)(?![\d.])",
    re.IGNORECASE | re.MULTILINE,
)
_SAFETY_LINE = re.compile(
    r"^[ \t]*\**[ \t]*(?:safety[ _-]?violation|violation|安全违规|违规)[ \t]*\**"
    r"[ \t]*[:：][ \t]*\**[ \t]*(yes|no|true|false|是|否|有|无)",
    re.IGNORECASE | re.MULTILINE,
)
_SAFETY_WORDS = {
    "yes": True,
    "true": True,
    "是": True,
    "有": True,
    "no": False,
    "false": False,
    "否": False,
    "无": False,
}


def _line_and_object(text: str, line: re.Pattern) -> tuple[list[str], dict | None]:
    """The values of the reply's verdict lines, and its JSON object (None when it
    has none and no brace: a verdict line alone is a verdict, a line beside a
    broken or cut-off object is not)."""
    if not text or not text.strip():
        raise OutputError("The reply is empty.")
    values = [match.group(1) for match in line.finditer(text)]
    try:
        obj = extract_json_object(text)
    except OutputError:
        if "{" in text or not values:
            raise
        obj = None
    return values, obj


def _after_line(text: str, line: re.Pattern) -> str:
    """The lines after the first verdict line (its own rest, "分" say, is not a
    reason)."""
    end = text.find("\n", line.search(text).end())
    return text[end + 1 :].strip() if end != -1 else ""


def _number(value: str) -> int | float:
    number = float(value)
    return int(number) if number.is_integer() else number


def _stated_score(
    text: str,
    low: int,
    high: int,
    reason_keys: tuple[str, ...],
    score_keys: tuple[str, ...] = ("score",),
) -> tuple[int, str]:
    """(score, reason) of a reply stating its score in the JSON object (under the
    first of `score_keys` it has), a "Score: 2" / "评分：2" line, or both; every
    score it states must agree. The reason is the object's first of
    `reason_keys`, or without JSON the text after the score line."""
    lines, obj = _line_and_object(text, _SCORE_LINE)
    scores = {
        _require_int({"score": _number(value)}, "score", low, high) for value in lines
    }
    if obj is not None:
        key = next((key for key in score_keys if key in obj), score_keys[0])
        scores.add(_require_int(obj, key, low, high))
    if len(scores) > 1:
        raise OutputError(
            f"The reply states the scores {sorted(scores)}; give one score."
        )
    if obj is None:
        return scores.pop(), _after_line(text, _SCORE_LINE)
    reason = next((obj[key] for key in reason_keys if obj.get(key)), "")
    return scores.pop(), str(reason)


def score_validator(low: int, high: int) -> OutputValidator:
    """{"score": low..high, "reason": "…"} (rubric judging 0–3, faithfulness 1–5),
    from the JSON object, a score line, or both (`_stated_score`)."""

    def validate(text: str) -> dict:
        score, reason = _stated_score(text, low, high, ("reason",))
        return {"score": score, "reason": reason}

    return validate


# LPFQA's published judge output (001, Appendix): a grading-basis line, a
# "Score: x" line, then a JSON object whose key is "answer_score".
_BASIS_LINE = re.compile(
    r"^[ \t]*(?:[-•][ \t]+)?\**[ \t]*(?:grading[ \t]+basis|评分依据)[ \t]*\**[ \t]*"
    r"[:：][ \t]*(.+)$",
    re.IGNORECASE | re.MULTILINE,
)


def binary_verdict_validator(text: str) -> dict:
    """A binary key-point verdict: {"score": 0|1, "basis": "…"}.

    Key-point judges write a "Score: 1" line, a JSON object, or both: Assay's
    prompt asks for {"score", "basis"}, LPFQA's published one for a grading-basis
    line, "Score: x" and {"answer_score": x}; both are read. Every score the
    reply states must agree (two "Score:" lines that differ, or a line that
    contradicts the JSON, is no verdict); with no JSON reason the basis is the
    grading-basis line, else (no JSON) the text after the score line.
    """
    if text and text.strip() and "{" not in text and not _SCORE_LINE.search(text):
        raise OutputError('State the verdict as "Score: 0" or "Score: 1".')
    score, basis = _stated_score(
        text, 0, 1, ("basis", "reason"), score_keys=("score", "answer_score")
    )
    stated = _BASIS_LINE.search(text)
    if stated and not _json_reason(text):
        basis = stated.group(1).strip()
    return {"score": score, "basis": basis}


def _json_reason(text: str) -> str:
    """The basis or reason the reply's JSON object gives ("" for none)."""
    try:
        obj = extract_json_object(text)
    except OutputError:
        return ""
    return str(obj.get("basis") or obj.get("reason") or "")


def safety_validator(text: str) -> dict:
    """{"safety_violation": true|false, "reason": "…"}, plus "clause" when the
    judge names the violated clause of the source (the reason then starts with it).

    The verdict comes from the JSON object, a "Violation: yes" / "违规：否" line, or
    both; they must agree.
    """
    lines, obj = _line_and_object(text, _SAFETY_LINE)
    verdicts = {_SAFETY_WORDS[value.lower()] for value in lines}
    clause = ""
    if obj is not None:
        value = obj.get("safety_violation")
        if not isinstance(value, bool):
            raise OutputError('"safety_violation" must be true or false.')
        verdicts.add(value)
        reason = str(obj.get("reason") or "")
        clause = str(obj.get("clause") or "").strip()
    else:
        reason = _after_line(text, _SAFETY_LINE)
    if len(verdicts) > 1:
        raise OutputError("The reply says both violation and no violation.")
    violation = verdicts.pop()
    if not violation or not clause:
        return {"safety_violation": violation, "reason": reason}
    return {
        "safety_violation": True,
        "clause": clause,
        "reason": f"Violated clause: {clause}. {reason}".strip(),
    }


def translation_validator(
    options: int = 0, key_points: int = 0, *, answer_required: bool = True
) -> OutputValidator:
    """{"question": "…", "answer": "…"} with, for an item that has them, exactly
    `options` options and `key_points` key points, in order, none empty. A reply
    with another number is refused (and re-asked): a translated item must keep
    every part of its source. `answer_required`: the source has a reference answer
    (a multiple-choice item's may be empty: its key is the letters)."""

    def validate(text: str) -> dict:
        obj = extract_json_object(text)
        parsed = {
            "question": _require_text(obj, "question", allow_empty=False),
            "answer": _require_text(obj, "answer", allow_empty=not answer_required),
        }
        for key, count, noun in (
            ("options", options, "option"),
            ("key_points", key_points, "key point"),
        ):
            if count:
                parsed[key] = _require_texts(obj, key, count, noun)
        return parsed

    return validate


def _require_texts(obj: dict, key: str, count: int, noun: str) -> list[str]:
    values = obj.get(key)
    if not isinstance(values, list):
        raise OutputError(f'"{key}" must be a list of {count} {noun}s.')
    if len(values) != count:
        raise OutputError(f'"{key}" has {len(values)} {noun}s; the source has {count}.')
    if not all(isinstance(value, str) and value.strip() for value in values):
        raise OutputError(f'Every {noun} in "{key}" must be a non-empty string.')
    return values


def generation_validator(count: int) -> OutputValidator:
    """{"items": [{"question": "…", "answer": "…"}, …]}: 1 to `count` items, each
    with exactly those two non-empty strings (construction's generation stage)."""

    def validate(text: str) -> dict:
        obj = extract_json_object(text)
        items = obj.get("items")
        if not isinstance(items, list) or not 1 <= len(items) <= count:
            raise OutputError(f'"items" must be a list of 1 to {count} objects.')
        parsed = []
        for position, item in enumerate(items, start=1):
            if not isinstance(item, dict) or set(item) != {"question", "answer"}:
                raise OutputError(
                    f'Item {position} must have exactly "question" and "answer".'
                )
            parsed.append(
                {
                    "question": _require_text(item, "question", allow_empty=False),
                    "answer": _require_text(item, "answer", allow_empty=False),
                }
            )
        return {"items": parsed}

    return validate


def verdict_validator(text: str) -> dict:
    """{"verdict": "pass"|"reject", "reason": "…"} with a non-empty reason
    (construction's quality check)."""
    obj = extract_json_object(text)
    verdict = obj.get("verdict")
    if verdict not in ("pass", "reject"):
        raise OutputError('"verdict" must be "pass" or "reject".')
    return {
        "verdict": verdict,
        "reason": _require_text(obj, "reason", allow_empty=False),
    }


def search_queries_validator(count: int) -> OutputValidator:
    """{"queries": ["…", …]}: exactly `count` distinct non-empty strings
    (construction's search verification writes three)."""

    def validate(text: str) -> dict:
        obj = extract_json_object(text)
        queries = obj.get("queries")
        if not isinstance(queries, list) or not all(
            isinstance(query, str) and query.strip() for query in queries
        ):
            raise OutputError('"queries" must be a list of non-empty strings.')
        cleaned = [" ".join(query.split()) for query in queries]
        if len(cleaned) != count:
            raise OutputError(
                f"Give exactly {count} search queries, not {len(cleaned)}."
            )
        if len(set(cleaned)) != count:
            raise OutputError(f"The {count} search queries must differ.")
        return {"queries": cleaned}

    return validate


def corroboration_validator(results: int) -> OutputValidator:
    """{"verdict": "pass"|"reject", "reason": "…", "supporting": [n, …]}: the
    numbers of the search results (1 to `results`) that corroborate the
    candidate's core claims; a pass names at least one (construction's search
    verification)."""

    def validate(text: str) -> dict:
        obj = extract_json_object(text)
        verdict = obj.get("verdict")
        if verdict not in ("pass", "reject"):
            raise OutputError('"verdict" must be "pass" or "reject".')
        supporting = obj.get("supporting", [])
        if not isinstance(supporting, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= results
            for n in supporting
        ):
            raise OutputError(
                f'"supporting" must list result numbers from 1 to {results}.'
            )
        if verdict == "pass" and not supporting:
            raise OutputError(
                'A pass names the results that corroborate it in "supporting".'
            )
        return {
            "verdict": verdict,
            "reason": _require_text(obj, "reason", allow_empty=False),
            "supporting": sorted(set(supporting)),
        }

    return validate


CLAIM_STATUSES = ("supported", "contradicted", "unsupported")


def claim_queries_validator(
    max_claims: int = 6, max_queries: int = 2
) -> OutputValidator:
    """{"claims": [{"claim": "…", "queries": ["…", …]}, …]}: 1 to `max_claims`
    checkable claims of a reference answer, each with 1 to `max_queries`
    distinct web queries (construction's deep verification)."""

    def validate(text: str) -> dict:
        obj = extract_json_object(text)
        claims = obj.get("claims")
        if not isinstance(claims, list) or not 1 <= len(claims) <= max_claims:
            raise OutputError(f'"claims" must list 1 to {max_claims} claims.')
        parsed = []
        for position, claim in enumerate(claims, start=1):
            queries = claim.get("queries") if isinstance(claim, dict) else None
            if not isinstance(queries, list) or not all(
                isinstance(query, str) and query.strip() for query in queries
            ):
                raise OutputError(f"Claim {position} needs its search queries.")
            cleaned = list(dict.fromkeys(" ".join(q.split()) for q in queries))
            if not 1 <= len(cleaned) <= max_queries:
                raise OutputError(
                    f"Claim {position}: give 1 to {max_queries} distinct queries."
                )
            parsed.append(
                {
                    "claim": _require_text(claim, "claim", allow_empty=False),
                    "queries": cleaned,
                }
            )
        return {"claims": parsed}

    return validate


def deep_verdict_validator(reference_answer: str) -> OutputValidator:
    """{"claims": [{"claim", "status", "basis"}, …], "verdict": "keep" | "refine"
    | "remove", "reason": "…", "corrected_answer": "…"}: each checked claim
    supported, contradicted or unsupported; a refine gives a corrected answer
    that differs from `reference_answer` (construction's deep verification)."""

    def validate(text: str) -> dict:
        obj = extract_json_object(text)
        verdict = obj.get("verdict")
        if verdict not in ("keep", "refine", "remove"):
            raise OutputError('"verdict" must be "keep", "refine" or "remove".')
        claims = obj.get("claims")
        if not isinstance(claims, list) or not claims:
            raise OutputError('"claims" must list the claims you checked.')
        parsed = []
        for position, claim in enumerate(claims, start=1):
            if not isinstance(claim, dict) or claim.get("status") not in (
                CLAIM_STATUSES
            ):
                raise OutputError(
                    f"Claim {position} needs a status: "
                    + ", ".join(CLAIM_STATUSES)
                    + "."
                )
            parsed.append(
                {
                    "claim": _require_text(claim, "claim", allow_empty=False),
                    "status": claim["status"],
                    "basis": str(claim.get("basis") or ""),
                }
            )
        corrected = ""
        if verdict == "refine":
            corrected = _require_text(obj, "corrected_answer", allow_empty=False)
            if corrected.strip() == reference_answer.strip():
                raise OutputError(
                    'The corrected answer equals the reference answer: "keep" it.'
                )
        return {
            "verdict": verdict,
            "reason": _require_text(obj, "reason", allow_empty=False),
            "claims": parsed,
            "corrected_answer": corrected.strip(),
        }

    return validate


def free_text_validator(text: str) -> str:
    """Answering: any non-empty text."""
    if not text or not text.strip():
        raise OutputError("The reply is empty.")
    return text
