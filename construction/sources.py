"""Reading source files (CSV or JSON Lines) into source records, all or nothing:
every problem is collected with its line and field (benchmark.validation), and a
file with any problem writes nothing. No ORM here; `actions.do_import_sources`
writes what this module read.

A row names its kind (`gbt_standard`, `product_record` or `forum_post`), its
text, and either a `reference` or the parts it is made of: `standard_id`,
`edition`, `clause` for a standard; `category`, `record_id` for a product record;
`forum`, `post_id` for a forum post. Every other column (or the JSONL object's
`fields`) is kept in `fields`; `label` there is the stratum release sampling uses.
A forum post's metadata (time, views, replies, votes, screenshots) is checked
by construction.forum.posts.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from benchmark.validation import Problems, json_objects, text_problem
from construction.forum.posts import read_post_fields

FORUM_POST = "forum_post"
KINDS = ("gbt_standard", "product_record", FORUM_POST)
REFERENCE_PARTS = {
    "gbt_standard": ("standard_id", "edition", "clause"),
    "product_record": ("category", "record_id"),
    FORUM_POST: ("forum", "post_id"),
}
CORE = {"kind", "reference", "text", "fields"}
MAX_REFERENCE = 300


@dataclass(frozen=True)
class SourceRecord:
    line: int
    kind: str
    reference: str
    text: str
    fields: dict = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        return content_hash(self.kind, self.text)


def content_hash(kind: str, text: str) -> str:
    """sha256 of the kind and the text as NFKC with whitespace collapsed, so a
    re-exported file with other line breaks or full-width digits is the same
    source."""
    normal = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()
    return hashlib.sha256(f"{kind}\n{normal}".encode()).hexdigest()


def read_sources(data: bytes, filename: str) -> tuple[list[SourceRecord], Problems]:
    """The file's records and its problems (JSON Lines by the .jsonl/.json
    extension, else CSV)."""
    problems = Problems()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        problems.add(0, "", f"not UTF-8 text (byte {error.start})")
        return [], problems
    if filename.lower().endswith((".jsonl", ".json")):
        rows = _jsonl_rows(text, problems)
    else:
        rows = _csv_rows(text, problems)
    records = [
        record
        for line, row in rows
        if (record := _record(line, row, problems)) is not None
    ]
    if not records and not problems:
        problems.add(0, "", "the file holds no sources")
    return records, problems


def _csv_rows(text: str, problems: Problems) -> Iterable[tuple[int, dict]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = {"kind", "text"} - set(reader.fieldnames or [])
    if missing:
        problems.add(0, "", f"missing column(s): {', '.join(sorted(missing))}")
        return []
    rows = []
    for row in reader:
        line = reader.line_num
        if None in row:
            problems.add(line, "", "more cells than columns")
            continue
        found = text_problem(row)
        if found:
            problems.add(line, *found)
            continue
        extra = {k: v for k, v in row.items() if k not in CORE and v != ""}
        rows.append((line, {**row, "fields": extra}))
    return rows


def _jsonl_rows(text: str, problems: Problems) -> Iterable[tuple[int, dict]]:
    return list(json_objects(text.splitlines(), problems))


def _record(line: int, row: dict, problems: Problems) -> SourceRecord | None:
    before = problems.total
    kind = row.get("kind")
    if kind not in KINDS:
        problems.add(
            line, "kind", f"must be {', '.join(KINDS)}, not {json.dumps(kind)}"
        )
    text = row.get("text")
    if not isinstance(text, str) or not text.strip():
        problems.add(line, "text", "must be non-empty text")
    fields = row.get("fields", {})
    if not isinstance(fields, dict):
        problems.add(line, "fields", "must be an object")
        fields = {}
    reference = row.get("reference") or ""
    if not isinstance(reference, str):
        problems.add(line, "reference", "must be text")
        reference = ""
    if not reference.strip() and kind in KINDS:
        parts = [
            str(row.get(name) or fields.get(name) or "").strip()
            for name in REFERENCE_PARTS[kind]
        ]
        if not all(parts):
            problems.add(
                line,
                "reference",
                "give a reference, or "
                + ", ".join(REFERENCE_PARTS[kind])
                + " to build it from",
            )
        reference = " ".join(parts)
    if kind == FORUM_POST:
        fields = read_post_fields(line, fields, problems)
    if len(reference) > MAX_REFERENCE:
        problems.add(line, "reference", f"longer than {MAX_REFERENCE} characters")
    if problems.total > before:
        return None
    return SourceRecord(line, kind, reference.strip(), text.strip(), fields)
