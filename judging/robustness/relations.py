"""The eight metamorphic relations of the robustness study (no ORM).

A relation rewrites a seed item into a variant whose answer is known from the
seed's: the same (IDENTITY), the opposite (FLIP, TF), the same option content
under new letters (REMAP), or the same with a never-right option added (ADDED);
robustness.py compares a model's answers under those changes.

API
---
``RELATIONS``: name -> Relation (formats it applies to, expected change, and for a
relation an LLM writes, its prompt template), in the order the issue lists them.
``generate(name, item, resources, *, llm_text="") -> Variant | NotApplicable``
    The variant of one item, or why the relation does not apply to it.
``prompt(name, item) -> str``
    The filled prompt of an LLM-written relation (logic).

An Item is the seed: text, options (MC), answer (MC: frozenset of option indices;
TF: bool; open: the reference answer), language (zh, en, ru, vi) and sector.
Resources are what the team maintains: the glossary (term -> synonym), the law a
security context names, irrelevant options, and the seed of the random generator.

The relations
-------------
- magnitude — every quantity with a unit from the unit table is written in another
  unit of the same dimension (100 cm -> 1 m, 3.7米 -> 370厘米), chosen so its
  number lies in [1, 1000) if any does. Units: mm/cm/m/km, mg/g/kg/t, mL/L,
  Pa/kPa/MPa, W/kW/MW, mV/V/kV, mA/A/kA, Hz/kHz/MHz, J/kJ/MJ, with their Chinese
  names (毫米, 千克, 兆帕 …) and Russian symbols (мм, кг, МПа …); a unit is
  written back in the script it was read in. A quantity whose unit also belongs
  to the number before it is left alone: a range ("10~20 mm", "from 10 to 20
  mm", "10至20米"), a product ("10 × 20 mm"), a tolerance ("10±0.5 mm"). Russian
  and Vietnamese write a decimal comma; a number that could be grouped thousands
  there ("1.000 m") is skipped, as is "0,5" in Chinese or English (a list).
- precision — the same quantities gain a trailing zero: 3.7 m -> 3.70 m, 100 mm ->
  100.0 mm.
- synonym — glossary terms are replaced in the text and the options (USB -> U盘);
  Latin terms only as whole words.
- order — the options are shuffled (a generator seeded with Resources.seed and the
  item's text, never the identity); the key follows its option. Not for items
  whose options point at other options ("以上都对", "all of the above", "A和B").
- logic — the statement is negated by an LLM (``prompt``); its key flips. TF only.
- general_context — "在{sector}行业中，…" / "In the {sector} industry, …".
- security_context — "考虑到《{law}》，…" / "Considering the {law}, …".
- irrelevant_content — an option that is never right is added last (E after D).
  MC with fewer than 7 options, and not for a negative question ("不属于",
  "NOT", "кроме", "ngoại trừ" …), whose answer the added option could be.

Texts: magnitude and precision read the question text only (options and answers
keep their units; the meaning is the same), contexts prefix the question text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from judging.robustness.measures import Change

MC, TF, OPEN = "mc", "tf", "open"
LANGUAGE_NAMES = {"zh": "Chinese", "en": "English", "ru": "Russian", "vi": "Vietnamese"}


@dataclass(frozen=True)
class Item:
    text: str
    options: tuple[str, ...] = ()
    answer: frozenset[int] | bool | str = ""
    language: str = "zh"
    sector: str = ""

    @property
    def format(self) -> str:
        if self.options:
            return MC
        return TF if isinstance(self.answer, bool) else OPEN


IRRELEVANT_OPTIONS = {
    "zh": ("一杯绿茶", "一首唐诗", "一只橘猫"),
    "en": ("a cup of green tea", "a Tang dynasty poem", "an orange cat"),
    "ru": ("чашка зелёного чая", "стихотворение о весне", "рыжий кот"),
    "vi": ("một tách trà xanh", "một bài thơ Đường", "một con mèo cam"),
}


@dataclass(frozen=True)
class Resources:
    glossary: Mapping[str, str] = field(default_factory=dict)  # term -> synonym
    law: str = ""  # in the item's language, e.g. "安全生产法"
    irrelevant_options: Mapping[str, Sequence[str]] = field(
        default_factory=lambda: IRRELEVANT_OPTIONS
    )
    seed: int = 0


@dataclass(frozen=True)
class Variant:
    relation: str
    text: str
    options: tuple[str, ...]
    answer: frozenset[int] | bool | str
    change: Change
    # REMAP / ADDED: the seed option shown at each position, -1 for an added one.
    option_map: tuple[int, ...] = ()


@dataclass(frozen=True)
class NotApplicable:
    relation: str
    reason: str


Generator = Callable[[Item, Resources, str], Variant | NotApplicable]


@dataclass(frozen=True)
class Relation:
    name: str
    formats: frozenset[str]
    change: Change
    generator: Generator
    prompt: str = ""  # an LLM writes the variant from this template

    @property
    def llm_written(self) -> bool:
        return bool(self.prompt)


# Quantities -------------------------------------------------------------------------

# (dimension, power of ten, Latin spellings, Chinese names, Russian symbols); the
# first spelling of each script is the one written.
_UNITS = (
    ("length", -3, ("mm",), ("毫米",), ("мм",)),
    ("length", -2, ("cm",), ("厘米",), ("см",)),
    ("length", 0, ("m",), ("米",), ("м",)),
    ("length", 3, ("km",), ("千米", "公里"), ("км",)),
    ("mass", -3, ("mg",), ("毫克",), ("мг",)),
    ("mass", 0, ("g",), ("克",), ()),  # "2010 г." is a year, not grams
    ("mass", 3, ("kg",), ("千克", "公斤"), ("кг",)),
    ("mass", 6, ("t",), ("吨",), ("т",)),
    ("volume", -3, ("mL", "ml"), ("毫升",), ("мл",)),
    ("volume", 0, ("L",), ("升",), ("л",)),
    ("pressure", 0, ("Pa",), ("帕", "帕斯卡"), ("Па",)),
    ("pressure", 3, ("kPa", "KPa", "kpa"), ("千帕",), ("кПа",)),
    ("pressure", 6, ("MPa", "Mpa", "mpa"), ("兆帕",), ("МПа",)),
    ("power", 0, ("W",), ("瓦", "瓦特"), ("Вт",)),
    ("power", 3, ("kW", "KW", "kw"), ("千瓦",), ("кВт",)),
    ("power", 6, ("MW",), ("兆瓦",), ("МВт",)),
    ("voltage", -3, ("mV",), ("毫伏",), ("мВ",)),
    ("voltage", 0, ("V",), ("伏", "伏特"), ("В",)),
    ("voltage", 3, ("kV", "KV", "kv"), ("千伏",), ("кВ",)),
    ("current", -3, ("mA",), ("毫安",), ("мА",)),
    ("current", 0, ("A",), ("安", "安培"), ("А",)),
    ("current", 3, ("kA",), ("千安",), ("кА",)),
    ("frequency", 0, ("Hz", "hz"), ("赫兹", "赫"), ("Гц",)),
    ("frequency", 3, ("kHz", "KHz", "khz"), ("千赫兹", "千赫"), ("кГц",)),
    ("frequency", 6, ("MHz", "Mhz", "mhz"), ("兆赫兹", "兆赫"), ("МГц",)),
    ("energy", 0, ("J",), ("焦耳", "焦"), ("Дж",)),
    ("energy", 3, ("kJ",), ("千焦",), ("кДж",)),
    ("energy", 6, ("MJ",), ("兆焦",), ("МДж",)),
)
_SCRIPTS = ("latin", "zh", "ru")


@dataclass(frozen=True, eq=False)  # units compare by identity
class _Unit:
    dimension: str
    power: int
    spellings: dict[str, str]  # script -> the spelling written


def _unit_table() -> tuple[dict[str, tuple[_Unit, str]], dict[str, list[_Unit]]]:
    """Each spelling's unit and script, and each dimension's units."""
    unit_of, dimensions = {}, {}
    for dimension, power, *columns in _UNITS:
        by_script = dict(zip(_SCRIPTS, columns, strict=True))
        written = {script: names[0] for script, names in by_script.items() if names}
        unit = _Unit(dimension, power, written)
        dimensions.setdefault(dimension, []).append(unit)
        for script, names in by_script.items():
            unit_of |= {name: (unit, script) for name in names}
    return unit_of, dimensions


_UNIT_OF, _DIMENSIONS = _unit_table()
_BY_LENGTH = sorted(_UNIT_OF, key=len, reverse=True)
_ALPHA = "A-Za-z\u00c0-\u024f\u0400-\u04ff\u1e00-\u1eff"
_LATIN_OR_CYRILLIC = "|".join(
    re.escape(u) for u in _BY_LENGTH if u.isascii() or "Ѐ" <= u[0] <= "ӿ"
)
_CHINESE = "|".join(re.escape(u) for u in _BY_LENGTH if "\u4e00" <= u[0] <= "\u9fff")
_QUANTITY = re.compile(
    rf"(?<![{_ALPHA}\d.,])(?P<number>\d+(?:[.,]\d+)*)(?P<space>[ \u00a0]?)"
    # A symbol is not followed by a letter, digit or power/ratio sign (mm², m/s,
    # kWh, MPa·s); a Chinese name not by what makes it another unit (毫米汞柱,
    # 米每秒, 千瓦时).
    rf"(?P<unit>(?:{_LATIN_OR_CYRILLIC})(?![{_ALPHA}\d²³/·^])"
    rf"|(?:{_CHINESE})(?![汞水每秒时小/]))"
)
# A bare number and a connector before a number make it the second half of
# something its unit also belongs to: a range ("10~20 mm", "from 10 to 20 mm",
# "10至20米"), a product ("10 × 20 mm"), a ratio, a tolerance ("10±0.5 mm"), or a
# number grouped with spaces ("10 000 мм"). After a unit ("10 mm ~ 20 mm") the
# connector joins two quantities, each converted on its own.
_SHARED_UNIT = re.compile(
    r"(?:\d\s*(?:[~～\-–—至到×xX*/:：±]|(?:to|and|or|до|и|или|đến|và|hoặc)\b|或|和)?"
    r"|±)\s*\Z"
)


@dataclass(frozen=True)
class _Quantity:
    start: int
    number_end: int
    end: int
    value: Decimal
    space: str
    unit: _Unit
    script: str
    decimals: int  # digits after the decimal separator as written


def _quantities(text: str, language: str) -> list[_Quantity]:
    comma_decimal = language in ("ru", "vi")
    found = []
    for match in _QUANTITY.finditer(text):
        if _SHARED_UNIT.search(text, 0, match.start()):
            continue
        number = match.group("number")
        if comma_decimal:
            # A dot or comma followed by three digits may group thousands ("1.000")
            # or not: skip a number that could be read both ways.
            if (
                re.search(r"[.,]\d{3}\b", number)
                or number.count(",") + number.count(".") > 1
            ):
                continue
            digits = number.replace(",", ".")
        else:
            if "," in number and not re.fullmatch(
                r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", number
            ):
                continue  # "0,5" in Chinese or English is a list, not a number
            digits = number.replace(",", "")
            if digits.count(".") > 1:
                continue
        unit, script = _UNIT_OF[match.group("unit")]
        decimals = len(digits.partition(".")[2])
        found.append(
            _Quantity(
                match.start(),
                match.end("number"),
                match.end(),
                Decimal(digits),
                match.group("space"),
                unit,
                script,
                decimals,
            )
        )
    return found


def _write_number(value: Decimal, language: str) -> str:
    text = format(value.normalize(), "f")
    return text.replace(".", ",") if language in ("ru", "vi") else text


def _converted(quantity: _Quantity) -> tuple[Decimal, _Unit]:
    """The same quantity in the unit of its dimension that puts the number in
    [1, 1000), or nearest to it (on a log scale); ties go to the larger unit."""

    def distance(candidate: _Unit) -> tuple[float, int]:
        value = quantity.value.scaleb(quantity.unit.power - candidate.power)
        exponent = float(value.log10()) if value else 0.0
        # 1000 ties with 1 (100 cm: 1000 mm or 1 m); the larger unit wins.
        return (max(0.0, -exponent, exponent - 3), -candidate.power)

    others = [
        unit
        for unit in _DIMENSIONS[quantity.unit.dimension]
        if unit is not quantity.unit and quantity.script in unit.spellings
    ]
    best = min(others, key=distance)
    return quantity.value.scaleb(quantity.unit.power - best.power), best


def _rewrite(text: str, replacements: list[tuple[int, int, str]]) -> str:
    pieces, last = [], 0
    for start, end, new in replacements:
        pieces += [text[last:start], new]
        last = end
    return "".join(pieces) + text[last:]


def _magnitude(item: Item, resources: Resources, llm_text: str):
    quantities = _quantities(item.text, item.language)
    if not quantities:
        return NotApplicable("magnitude", "no number with a unit from the unit table")
    replacements = []
    for quantity in quantities:
        value, unit = _converted(quantity)
        written = _write_number(value, item.language) + quantity.space
        replacements.append(
            (quantity.start, quantity.end, written + unit.spellings[quantity.script])
        )
    return _same_answer(item, "magnitude", _rewrite(item.text, replacements))


def _precision(item: Item, resources: Resources, llm_text: str):
    quantities = _quantities(item.text, item.language)
    if not quantities:
        return NotApplicable("precision", "no number with a unit from the unit table")
    separator = "," if item.language in ("ru", "vi") else "."
    replacements = [
        (q.number_end, q.number_end, "0" if q.decimals else separator + "0")
        for q in quantities
    ]
    return _same_answer(item, "precision", _rewrite(item.text, replacements))


def _same_answer(item: Item, relation: str, text: str, options=None) -> Variant:
    return Variant(
        relation,
        text,
        item.options if options is None else options,
        item.answer,
        Change.IDENTITY,
    )


# Synonyms ---------------------------------------------------------------------------


def _synonym(item: Item, resources: Resources, llm_text: str):
    if not resources.glossary:
        return NotApplicable("synonym", "no glossary")
    terms = sorted(resources.glossary, key=len, reverse=True)  # longest term first
    pattern = re.compile(
        "|".join(
            # Latin terms as whole words: "USB" is not replaced inside "USBC".
            rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])"
            if term[0].isascii() and term[-1].isascii()
            else re.escape(term)
            for term in terms
        )
    )
    if not any(pattern.search(text) for text in (item.text, *item.options)):
        return NotApplicable("synonym", "no glossary term in the item")

    def replaced(text: str) -> str:
        return pattern.sub(lambda m: resources.glossary[m.group()], text)

    return _same_answer(
        item,
        "synonym",
        replaced(item.text),
        tuple(replaced(option) for option in item.options),
    )


# Order ------------------------------------------------------------------------------

_POINTS_AT_OPTIONS = re.compile(
    r"以上|上述|都对|都不对|均正确|均不正确|全部正确|"
    r"(?i:\b(?:all|none|both|neither)\s+of\s+(?:the\s+)?(?:above|these|them)\b"
    r"|\ball\s+the\s+above\b|вс[её]\s+(?:вышеперечисленн|перечисленн)"
    r"|ни\s+один\s+из|tất\s+cả\s+(?:các\s+)?(?:đáp\s+án|phương\s+án)|cả\s+[A-G]\s+và)"
    r"|(?<![A-Za-z])[A-G]\s*(?:和|与|及|、|,|，|and|и|và|or|или|hoặc)\s*[A-G](?![A-Za-z])"
)


def _order(item: Item, resources: Resources, llm_text: str):
    if len(item.options) < 2:
        return NotApplicable("order", "fewer than two options")
    for option in item.options:
        if _POINTS_AT_OPTIONS.search(option):
            return NotApplicable("order", f"an option points at others: {option!r}")
    rng = random.Random(f"{resources.seed}\n{item.text}")
    permutation = list(range(len(item.options)))
    while permutation == sorted(permutation):
        rng.shuffle(permutation)
    return Variant(
        "order",
        item.text,
        tuple(item.options[p] for p in permutation),
        frozenset(j for j, p in enumerate(permutation) if p in item.answer),
        Change.REMAP,
        tuple(permutation),
    )


# Logic ------------------------------------------------------------------------------

LOGIC_PROMPT = (
    "Rewrite the statement below so that it says the opposite: its negation, in "
    "{language}. Change as few words as possible; keep every number, unit, "
    "standard and technical term as written. Reply with the negated statement "
    "only, without explanation.\n\nStatement: {text}"
)


def _logic(item: Item, resources: Resources, llm_text: str):
    negated = llm_text.strip().strip('"“”「」').strip()
    if not negated or negated == item.text.strip():
        return NotApplicable("logic", "the LLM gave no negated statement")
    return Variant("logic", negated, (), not item.answer, Change.FLIP)


# Contexts ---------------------------------------------------------------------------

_GENERAL = {
    "zh": "在{sector}行业中，{text}",
    "en": "In the {sector} industry, {text}",
    "ru": "В отрасли «{sector}»: {text}",
    "vi": "Trong ngành {sector}, {text}",
}
_SECURITY = {
    "zh": "考虑到《{law}》，{text}",
    "en": "Considering the {law}, {text}",
    "ru": "С учётом требований {law}: {text}",
    "vi": "Xét theo {law}, {text}",
}


def _continued(text: str, language: str) -> str:
    """The text as the rest of a sentence: "In the … industry, which …". A word
    in capitals (USB, PLC) keeps them."""
    text = text.strip()
    if language in ("en", "vi") and text[:1].isupper() and text[1:2].islower():
        return text[0].lower() + text[1:]
    return text


def _general_context(item: Item, resources: Resources, llm_text: str):
    if not item.sector:
        return NotApplicable("general_context", "the item has no sector")
    template = _template(_GENERAL, item.language)
    text = template.format(
        sector=item.sector, text=_continued(item.text, item.language)
    )
    return _same_answer(item, "general_context", text)


def _security_context(item: Item, resources: Resources, llm_text: str):
    law = resources.law.strip().strip("《》")
    if not law:
        return NotApplicable("security_context", "no law given for the item")
    template = _template(_SECURITY, item.language)
    text = template.format(law=law, text=_continued(item.text, item.language))
    return _same_answer(item, "security_context", text)


def _template(templates: Mapping[str, str], language: str) -> str:
    if language not in templates:
        raise ValueError(f"no context template for language {language!r}")
    return templates[language]


# Irrelevant content -----------------------------------------------------------------

MAX_OPTIONS_FOR_IRRELEVANT = 6  # the added option is at most the 7th (G)
_NEGATIVE_QUESTION = re.compile(
    r"不属于|不是|不正确|不包括|不能|不应|不得|不符合|不宜|不需要|错误的是|除外|除了"
    r"|(?i:\b(?:not|except|incorrect|false|least)\b)"
    r"|(?i:\bне\s+(?:является|относится|входит|может|следует|допускается)\b"
    r"|\bневерн|\bкроме\b)"
    r"|(?i:không\s+(?:đúng|phải|thuộc|bao\s+gồm|nên|được)|ngoại\s+trừ|\bsai\b)"
)


def _irrelevant_content(item: Item, resources: Resources, llm_text: str):
    if len(item.options) > MAX_OPTIONS_FOR_IRRELEVANT:
        return NotApplicable(
            "irrelevant_content",
            f"{len(item.options)} options; at most {MAX_OPTIONS_FOR_IRRELEVANT}",
        )
    if negative := _NEGATIVE_QUESTION.search(item.text):
        return NotApplicable(
            "irrelevant_content",
            f"a negative question ({negative.group()!r}): an unrelated option could be "
            "its answer",
        )
    pool = [
        option
        for option in resources.irrelevant_options.get(item.language, ())
        if option not in item.options
    ]
    if not pool:
        return NotApplicable(
            "irrelevant_content", "no irrelevant option for the language"
        )
    added = random.Random(f"{resources.seed}\n{item.text}").choice(pool)
    n = len(item.options)
    return Variant(
        "irrelevant_content",
        item.text,
        (*item.options, added),
        item.answer,
        Change.ADDED,
        (*range(n), -1),
    )


# Registry ---------------------------------------------------------------------------

_ALL = frozenset({MC, TF, OPEN})
RELATIONS: dict[str, Relation] = {
    relation.name: relation
    for relation in (
        Relation("magnitude", _ALL, Change.IDENTITY, _magnitude),
        Relation("precision", _ALL, Change.IDENTITY, _precision),
        Relation("synonym", _ALL, Change.IDENTITY, _synonym),
        Relation("order", frozenset({MC}), Change.REMAP, _order),
        Relation("logic", frozenset({TF}), Change.FLIP, _logic, LOGIC_PROMPT),
        Relation("general_context", _ALL, Change.IDENTITY, _general_context),
        Relation("security_context", _ALL, Change.IDENTITY, _security_context),
        Relation(
            "irrelevant_content", frozenset({MC}), Change.ADDED, _irrelevant_content
        ),
    )
}


def generate(
    name: str, item: Item, resources: Resources | None = None, *, llm_text: str = ""
) -> Variant | NotApplicable:
    """The variant of `item` under relation `name`, or why it does not apply.

    An LLM-written relation takes the LLM's reply to ``prompt(name, item)`` as
    `llm_text`; the expected change (logic: the key flips) is applied here.
    """
    relation = RELATIONS[name]
    if item.format not in relation.formats:
        formats = "/".join(sorted(relation.formats))
        return NotApplicable(
            name, f"{name} applies to {formats} items, not {item.format}"
        )
    if relation.llm_written and not llm_text:
        raise ValueError(f"{name} is written by an LLM: pass its reply as llm_text")
    return relation.generator(item, resources or Resources(), llm_text)


def prompt(name: str, item: Item) -> str:
    """The prompt that asks an LLM for the variant of an LLM-written relation."""
    relation = RELATIONS[name]
    if not relation.llm_written:
        raise ValueError(f"{name} is generated here, not by an LLM")
    language = LANGUAGE_NAMES[item.language]
    return relation.prompt.format(language=language, text=item.text)
