"""The relations' resources a team maintains per benchmark, as CSV (no ORM).

One row per entry: ``kind,language,key,value``.

    synonym     term → synonym (USB → U盘) for the synonym relation
    industry    sector → the industry's name in the general context ("In the
                {name} industry, …"); a sector without one is named as it is
    law         sector → the law the security context names; key ``*`` for every
                sector without its own
    irrelevant  an option that is never right (the key may be left empty); a
                language without any uses relations.IRRELEVANT_OPTIONS

The whole text is checked before anything is written (``parse``): every problem is
reported by line and column, and a file with any problem changes nothing.
``resources_for`` turns the stored entries into relations.Resources for one
language and sector.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass

from benchmark.validation import Problems
from judging.robustness.relations import IRRELEVANT_OPTIONS, Resources

KINDS = ("synonym", "industry", "law", "irrelevant")
LANGUAGES = ("zh", "en", "ru", "vi")
COLUMNS = ("kind", "language", "key", "value")
MAX_KEY, MAX_VALUE = 200, 500
MAX_ROWS = 20_000


@dataclass(frozen=True)
class Entry:
    kind: str
    language: str
    key: str
    value: str


def parse(text: str) -> tuple[list[Entry], Problems]:
    """The entries of a CSV text (a BOM is fine), or the problems that reject it."""
    problems = Problems()
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        problems.add(
            0, "", "the file is empty; write a header line: kind,language,key,value"
        )
        return [], problems
    header = [cell.strip().lower() for cell in rows[0]]
    if header != list(COLUMNS):
        problems.add(
            1, "", f"the header must be {','.join(COLUMNS)}, not {','.join(header)}"
        )
        return [], problems
    if len(rows) - 1 > MAX_ROWS:
        problems.add(0, "", f"{len(rows) - 1} rows; at most {MAX_ROWS}")
        return [], problems
    entries: list[Entry] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(COLUMNS):
            problems.add(line, "", f"{len(row)} cells; expected {len(COLUMNS)}")
            continue
        kind, language, key, value = (cell.strip() for cell in row)
        if kind not in KINDS:
            problems.add(line, "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
        if language not in LANGUAGES:
            problems.add(
                line, "language", f"{language!r} is not one of {', '.join(LANGUAGES)}"
            )
        if kind == "irrelevant" and not key:
            key = value
        if not key:
            problems.add(line, "key", "empty")
        if not value:
            problems.add(line, "value", "empty")
        if len(key) > MAX_KEY:
            problems.add(line, "key", f"longer than {MAX_KEY} characters")
        if len(value) > MAX_VALUE:
            problems.add(line, "value", f"longer than {MAX_VALUE} characters")
        if kind == "synonym" and key and key == value:
            problems.add(line, "value", "the synonym is the term itself")
        identity = (kind, language, key)
        if identity in seen:
            problems.add(
                line, "key", f"{key!r} is already given on line {seen[identity]}"
            )
        else:
            seen[identity] = line
        entries.append(Entry(kind, language, key, value))
    return entries, problems


def to_csv(entries: Iterable[Entry]) -> str:
    """The entries as the CSV `parse` reads (what the edit form shows)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for entry in entries:
        writer.writerow([entry.kind, entry.language, entry.key, entry.value])
    return out.getvalue()


def resources_for(
    entries: Iterable[Entry], language: str, sector: str, *, seed: int = 0
) -> tuple[Resources, str]:
    """The relations' Resources for an item in `language` and `sector`, and the
    industry name its general context writes."""
    glossary, irrelevant = {}, []
    industry, law, any_law = "", "", ""
    for entry in entries:
        if entry.language != language:
            continue
        if entry.kind == "synonym":
            glossary[entry.key] = entry.value
        elif entry.kind == "irrelevant":
            irrelevant.append(entry.value)
        elif entry.kind == "industry" and entry.key == sector:
            industry = entry.value
        elif entry.kind == "law" and entry.key == sector:
            law = entry.value
        elif entry.kind == "law" and entry.key == "*":
            any_law = entry.value
    options = (
        {**IRRELEVANT_OPTIONS, language: tuple(irrelevant)}
        if irrelevant
        else IRRELEVANT_OPTIONS
    )
    resources = Resources(
        glossary=glossary, law=law or any_law, irrelevant_options=options, seed=seed
    )
    return resources, industry or sector
