"""Deterministic answer extraction for multiple-choice and true/false replies (no ORM).

A tested model's reply to an MC or TF item is read by rules, never by an LLM. The
rules know Chinese, English, Russian and Vietnamese. A reply that names several
different answers, or refuses, is *flagged*: its own outcome, counted and shown,
never silently scored right or wrong.

API
---
``extract_choice(reply, n_options) -> Extraction``
    Options are lettered A, B, C, …; ``values`` holds option indices (A = 0).
``extract_true_false(reply) -> Extraction``
    ``values`` holds ``True`` / ``False``.
``score_choice(extraction, correct) -> 1 | 0 | None``
    ``correct`` is the set of accepted values (``{1}`` for B; ``{True}`` for a true
    statement); ``None`` for every outcome but ``answered``.
``extract_all(replies, n_options) -> Extractions``
    Many replies at once into arrays (``n_options[k] == 0`` marks a TF item).
    ``decide_all`` gives the same as (outcome, values) pairs, with every value of a
    several-answer reply; ``extractions_of`` turns those into the arrays.
``grade(extractions, accepted) -> grades``; ``accuracy(grades) -> Accuracy``
    Vectorized scoring and per-model aggregation with each flagged outcome counted.

Outcomes: ``answered`` (one value), ``multiple`` (several different values),
``refusal`` and ``none`` (nothing recognisable). An Extraction also says which rule
decided (``reason``) and where (``spans``, offsets into the reply).

Decisions
---------
- Rules are tiers; the first tier that yields a value decides:

  1. *final answer* — "最终答案：B", "Final answer: B", "Окончательный ответ: B",
     "Đáp án cuối cùng: B". The last such statement counts, whatever came before
     (LPFQA's judge rules: the final answer counts).
  2. *answer marker* — "答案是C", "正确答案为B", "选B", "Answer: B", "The answer is
     (B)", "Ответ: B", "Правильный ответ — B", "Đáp án: B", "Chọn B"; for TF also a
     verdict about the statement ("该说法错误", "The statement is false",
     "Утверждение неверно", "Nhận định này đúng"). Every marker counts: two that
     disagree make the reply *multiple*.
  3. *refusal* — "无法回答", "我不能", "I cannot answer", "I can't determine",
     "I don't know", "Не могу", "Tôi không thể" … English needs the verb ("I cannot
     be sure" hedges, it does not refuse). A refusal phrase loses to an answer
     marker ("我不能确定，但答案是B" is answered) and beats bare labels (a refusal
     that names options in passing is still a refusal).
  4. *label* — a reply or a line that starts with an option ("B", "B. 50 mm",
     "(B) …", "**B**", "B and D"), a bracketed or bold letter anywhere ("（Ｂ）",
     "[B]", "**B**"); for TF a reply that starts with a verdict or a line that
     holds only one ("正确。", "False.", "Неверно", "Đúng"). Several different
     labels make it *multiple*: a reply that goes through the options line by line
     ("A. wrong … B. right …") without an answer marker is flagged.

- Letters are upper case only, so English "a" and Russian "в" are never options;
  full-width letters and punctuation count as their ASCII forms ("（Ｂ）", "Ｂ．").
  The Cyrillic look-alikes А, В, С, Е count as A, B, C, E (options are lettered in
  Latin in every language, and a Russian keyboard types the look-alike) unless a
  word follows: "Ответ: В данном случае …" is "in this case", not B.
- A letter beyond ``n_options`` is ignored ("F" on a four-option item); a marker
  left with no letter does not decide its tier.
- A list after a marker ("B and D", "B、D", "B или D", "B và D") is several answers.
- TF negations are read whole and first: 不正确 / 不对 / 不完全正确 are false, as
  are "not true", "incorrect", "неверно", "не совсем верно", "không đúng"; "không
  sai" is true. A verdict followed by its alternative ("true or false", "正确还是错
  误", "đúng hay sai", "верно или неверно") is a question, not a verdict, and a
  statement verdict after "whether" / "if" does not count.
- Single characters that are common words (对, 错, 是, 否; "yes", "no", "да",
  "нет", "có", "không") count only as a whole reply or its first word.
- Text is read in NFC, so ``spans`` point into the reply as written whenever it is
  NFC already (the normal case; a decomposed Vietnamese reply is composed first).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class Outcome(IntEnum):
    # The flagged codes equal Grade's, so grading only rewrites ANSWERED.
    ANSWERED = 1
    MULTIPLE = 2
    REFUSAL = 3
    NONE = 4


class Grade(IntEnum):
    WRONG = 0
    CORRECT = 1
    MULTIPLE = 2
    REFUSAL = 3
    NONE = 4


REASONS = {
    "final": "final answer",
    "answer": "answer marker",
    "refusal": "refusal",
    "label": "option label",
}


@dataclass(frozen=True)
class Extraction:
    outcome: Outcome
    values: tuple = ()  # option indices (MC) or booleans (TF), sorted
    reason: str = "nothing recognisable"
    spans: tuple[tuple[int, int], ...] = ()  # the deciding matches

    @property
    def value(self):
        """The one answer, or None unless answered."""
        return self.values[0] if self.outcome is Outcome.ANSWERED else None


# Patterns -------------------------------------------------------------------------
#
# Speed: 177k replies are read in about a second because every pattern that scans a
# whole reply has a plain character at the head of each alternative; Python's regex
# engine then skips in C from one possible first character to the next instead of
# trying every alternative at every position (5-20x faster here). Case-insensitive
# flags, character classes, \b and look-behinds at the head defeat that, so words are
# matched on a lower-cased copy of the reply (same offsets) with their boundaries
# checked after the first character, and option letters are read from the reply as
# written.

# Letters that a word or an option letter must not touch (so "Bolt" is not "B" and
# "ответа" not "ответ"); CJK characters may touch one ("答案是B项").
_ALPHA = (
    "A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u1e00-\u1eff"
    "\uff21-\uff3a\uff41-\uff5a"
)
_IS_ALPHA = re.compile(rf"[{_ALPHA}]")
# The Cyrillic look-alikes А В С Е only when no word follows: "В данном случае" is
# "in this case", not option B.
_LETTER = (
    rf"(?<![{_ALPHA}])"
    rf"(?:[A-Z\uff21-\uff3a]|[\u0410\u0412\u0415\u0421](?!\s*[{_ALPHA}]))"
    rf"(?![{_ALPHA}])"
)
_LETTER_INDEX = {chr(ord("A") + i): i for i in range(26)}
_LETTER_INDEX |= {chr(ord("Ａ") + i): i for i in range(26)}
_LETTER_INDEX |= {"\u0410": 0, "\u0412": 1, "\u0421": 2, "\u0415": 4}  # А В С Е


def _words(*groups: str) -> str:
    """A regex for lower-case phrases written "a|b|c" (spaces match any white
    space), with one alternative per first character so the engine tries few at a
    position. A phrase that starts or ends with a letter does so at a word boundary.
    """
    tails: dict[str, list[str]] = {}
    phrases = {phrase for group in groups for phrase in group.split("|")}
    for phrase in sorted(phrases, key=len, reverse=True):  # longest first
        tail = r"\s+".join(map(re.escape, phrase[1:].split(" ")))
        if _IS_ALPHA.match(phrase[-1]):
            tail += rf"(?![{_ALPHA}])"
        tails.setdefault(phrase[0], []).append(tail)
    alternatives = []
    for first, ends in tails.items():
        head = re.escape(first)
        if _IS_ALPHA.match(first):
            head += rf"(?<![{_ALPHA}]{head})"
        alternatives.append(rf"{head}(?:{'|'.join(ends)})")
    return "|".join(alternatives)


def _combine(template: str, *parts: str) -> str:
    """Every phrase of `template` with each "{}" filled from "a|b" alternatives:
    _combine("i {} {}", "cannot|won't", "answer|say") -> "i cannot answer|…"."""
    phrases = [template]
    for part in parts:
        phrases = [p.replace("{}", c, 1) for p in phrases for c in part.split("|")]
    return "|".join(phrases)


_MARK = r"[*_]{0,2}"  # markdown emphasis around an answer
_OPEN = r"[(（\[【［「]"
_CLOSE = r"[)）\]】］」]"
_COLON = rf"\s*[:：=—–-]?\s*{_MARK}\s*"
_ITEM = rf"{_MARK}{_OPEN}?{_MARK}{_LETTER}{_MARK}{_CLOSE}?{_MARK}"
_JOIN = (
    r"\s*(?:[,，、/&;；+]|\band\b|\bor\b|和|与|及|或|\bи\b|\bили\b|\bvà\b|\bhoặc\b)"
    r"\s*"
)
_LIST = re.compile(rf"{_ITEM}(?:{_JOIN}{_ITEM})*")
_LETTER_IN_LIST = re.compile(_LETTER)

# Final-answer phrases are scanned with the other markers (one pass over the reply)
# and told apart by _FINAL afterwards.
_FINAL_PHRASES = (
    "最终答案",
    "final answer|final answer is",
    "окончательный ответ|итоговый ответ",
    "đáp án cuối cùng|đáp án cuối cùng là|câu trả lời cuối cùng"
    "|câu trả lời cuối cùng là",
)
_FINAL = re.compile(_words(*_FINAL_PHRASES))
_REFUSAL = re.compile(
    _words(
        _combine("{}{}", "无法|不能", "回答|作答|确定|判断|给出|提供|选择"),
        "我不能|我无法|拒绝回答",
        _combine(
            "i {} {}",
            "cannot|can't|can’t|can not|am unable to|'m unable to|’m unable to"
            "|am not able to|'m not able to|’m not able to|won't|won’t|will not",
            "answer|help|assist|provide|give|determine|choose|select|say|tell",
        ),
        "i do not know|i don't know|i don’t know|i must decline|unable to answer"
        "|unable to determine|cannot be determined",
        "не могу|невозможно определить|невозможно ответить|невозможно сказать"
        "|не знаю|затрудняюсь|отказываюсь",
        "tôi không thể|không thể trả lời|không thể xác định|tôi không biết|tôi từ chối",
    )
)


def _nfc(reply: str) -> str:
    if reply.isascii() or unicodedata.is_normalized("NFC", reply):
        return reply
    return unicodedata.normalize("NFC", reply)


def _lower(text: str) -> str:
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    # "İ" lower-cases to two characters; keep offsets aligned with the reply.
    return "".join(char.lower()[0] for char in text)


Hits = list[tuple[tuple[int, int], list]]  # (span, values) of each deciding match


# Multiple choice ------------------------------------------------------------------

_CHOICE_MARKERS = _words(
    *_FINAL_PHRASES,
    "答案|答案是|答案为|答案选|答案应是|答案应为|答案应该是|答案应该选|正确选项"
    "|正确选项是|正确选项为|正确的选项是|选|选择",
    "answer|answer is|answer would be|answer should be|correct option is"
    "|correct choice is",
    _combine("i {}{}", "|would ", "choose|select|pick"),
    "ответ|выбираю",
    "đáp án|đáp án là|đáp án đúng là|câu trả lời|câu trả lời là"
    "|câu trả lời đúng là|chọn",
)
# Words allowed between a marker and its letter: "Answer: option B", "选选项B".
_OPTION_WORD = _words("option|choice|вариант|phương án|đáp án|选项")
_CHOICE_MARKER = re.compile(rf"(?:{_CHOICE_MARKERS}){_COLON}(?:(?:{_OPTION_WORD})\s*)?")
_LABEL_END = r"(?=[*_]*(?:[ \t]*(?:\n|\Z)|[.．。、:：,，;；!！\-–—]))"
_CHOICE_LABEL = re.compile(
    # The reply opens with options ("B", "B. 50 mm", "(B)", "**B**", "B and D") …
    rf"\A[\s>#*_]*{_LIST.pattern}{_LABEL_END}"
    # … a line opens with one ("C", "B. 50 mm", "(B) …", "- B"): a reply that goes
    # through the options line by line names several …
    rf"|(?m:^[ \t>#*_-]*{_MARK}"
    rf"(?:{_OPEN}?{_MARK}{_LETTER}{_MARK}{_CLOSE}|{_LETTER}{_MARK}{_LABEL_END}))"
    # … or a letter is bracketed or bold anywhere.
    rf"|{_OPEN}{_LETTER}{_CLOSE}|\*\*{_LETTER}(?=\*\*|[.．:：)）])"
)


def _letters(text: str, n_options: int) -> list[int]:
    indices = map(_LETTER_INDEX.__getitem__, _LETTER_IN_LIST.findall(text))
    return [index for index in indices if index < n_options]


def _choice(reply: str, n_options: int) -> tuple[Outcome, tuple, str, tuple]:
    reply = _nfc(reply)
    lowered = _lower(reply)
    finals, answers = [], []
    for marker in _CHOICE_MARKER.finditer(lowered):
        listed = _LIST.match(reply, marker.end())
        if listed and (letters := _letters(listed.group(), n_options)):
            hits = finals if _FINAL.match(marker.group()) else answers
            hits.append(((marker.start(), listed.end()), letters))
    if finals:
        return _decided("final", finals[-1:])  # the last final statement counts
    if answers:
        return _decided("answer", answers)
    if refusal := _REFUSAL.search(lowered):
        return Outcome.REFUSAL, (), "refusal", (refusal.span(),)
    labels = [
        (label.span(), letters)
        for label in _CHOICE_LABEL.finditer(reply)
        if (letters := _letters(label.group(), n_options))
    ]
    return _decided("label", labels)


# True / false ---------------------------------------------------------------------

_FALSE = _words(
    _combine("不{}{}", "|完全|太|一定", "正确|对"),
    "错误|错的|×|✗|✘",
    _combine(
        "{} {}{}",
        "not|isn't|isn’t",
        "|entirely |completely |quite |fully |necessarily |always ",
        "true|correct|right|accurate",
    ),
    "incorrect|inaccurate|untrue|false|wrong",
    _combine("не {}{}{}", "|совсем |вполне |всегда ", "верн|правильн", "о|ое|ым"),
    _combine("не{}{}", "верн|правильн", "о|ое|ым"),
    "ложно|ложное|ложным|ложь",
    _combine("không {}{}", "|hoàn toàn |phải |phải là ", "đúng|chính xác"),
    "sai",
)
_TRUE = _words(
    "正确|对的|√|✓|✔",
    "true|correct|right|accurate",
    _combine("{}{}", "верн|правильн|истинн", "о|ое|ым"),
    "истина",
    "không sai|đúng|chính xác",
)
# 错 and 对 alone are verdicts; followed by another character they are part of a
# word (错误 is listed, 对于 "regarding" is not a verdict).
_FALSE += r"|错(?![\u4e00-\u9fff])"
_TRUE += r"|对(?![\u4e00-\u9fff])"
# Only as a whole reply or its first word: common words anywhere else.
_FALSE_LEAD = _words("否|no|нет|không")
_TRUE_LEAD = _words("是|是的|yes|да|có")
_VERDICT = rf"(?:{_FALSE}|{_TRUE})"
_ALTERNATIVE = _words("or|hay|hoặc|или|还是|或|/")
_NOT_A_QUESTION = rf"(?!\s*(?:{_ALTERNATIVE})\s*{_VERDICT})"

_TF_MARKERS = _words(
    *_FINAL_PHRASES,
    "答案|答案是|答案为|判断|判断为|判断结果|判断结果是|结论|结论是",
    "answer|answer is|verdict|verdict is",
    "ответ",
    "đáp án|đáp án là|câu trả lời|câu trả lời là|kết luận|kết luận là",
    # A verdict about the statement: "该说法错误", "The statement is false" …
    "说法|说法是|说法为|表述|表述是|陈述|陈述是|命题|命题是",
    "statement is|claim is|assertion is",
    "утверждение|утверждение является|это",
    _combine(
        "{}{}{}",
        "nhận định|khẳng định|phát biểu|mệnh đề",
        "| này| trên",
        "| là",
    ),
)
_TF_MARKER = re.compile(
    rf"(?:{_TF_MARKERS})"
    # "… whether the statement is true" asks, it does not answer.
    r"(?<!whether the statement is)(?<!whether this statement is)"
    r"(?<!if the statement is)(?<!if this statement is)"
    rf"{_COLON}(?P<verdict>{_VERDICT}){_NOT_A_QUESTION}"
)
_TF_LEAD = re.compile(
    rf"[\s>#*_]*(?P<verdict>{_FALSE}|{_TRUE}|{_FALSE_LEAD}|{_TRUE_LEAD})"
    r"(?=[*_]*(?:\s*\Z|[.．。,，!！;；:：、\-–—]|[ \t]*\n))"
    rf"{_NOT_A_QUESTION}"
)
_TF_LINE = re.compile(rf"(?m:^[ \t>#*_-]*(?P<verdict>{_VERDICT})[ \t*_.．。!！]*$)")
_IS_FALSE = re.compile(rf"{_FALSE}|{_FALSE_LEAD}")


def _true_false(reply: str) -> tuple[Outcome, tuple, str, tuple]:
    lowered = _lower(_nfc(reply))
    finals, answers = [], []
    for marker in _TF_MARKER.finditer(lowered):
        hits = finals if _FINAL.match(marker.group()) else answers
        hits.append((marker.span(), [_is_true(marker)]))
    if finals:
        return _decided("final", finals[-1:])
    if answers:
        return _decided("answer", answers)
    if refusal := _REFUSAL.search(lowered):
        return Outcome.REFUSAL, (), "refusal", (refusal.span(),)
    lead = _TF_LEAD.match(lowered)
    lines = _TF_LINE.finditer(lowered, lead.end() if lead else 0)
    labels = [(m.span(), [_is_true(m)]) for m in ([lead, *lines] if lead else lines)]
    return _decided("label", labels)


def _is_true(match: re.Match) -> bool:
    return not _IS_FALSE.fullmatch(match.group("verdict"))


# Deciding -------------------------------------------------------------------------


def _decided(tier: str, hits: Hits) -> tuple[Outcome, tuple, str, tuple]:
    if not hits:
        return Outcome.NONE, (), "", ()
    if len(hits) == 1 and len(hits[0][1]) == 1:  # the common case, kept cheap
        ((span, (value,)),) = hits
        return Outcome.ANSWERED, (value,), tier, (span,)
    values = tuple(sorted({value for _, found in hits for value in found}))
    outcome = Outcome.ANSWERED if len(values) == 1 else Outcome.MULTIPLE
    return outcome, values, tier, tuple(span for span, _ in hits)


def _extraction(decided) -> Extraction:
    outcome, values, tier, spans = decided
    if outcome is Outcome.NONE:
        return Extraction(outcome)
    return Extraction(outcome, values, REASONS[tier], spans)


def extract_choice(reply: str, n_options: int) -> Extraction:
    return _extraction(_choice(reply, n_options))


def extract_true_false(reply: str) -> Extraction:
    return _extraction(_true_false(reply))


def score_choice(extraction: Extraction, correct: set) -> int | None:
    """1 or 0 for an answered reply, None for a flagged one (multiple, refusal,
    none). `correct` holds every accepted value: option indices, or {True} /
    {False} for a TF item."""
    if extraction.outcome is not Outcome.ANSWERED:
        return None
    return int(extraction.values[0] in correct)


# Many replies ---------------------------------------------------------------------


@dataclass(frozen=True)
class Extractions:
    outcome: np.ndarray  # int8 Outcome codes
    value: np.ndarray  # int16: option index, or 1 true / 0 false; -1 unless answered


def decide_all(
    replies: Sequence[str], n_options: Sequence[int]
) -> list[tuple[Outcome, tuple]]:
    """(outcome, values) of every reply, the values of several answers included;
    ``n_options[k] == 0`` marks a TF item."""
    return [
        (_choice(reply, n) if n else _true_false(reply))[:2]
        for reply, n in zip(replies, n_options, strict=True)
    ]


def extractions_of(decided: Sequence[tuple[Outcome, tuple]]) -> Extractions:
    """`decide_all`'s result as the arrays `grade` takes."""
    outcome = np.array([outcome for outcome, _ in decided], dtype=np.int8)
    value = np.array(
        [values[0] if len(values) == 1 else -1 for _, values in decided],
        dtype=np.int16,
    )
    return Extractions(outcome, value)


def extract_all(replies: Sequence[str], n_options: Sequence[int]) -> Extractions:
    """Every reply's outcome and value; ``n_options[k] == 0`` marks a TF item."""
    return extractions_of(decide_all(replies, n_options))


def grade(extractions: Extractions, accepted: np.ndarray) -> np.ndarray:
    """Grade codes (int8, see Grade) of each reply.

    ``accepted[k, v]`` is True when value v is a right answer to reply k's item
    (an option index; for TF column 1 is "true" and column 0 "false").
    """
    outcome, value = extractions.outcome, extractions.value
    rows = np.arange(len(outcome))
    hit = np.asarray(accepted, dtype=bool)[rows, np.maximum(value, 0)]
    answered = outcome == Outcome.ANSWERED
    return np.where(answered, hit, outcome).astype(np.int8)


@dataclass(frozen=True)
class Accuracy:
    """Counts per model (one entry per row of the grades matrix)."""

    correct: np.ndarray
    wrong: np.ndarray
    multiple: np.ndarray
    refusal: np.ndarray
    none: np.ndarray

    @property
    def answered(self) -> np.ndarray:
        return self.correct + self.wrong

    @property
    def flagged(self) -> np.ndarray:
        return self.multiple + self.refusal + self.none

    @property
    def accuracy(self) -> np.ndarray:
        """Share right among the answered replies; NaN for a model with none."""
        answered = self.answered
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(answered > 0, self.correct / answered, np.nan)


def accuracy(grades: np.ndarray) -> Accuracy:
    """Per-model counts from a (models × items) matrix of Grade codes.

    Flagged replies are left out of the accuracy and counted by outcome, so a model
    that refuses often is seen to, rather than scored down or up for it.
    """
    grades = np.atleast_2d(grades)
    counts = [(grades == code).sum(axis=1) for code in Grade]
    wrong, correct, multiple, refusal, none = counts
    return Accuracy(correct, wrong, multiple, refusal, none)
