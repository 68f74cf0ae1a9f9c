"""Deterministic preservation check for translated question–answer pairs (no ORM).

A translation must keep every number, unit, standard identifier, chemical formula and
product model code of its source unchanged. This module extracts those tokens from
both sides and compares them.

API
---
``extract_tokens(text, language) -> list[Token]``
    Every preserved token of one text, in order, with offsets into ``text``.
``check_preservation(source, target, *, source_language, target_language)``
    -> ``PreservationResult`` for one field (a question, or an answer).
``check_rendering(source_question, source_answer, target_question, target_answer,
*, source_language, target_language)`` -> ``RenderingCheck``
    Both fields of an item; ``.passed``, ``.missing`` / ``.extra`` (category ->
    surface texts) and ``.as_dict()``, the JSON stored with a rendering::

        {"passed": false,
         "missing": {"number": ["3.5"], "unit": ["MPa"]},
         "extra": {"number": ["508"], "unit": ["psi"]},
         "question": {"source_spans": [SPAN, ...], "target_spans": [SPAN, ...]},
         "answer": {"source_spans": [...], "target_spans": [...]}}

    SPAN = {"start", "end", "category", "text", "value", "status"}: ``start``/``end``
    are Python string offsets into the original (un-normalised) text; ``status`` is
    ``"kept"``, ``"missing"`` (source side) or ``"extra"`` (target side).
``segments(text, spans) -> list[dict]``
    Splits a text into ``{"text", "status", "category"}`` runs for highlighting in
    a template (``status`` and ``category`` are ``""`` between tokens).

Categories: ``number``, ``unit``, ``standard``, ``formula``, ``model``.

Decisions
---------
- Text is normalised character by character (NFKC, so full-width ``３.５`` is
  ``3.5`` and ``℃`` is ``°C``; dash variants become ``-``), keeping an offset map so
  spans point into the original text. Superscripts are kept, so ``mm²`` stays apart
  from ``mm2`` spelling only through the unit table, and ``10⁶`` stays ``10^6``.
- Comparison is by set, per category: each distinct source token must occur at least
  once in the target, and each distinct target token must occur in the source.
  Repetition is not counted, so saying "10 mm" once for two mentions is fine.
- Numbers compare by value: ``3.50`` = ``3.5``, ``1,000`` = ``1000``. Ranges
  (``10–20``, ``10~20``, ``10-20``, ``10至20``, "from 10 to 20") are compared as their
  end points; a dash after a digit, letter, ``%`` or ``°`` separates a range, one
  after a space, comma or Chinese character is a minus sign. ``T4–T6`` is the two
  codes T4 and T6. ``±0.5`` keeps its sign; ``+`` is dropped. ``5%`` and
  ``5 %`` are the number ``5%``. ``3万`` also reads as 30000.
- Russian and Vietnamese write a decimal comma: ``0,5`` in RU/VI equals ``0.5``.
  Every language may group thousands with spaces (``10 000``); Vietnamese also
  with dots (``10.000``). A comma or dot followed by exactly three digits is
  ambiguous in RU/VI (an LLM may keep the English convention), so such a number
  matches either reading: VI ``1.000`` matches 1000 and 1. In Chinese and English
  ``,`` only groups thousands (``1,000``); ``0,5`` there is the list "0, 5".
- Units map to one symbol across languages: 毫米, мм → ``mm``; 兆帕, МПа, Mpa →
  ``MPa``; 平方毫米, mm2 → ``mm²``; 摄氏度, ℃, °С → ``°C``. Single-character and
  word-like units (米, m, A, min, giờ) count only right after a number; symbols such as
  MPa, kV, mm², °C and 兆帕 count anywhere. IP ratings (IP67) are units.
- A small integer (0–12) written as a word on the other side ("two", "два", "hai",
  两) is not reported, since translators legitimately spell those out.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

CATEGORIES = ("number", "unit", "standard", "formula", "model")

# Characters NFKC would damage for our purpose, or map where NFKC does not.
_CHAR_MAP = {
    "º": "°",
    "˚": "°",
    "・": "·",
    "•": "·",
    "〜": "~",
    "∼": "~",
    "\u3000": " ",
    "\u00a0": "\u00a0",
    "\u202f": "\u00a0",
    "\u2009": "\u00a0",
}
for _dash in "‐‑‒–—―−﹣－":
    _CHAR_MAP[_dash] = "-"
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_MASK = "\ue000"


@dataclass(frozen=True)
class Token:
    category: str
    text: str  # surface text as written (original characters)
    value: str  # canonical reading shown to people ("1000" for "1,000")
    values: frozenset[str]  # all readings; two tokens match when these meet
    start: int  # offsets into the original text
    end: int


def _normalise_char(char: str) -> str:
    if char in _CHAR_MAP:
        return _CHAR_MAP[char]
    if char in _SUPERSCRIPTS:
        return char
    return unicodedata.normalize("NFKC", char)


_NORMALISED: dict[str, str] = {}


def _normalise(text: str) -> tuple[str, list[int]]:
    """Per-character NFKC with exceptions; returns the text and, for each of its
    characters, the offset of the original character it came from."""
    mapped = []
    for char in text:
        out = _NORMALISED.get(char)
        if out is None:
            out = _NORMALISED[char] = _normalise_char(char)
        mapped.append(out)
    normalised = "".join(mapped)
    if len(normalised) == len(text):
        return normalised, list(range(len(text) + 1))
    origin: list[int] = []
    for index, out in enumerate(mapped):
        origin.extend([index] * len(out))
    origin.append(len(text))
    return normalised, origin


# ---------------------------------------------------------------------------------
# Units: canonical symbol -> aliases. Symbols may stand alone; words only after a
# number.

_UNITS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # canonical: (symbols, words)
    "Pa": (("Pa", "Па"), ("帕", "帕斯卡", "pascal", "pascals")),
    "kPa": (("kPa", "KPa", "kpa", "KPA", "кПа", "千帕"), ()),
    "MPa": (("MPa", "Mpa", "mpa", "MPA", "МПа", "兆帕"), ("megapascal", "megapascals")),
    "GPa": (("GPa", "Gpa", "ГПа", "吉帕"), ()),
    "bar": ((), ("bar", "бар", "巴")),
    "psi": (("psi",), ()),
    "V": (("В",), ("V", "伏", "伏特", "volt", "volts")),
    "kV": (("kV", "KV", "kv", "кВ", "千伏"), ("kilovolt", "kilovolts")),
    "mV": (("mV", "мВ", "毫伏"), ()),
    "A": ((), ("A", "А", "安", "安培", "ampere", "amperes", "amps")),
    "mA": (("mA", "мА", "毫安"), ()),
    "kA": (("kA", "KA", "кА", "千安"), ()),
    "W": (("Вт",), ("W", "瓦", "瓦特", "watt", "watts")),
    "kW": (("kW", "KW", "kw", "кВт", "千瓦"), ("kilowatt", "kilowatts")),
    "MW": (("MW", "МВт", "兆瓦"), ()),
    "kVA": (("kVA", "KVA", "кВА", "кВ·А", "千伏安"), ()),
    "kWh": (("kWh", "KWh", "kW·h", "кВт·ч", "千瓦时"), ()),
    "J": (("Дж",), ("J", "焦", "焦耳")),
    "kJ": (("kJ", "KJ", "кДж", "千焦"), ()),
    "Hz": (("Hz", "HZ", "hz", "Гц", "赫兹"), ("赫", "hertz")),
    "kHz": (("kHz", "KHz", "кГц", "千赫"), ()),
    "MHz": (("MHz", "МГц", "兆赫"), ()),
    "GHz": (("GHz", "ГГц"), ()),
    "m": ((), ("m", "м", "米", "metre", "metres", "meter", "meters", "mét")),
    "mm": (
        ("mm", "мм", "毫米"),
        ("millimetre", "millimetres", "millimeter", "millimeters", "mi-li-mét"),
    ),
    "cm": (("cm", "厘米"), ("см", "centimetre", "centimetres", "centimeter")),
    "km": (("km", "км", "千米", "公里"), ("kilometre", "kilometres", "kilometer")),
    "μm": (("μm", "мкм", "微米"), ("um", "micron", "microns")),
    "nm": (("nm", "нм", "纳米"), ()),
    "in": (("英寸", "дюйм", "дюйма", "дюймов"), ("inch", "inches")),
    "ft": (("ft", "英尺"), ("feet", "foot")),
    "mm²": (("mm²", "mm2", "mm^2", "мм²", "мм2", "平方毫米"), ()),
    "cm²": (("cm²", "cm2", "см²", "平方厘米"), ()),
    "m²": (("m²", "м²", "平方米"), ("m2", "м2")),
    "m³": (("m³", "м³", "立方米"), ("m3", "м3")),
    "mm³": (("mm³", "мм³", "立方毫米"), ()),
    "L": ((), ("L", "l", "л", "升", "litre", "litres", "liter", "liters", "lít")),
    "mL": (("mL", "ml", "мл", "毫升"), ()),
    "kg": (("kg", "KG", "Kg", "кг", "千克", "公斤"), ("kilogram", "kilograms")),
    "g": ((), ("g", "克", "gram", "grams")),
    "mg": (("mg", "мг", "毫克"), ()),
    "t": ((), ("t", "т", "吨", "tonne", "tonnes", "tấn")),
    "N": ((), ("N", "Н", "牛", "牛顿", "newton", "newtons")),
    "kN": (("kN", "KN", "кН", "千牛"), ()),
    "N·m": (("N·m", "N.m", "N*m", "Nm", "N-m", "Н·м", "Нм", "牛·米", "牛米"), ()),
    "kN·m": (("kN·m", "kN.m", "kNm", "кН·м", "千牛·米"), ()),
    "°C": (
        ("°C", "° C", "°С", "摄氏度"),
        ("degrees Celsius", "degree Celsius", "độ C", "градусов Цельсия"),
    ),
    "°F": (("°F", "华氏度"), ()),
    "°": (("°",), ("度", "degrees", "degree", "градусов", "градуса", "градус", "độ")),
    "K": ((), ("K", "К", "开尔文", "kelvin")),
    "s": ((), ("s", "秒", "сек", "giây", "seconds", "second")),
    "ms": (("ms", "мс", "毫秒"), ()),
    "min": ((), ("min", "мин", "分钟", "phút", "minutes", "minute")),
    "h": (
        (),
        (
            "h",
            "ч",
            "小时",
            "giờ",
            "hours",
            "hour",
            "час",
            "часа",
            "часов",
            "часового",
            "часовой",
        ),
    ),
    "r/min": (("r/min", "rpm", "об/мин", "转/分", "转/分钟", "vòng/phút"), ()),
    "m/s": (("m/s", "м/с", "米/秒"), ()),
    "km/h": (("km/h", "км/ч", "公里/小时", "千米/小时"), ()),
    "dB": (("dB", "дБ", "分贝"), ()),
    "Ω": (("Ω", "Ом", "欧姆"), ("欧", "ohm", "ohms")),
    "kΩ": (("kΩ", "кОм", "千欧"), ()),
    "MΩ": (("MΩ", "МОм", "兆欧"), ()),
    "ppm": (("ppm",), ()),
    "HRC": ((), ("HRC",)),
    "HB": ((), ("HBW", "HB")),
    "HV": ((), ("HV",)),
    "lx": (("lx", "лк", "勒克斯"), ()),
    "mol": (("mol", "моль", "摩尔"), ()),
}


def _is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _is_word_char(char: str) -> bool:
    """A letter or digit of an alphabetic script (Chinese text has no word gaps)."""
    return (char.isalnum() or char == "_") and not _is_cjk(char)


def _build_unit_tables():
    after_number: dict[str, str] = {}
    standalone: dict[str, str] = {}
    for canonical, (symbols, words) in _UNITS.items():
        for alias in symbols:
            after_number[alias] = canonical
            if len(alias) >= 2:
                standalone[alias] = canonical
        for alias in words:
            after_number[alias] = canonical
    return after_number, standalone


_UNIT_AFTER_NUMBER, _UNIT_STANDALONE = _build_unit_tables()


def _alternation(aliases) -> str:
    return "|".join(
        re.escape(alias) for alias in sorted(aliases, key=len, reverse=True)
    )


_UNIT_AFTER_RE = re.compile(r"[ \u00a0-]?(" + _alternation(_UNIT_AFTER_NUMBER) + ")")
_UNIT_STANDALONE_RE = re.compile("(" + _alternation(_UNIT_STANDALONE) + ")")
_UNIT_RE_BARE = re.compile("(" + _alternation(_UNIT_AFTER_NUMBER) + ")")
_IP_RE = re.compile(r"(?<![A-Za-z0-9])IP ?([0-9X]{2})([A-DHMSW]?)(?![A-Za-z0-9])")


def _unit_boundary_ok(text: str, start: int, end: int) -> bool:
    """A Latin or Cyrillic unit must not run into a neighbouring letter or digit."""
    alias = text[start:end]
    if _is_cjk(alias[0]):
        return True
    after = text[end] if end < len(text) else " "
    return not _is_word_char(after)


def _match_unit_at(text: str, position: int, *, space_allowed: bool):
    """A unit (possibly a compound like kg/m³) starting at `position`, or None."""
    pattern = _UNIT_AFTER_RE if space_allowed else _UNIT_RE_BARE
    match = pattern.match(text, position)
    if not match or not _unit_boundary_ok(text, match.start(1), match.end(1)):
        return None
    start, end = match.start(1), match.end(1)
    canonical = _UNIT_AFTER_NUMBER[match.group(1)]
    if end < len(text) and text[end] == "/" and canonical != "r/min":
        second = _UNIT_RE_BARE.match(text, end + 1)
        if second and _unit_boundary_ok(text, second.start(1), second.end(1)):
            canonical = canonical + "/" + _UNIT_AFTER_NUMBER[second.group(1)]
            end = second.end(1)
    return start, end, canonical


# ---------------------------------------------------------------------------------
# Standard identifiers.

_STANDARD_PREFIXES = (
    "GB/T GB/Z GBJ GB JB/T JB HG/T HG SH/T SH NB/T NB DL/T DL YB/T YB QC/T QB/T "
    "SY/T SJ/T JG/T JGJ CJJ CJ/T JJG JJF TB/T MT/T YS/T FZ/T HJ/T HJ TSG CECS "
    "ISO/IEC ISO IEC ASTM ASME ANSI API AWS DIN EN BS JIS NF UL SAE AISI NACE "
    "IEEE NFPA IPC CISPR TCVN QCVN GOST ГОСТ UN"
).split()
_STANDARD_RE = re.compile(
    r"(?<![A-Za-zА-Яа-я])"
    r"((?:(?:DIN|BS|NF|EN|ISO|IEC|ГОСТ)[ /])*"
    r"(?:" + "|".join(re.escape(prefix) for prefix in _STANDARD_PREFIXES) + r"))"
    r"(?: Р)?[ \u00a0]?"
    r"([A-Z]{0,2}[0-9]+(?:[.\-][0-9]+)*[A-Z]{0,2}(?:[:\-][0-9]{4})?)"
    r"(?![0-9A-Za-z])"
)


def _standard_value(surface: str) -> str:
    value = re.sub(r"[ \u00a0]", "", surface.upper())
    return value.replace("ГОСТР", "GOSTR").replace("ГОСТ", "GOST")


# ---------------------------------------------------------------------------------
# Chemical formulas and model codes.

_ELEMENTS = frozenset(
    """H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu
    Zn Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La
    Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po
    At Rn Fr Ra Ac Th Pa U Np Pu""".split()
)
_FORMULA_PART_RE = re.compile(r"\(|\)[0-9]{0,2}|([A-Z][a-z]?)([0-9]{0,2})")
_DIGITLESS_FORMULAS = frozenset({"KOH"})


def _is_formula(token: str) -> bool:
    """Whole token parses as element symbols with counts, e.g. H2SO4, Ca(OH)2, NaOH."""
    position, elements, has_count, depth = 0, 0, False, 0
    while position < len(token):
        match = _FORMULA_PART_RE.match(token, position)
        if not match or match.end() == position:
            return False
        part = match.group(0)
        if part == "(":
            depth += 1
        elif part.startswith(")"):
            depth -= 1
            has_count = has_count or len(part) > 1
        else:
            if match.group(1) not in _ELEMENTS or match.group(2).startswith("0"):
                return False
            elements += 1
            has_count = has_count or bool(match.group(2))
        if depth < 0:
            return False
        position = match.end()
    if depth or elements < 2:
        return False
    has_lowercase = any(char.islower() for char in token)
    return has_count or has_lowercase or token in _DIGITLESS_FORMULAS


# Letters and digits joined by "-" or "."; a bracket group only as in Ca(OH)2, and
# no joining to an ordinary word ("4-pole" is the number 4).
_ALNUM_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]|\([A-Za-z0-9]+\)[0-9])+"
    r"(?:[-.](?![a-z]{2,}(?![A-Za-z0-9]))[A-Za-z0-9]+)*(?![A-Za-z0-9])"
)
# T4–T6, M10-M20: a range of two codes with the same prefix.
_CODE_RANGE_RE = re.compile(r"([A-Z]+)[0-9]+-\1[0-9]+")
# Tokens that are really numbers: 10mm, 3.5kV, 10-20mm, 10x20, 3rd.
_NUMBERISH_RE = re.compile(r"[0-9][0-9.,\-x]*(?:st|nd|rd|th)?")


def _is_numberish(token: str) -> bool:
    match = _NUMBERISH_RE.match(token)
    if not match:
        return False
    rest = token[match.end() :]
    if not rest:
        return not re.search("[A-Za-z]", token.replace("x", "")) or bool(
            re.fullmatch(r"[0-9]+(st|nd|rd|th)", token)
        )
    if rest == "L":
        # 304L, 316L are steel grades; a volume is written "5 L".
        return False
    unit = _match_unit_at(token, match.end(), space_allowed=False)
    return bool(unit and unit[1] == len(token))


# ---------------------------------------------------------------------------------
# Numbers.

_NUMBER_RE = re.compile(
    r"(?P<sign>±[ ]?|-)?"
    r"(?P<body>[0-9]+(?:(?:[.,]|[ \u00a0](?=[0-9]{3}(?![0-9])))[0-9]+)*)"
    r"(?P<exp>\^[0-9]+|[⁰¹²³⁴⁵⁶⁷⁸⁹]+(?![A-Za-z]))?"
    r"(?P<percent>[ \u00a0]?[%‰])?"
    r"(?P<multiplier>[万亿])?"
)
_GROUPING = {
    # language: list of (thousands separators, decimal separators), preferred first
    "ru": [((" ", "\u00a0"), (",", ".")), ((",", "\u00a0"), (".",))],
    "vi": [((".", " ", "\u00a0"), (",",)), ((",", "\u00a0"), (".",))],
}
_DEFAULT_GROUPING = [((",", " ", "\u00a0"), (".",))]


def _canonical_number(integer: str, fraction: str) -> str:
    integer = integer.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    return f"{integer}.{fraction}" if fraction else integer


def _read_body(body: str, thousands, decimals) -> str | None:
    """The canonical value of `body` under one separator convention, or None."""
    parts = re.split(r"([., \u00a0])", body)
    groups, separators = parts[0::2], parts[1::2]
    fraction = ""
    if separators and separators[-1] in decimals:
        fraction = groups[-1]
        groups, separators = groups[:-1], separators[:-1]
    if any(separator not in thousands for separator in separators):
        return None
    if separators and (
        len(groups[0]) > 3 or any(len(group) != 3 for group in groups[1:])
    ):
        return None
    return _canonical_number("".join(groups), fraction)


def _number_readings(body: str, language: str) -> list[str]:
    readings = []
    for thousands, decimals in _GROUPING.get(language, _DEFAULT_GROUPING):
        value = _read_body(body, thousands, decimals)
        if value is not None and value not in readings:
            readings.append(value)
    return readings


def _times_power_of_ten(value: str, power: int) -> str:
    integer, _, fraction = value.partition(".")
    digits = integer + fraction.ljust(power, "0")
    return _canonical_number(
        digits[: len(integer) + power], digits[len(integer) + power :]
    )


def _number_start(masked: str, match: re.Match) -> tuple[int | None, str]:
    """Where a number token starts and its sign, or None when the digits belong to
    a word (letters right before them)."""
    start = match.start()
    sign = (match.group("sign") or "").replace(" ", "")
    if (
        sign == "-"
        and start > 0
        and re.match(r"[0-9A-Za-z)\]%‰°²³]", masked[start - 1])
    ):
        # 10-20, 2%–3%, 10 mm-20 mm are ranges, not a minus sign.
        sign, start = "", start + 1
    before = masked[start - 1] if start > 0 else " "
    after_digit = start > 1 and masked[start - 2].isdigit()
    if re.match("[A-Za-z]", before) and not (before in "xX" and after_digit):
        return None, ""
    return start, sign


def _number_pieces(match: re.Match, start: int, sign: str, language: str):
    """(start, end, readings) of the number tokens in one number match; a body that
    does not read as one number ("0,5" in English, clause "5.2.3") is split at commas
    and spaces, and a piece that still does not read is kept literally."""
    body = match.group("body")
    body_start = match.start("body")
    readings = _number_readings(body, language)
    if readings:
        pieces = [(body_start, body, readings)]
    else:
        pieces = []
        for piece in re.finditer(r"[^, \u00a0]+", body):
            pieces.append(
                (
                    body_start + piece.start(),
                    piece.group(),
                    _number_readings(piece.group(), language) or [piece.group()],
                )
            )
    exponent, percent = match.group("exp"), match.group("percent")
    suffix = ""
    if exponent:
        suffix += "^" + exponent.lstrip("^").translate(_SUPERSCRIPT_DIGITS)
    if percent:
        suffix += percent.strip(" \u00a0")
    last_end = match.end("percent") if percent else match.end("body")
    if exponent and not percent:
        last_end = match.end("exp")
    for index, (piece_start, piece, values) in enumerate(pieces):
        first, last = index == 0, index == len(pieces) - 1
        prefix = sign if first else ""
        piece_suffix = suffix if last else ""
        out = [prefix + value + piece_suffix for value in values]
        if last and match.group("multiplier"):
            power = 4 if match.group("multiplier") == "万" else 8
            out += [
                prefix + _times_power_of_ten(value, power) + piece_suffix
                for value in values
                if re.fullmatch(r"[0-9]+(\.[0-9]+)?", value)
            ]
        yield (
            start if first else piece_start,
            last_end if last else piece_start + len(piece),
            out,
        )


_SMALL_NUMBER_WORDS = {
    "en": "zero one two three four five six seven eight nine ten eleven twelve",
    "ru": "ноль один два три четыре пять шесть семь восемь девять десять "
    "одиннадцать двенадцать",
    "vi": "không một hai ba bốn năm sáu bảy tám chín mười mười_một mười_hai",
    "zh": "零 一 二 三 四 五 六 七 八 九 十 十一 十二",
}
_EXTRA_WORDS = {
    "en": {"1": ("single", "once"), "2": ("both", "twice", "pair", "double")},
    "ru": {"1": ("одна", "одно", "одной"), "2": ("две", "двух", "оба", "обе")},
    "zh": {"2": ("两", "双")},
}


def _number_word_table() -> dict[str, tuple[dict[str, str], re.Pattern]]:
    tables = {}
    for language, words in _SMALL_NUMBER_WORDS.items():
        value_of = {
            word.replace("_", " "): str(value)
            for value, word in enumerate(words.split())
        }
        for value, forms in _EXTRA_WORDS.get(language, {}).items():
            value_of.update(dict.fromkeys(forms, value))
        if language == "zh":
            pattern = re.compile(_alternation(value_of))
        else:
            pattern = re.compile(r"(?<!\w)(" + _alternation(value_of) + r")(?!\w)")
        tables[language] = (value_of, pattern)
    return tables


_NUMBER_WORDS = _number_word_table()


def _spelled_small_numbers(text: str, language: str) -> set[str]:
    """Values 0–12 spelled out as words in `text`."""
    if language not in _NUMBER_WORDS:
        return set()
    value_of, pattern = _NUMBER_WORDS[language]
    return {value_of[word] for word in pattern.findall(text.lower())}


# ---------------------------------------------------------------------------------
# Extraction.


def _language(code: str) -> str:
    return (code or "").split("-")[0].split("_")[0].lower()


def extract_tokens(text: str, language: str) -> list[Token]:
    """All preserved tokens of `text` written in `language`, ordered by position."""
    language = _language(language)
    norm, origin = _normalise(text)
    chars = list(norm)
    tokens: list[Token] = []

    def add(category: str, start: int, end: int, values: list[str]) -> None:
        original_start, original_end = origin[start], origin[end - 1] + 1
        tokens.append(
            Token(
                category=category,
                text=text[original_start:original_end],
                value=values[0],
                values=frozenset(values),
                start=original_start,
                end=original_end,
            )
        )
        chars[start:end] = [_MASK] * (end - start)

    def current() -> str:
        return "".join(chars)

    for match in _STANDARD_RE.finditer(current()):
        add("standard", match.start(), match.end(), [_standard_value(match.group())])
    for match in _IP_RE.finditer(current()):
        add(
            "unit", match.start(), match.end(), ["IP" + match.group(1) + match.group(2)]
        )
    for match in _ALNUM_RE.finditer(current()):
        token, start, end = match.group(), match.start(), match.end()
        if not re.search("[0-9]", token) and not _is_formula(token):
            continue
        if _is_formula(token):
            add("formula", start, end, [token])
        elif _CODE_RANGE_RE.fullmatch(token):
            first, second = token.split("-")
            add("model", start, start + len(first), [first])
            add("model", end - len(second), end, [second])
        elif (
            re.search("[A-Za-z]", token)
            and not _is_numberish(token)
            and token not in _UNIT_AFTER_NUMBER
        ):
            add("model", start, end, [token])

    masked = current()
    for match in _NUMBER_RE.finditer(masked):
        start, sign = _number_start(masked, match)
        if start is None:
            continue
        for token_start, token_end, readings in _number_pieces(
            match, start, sign, language
        ):
            add("number", token_start, token_end, readings)
        unit = _match_unit_at(current(), match.end(), space_allowed=True)
        if unit and not match.group("percent"):
            add("unit", unit[0], unit[1], [unit[2]])

    masked = current()
    for match in _UNIT_STANDALONE_RE.finditer(masked):
        start, end = match.span(1)
        before = masked[start - 1] if start > 0 else " "
        if not _is_cjk(match.group(1)[0]) and _is_word_char(before):
            continue
        if not _unit_boundary_ok(masked, start, end):
            continue
        unit = _match_unit_at(current(), start, space_allowed=False)
        if unit:
            add("unit", unit[0], unit[1], [unit[2]])

    tokens.sort(key=lambda token: (token.start, token.end))
    return tokens


# ---------------------------------------------------------------------------------
# Comparison.


@dataclass(frozen=True)
class PreservationResult:
    source_tokens: tuple[Token, ...]
    target_tokens: tuple[Token, ...]
    missing: tuple[Token, ...]  # source tokens with no match in the target
    extra: tuple[Token, ...]  # target tokens with no match in the source

    @property
    def passed(self) -> bool:
        return not self.missing and not self.extra

    def source_spans(self) -> list[dict]:
        return _spans(self.source_tokens, set(self.missing), "missing")

    def target_spans(self) -> list[dict]:
        return _spans(self.target_tokens, set(self.extra), "extra")


def _spans(tokens, flagged: set, flagged_status: str) -> list[dict]:
    return [
        {
            "start": token.start,
            "end": token.end,
            "category": token.category,
            "text": token.text,
            "value": token.value,
            "status": flagged_status if token in flagged else "kept",
        }
        for token in tokens
    ]


def _unmatched(tokens, others, spelled: set[str]) -> tuple[Token, ...]:
    available: dict[str, set[str]] = {}
    for other in others:
        available.setdefault(other.category, set()).update(other.values)
    return tuple(
        token
        for token in tokens
        if not token.values & available.get(token.category, set())
        and not (token.category == "number" and token.values & spelled)
    )


def check_preservation(
    source: str, target: str, *, source_language: str, target_language: str
) -> PreservationResult:
    """Compare one source text with its translation."""
    source_tokens = tuple(extract_tokens(source, source_language))
    target_tokens = tuple(extract_tokens(target, target_language))
    return PreservationResult(
        source_tokens=source_tokens,
        target_tokens=target_tokens,
        missing=_unmatched(
            source_tokens,
            target_tokens,
            _spelled_small_numbers(target, _language(target_language)),
        ),
        extra=_unmatched(
            target_tokens,
            source_tokens,
            _spelled_small_numbers(source, _language(source_language)),
        ),
    )
