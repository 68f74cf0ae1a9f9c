"""Streaming, all-or-nothing import of benchmark items.

Two layouts are read:

* the public IndustryBench layout, as CSV or JSONL: columns `id, question, answer,
  question_en, answer_en, question_ru, answer_ru, question_vi, answer_vi, difficulty,
  _format, industry_primary, capability, knowledge_text, domain` (question/answer are
  in the benchmark's source language; labels given by name or code), plus the optional
  columns `source_kind`, `source_reference`, `status` and `label_<dimension>` that
  Assay's own CSV export adds, and the item-format columns (`item_format`, the answer
  key, `option_a` … `option_g`, `key_point_1` … `key_point_5`);
* the generic Assay JSONL, one item per line with a `renderings` object keyed by
  language (see docs/IMPORT_FORMATS.md).

A file without any item-format column or field reads as it did before formats
existed: its items are open QA, and an update leaves an item's format alone. The
format rules are benchmark.formats'.

The file is read once, inside one transaction. Every row is parsed and validated; as
long as no problem has been seen, valid rows are written in batches (PostgreSQL COPY,
`bulk_create` on other databases). After the first problem writing stops, validation
goes on so that every problem is reported (the first 100 are kept), and the import
raises `ImportRejected`, which rolls the whole transaction back: nothing is ever
half-imported. Memory stays flat: only one batch and the ids seen so far are held.
"""

import codecs
import csv
import itertools
import json
import queue
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.utils import timezone

from benchmark import formats
from benchmark.actions import (
    RenderingChange,
    do_add_rendering_versions,
    do_create_benchmark,
    do_set_final_label,
)
from benchmark.csv_writer import unneutralise
from benchmark.formats import FormatIssue, RenderingFormat, format_issues
from benchmark.models import Benchmark, FinalLabel, Item, ItemEvent, Label, Rendering
from benchmark.taxonomy import fold_label
from benchmark.validation import (
    Problems,
    json_objects,
)

BATCH_SIZE = 2000

INDUSTRYBENCH = "industrybench"
GENERIC_JSONL = "jsonl"
LAYOUTS = ("auto", INDUSTRYBENCH, GENERIC_JSONL)

# The public dataset's label columns and the taxonomy dimensions they fill.
LABEL_COLUMNS = {"capability": "capability", "industry_primary": "industry"}
EXTRA_LABEL_PREFIX = "label_"
# A wider header is no benchmark file; reading one would only pin a worker.
MAX_COLUMNS = 10_000
BASE_COLUMNS = (
    "id",
    "question",
    "answer",
    "difficulty",
    "_format",
    "industry_primary",
    "capability",
    "knowledge_text",
    "domain",
)
OPTIONAL_COLUMNS = ("source_kind", "source_reference", "status")
# An item's format and answer key. `format` and `_format` already name the source
# file's format (Item.source_format), hence `item_format`.
FORMAT_FIELDS = ("item_format", "correct_options", "multiple_answers", "correct_answer")
# One column per option and per key point (option_a … option_g, key_point_1 …
# key_point_5), suffixed _<language> for a translation like question_<language>.
OPTION_PREFIX = "option_"
KEY_POINT_PREFIX = "key_point_"
OPTION_KEYS = formats.LETTERS.lower()
KEY_POINT_KEYS = "".join(str(n) for n in range(1, formats.MAX_KEY_POINTS + 1))
GENERIC_KEYS = {
    *FORMAT_FIELDS,
    "id",
    "source_kind",
    "source_reference",
    "knowledge_text",
    "domain",
    "difficulty",
    "status",
    "format",
    "labels",
    "renderings",
}
RENDERING_KEYS = {
    "question",
    "answer",
    "origin",
    "review_status",
    "options",
    "key_points",
}

DIFFICULTIES = set(Item.Difficulty.values)
SOURCE_KINDS = set(Item.SourceKind.values)
STATUSES = set(Item.Status.values)
ORIGINS = set(Rendering.Origin.values)
REVIEW_STATUSES = set(Rendering.ReviewStatus.values)
ITEM_FORMATS = set(Item.Format.values)
# Plain strings, not enum members: they are written for every rendering.
SOURCE_ORIGIN = Rendering.Origin.SOURCE.value
IMPORTED_ORIGIN = Rendering.Origin.IMPORTED.value
APPROVED = Rendering.ReviewStatus.APPROVED.value

GBT_REFERENCE = re.compile(r"\bGB(?:/T)?\s?\d+(?:\.\d+)*-\d{4}\b")


@dataclass
class RenderingRecord:
    question: str
    answer: str
    origin: str
    review_status: str
    # None: the file has no options / key points at all (an update keeps the
    # current ones); a list, possibly empty, when it has.
    options: list[str] | None = None
    key_points: list[str] | None = None


@dataclass
class ItemRecord:
    line: int
    external_id: str
    source_kind: str = Item.SourceKind.OTHER
    source_reference: str = ""
    knowledge_text: str = ""
    domain: str = ""
    difficulty: str = ""
    status: str = Item.Status.ACTIVE
    source_format: str = ""
    # None: the file says nothing about formats; a new item is open QA and an
    # update leaves the format and answer key alone.
    item_format: str | None = None
    correct_options: list[str] = field(default_factory=list)
    multiple_answers: bool = False
    correct_answer: bool | None = None
    labels: list[Label] = field(default_factory=list)
    renderings: dict[str, RenderingRecord] = field(default_factory=dict)


@dataclass
class ImportSummary:
    benchmark: Benchmark
    layout: str
    benchmark_created: bool = False
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    renderings_added: int = 0
    labels_set: int = 0
    human_labels_kept: list[str] = field(default_factory=list)
    ignored_fields: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        text = [
            f"Benchmark {self.benchmark.slug}"
            f"{' (new)' if self.benchmark_created else ''}: "
            f"{self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged ({self.layout} layout).",
        ]
        if self.updated:
            text.append(
                f"{self.renderings_added} new rendering version(s), "
                f"{self.labels_set} label(s) changed."
            )
        if self.human_labels_kept:
            text.append(
                "Kept human label decisions over the file for: "
                + ", ".join(self.human_labels_kept[:20])
                + (" …" if len(self.human_labels_kept) > 20 else "")
            )
        if self.ignored_fields:
            text.append("Ignored columns: " + ", ".join(self.ignored_fields))
        return text


class Taxonomy:
    """Label lookup for one benchmark: by code, name or declared alias, each read
    through `fold_label` (case, spacing, `&`/`and` do not matter)."""

    def __init__(self, benchmark: Benchmark):
        self.dimensions = {d.code: d for d in benchmark.dimensions.all()}
        self._labels: dict[tuple[str, str], set[Label]] = {}
        for dimension in self.dimensions.values():
            for label in dimension.labels.all():
                for text in {label.code, label.name, *label.aliases}:
                    key = (dimension.code, fold_label(text))
                    self._labels.setdefault(key, set()).add(label)

    def resolve(self, dimension_code: str, value: str) -> tuple[Label | None, str]:
        """(the label `value` names, "") or (None, why not): unknown, or the name of
        two labels at once — never a guess between them."""
        found = self._labels.get((dimension_code, fold_label(value)), set())
        if len(found) == 1:
            return next(iter(found)), ""
        if not found:
            return None, f"unknown {dimension_code} label {value!r}"
        names = " and ".join(sorted(f"{label.name} ({label.code})" for label in found))
        return None, f"{dimension_code} label {value!r} is ambiguous: it names {names}"


# ---------------------------------------------------------------------------- reading


def _decoded_lines(source: Iterable[bytes], problems: Problems) -> Iterator[str]:
    """Yield each line as text; invalid UTF-8 becomes a problem, not an exception.

    Lines split on b"\\n", which never occurs inside a UTF-8 sequence, so decoding line
    by line is exact and lets the error name its line.
    """
    for number, raw in enumerate(source, start=1):
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.add(number, "file", f"invalid UTF-8 at byte {error.start + 1}")
            yield raw.decode("utf-8", errors="replace")


class _LineCounter:
    """Wraps the decoded lines and remembers how many have been read."""

    def __init__(self, lines: Iterator[str]):
        self._lines = lines
        self.count = 0

    def __iter__(self):
        for line in self._lines:
            self.count += 1
            yield line


def _csv_rows(
    lines: _LineCounter, problems: Problems
) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.reader(iter(lines))
    header: list[str] = []
    try:
        while not header:
            header = next(reader)
    except StopIteration:
        pass
    except csv.Error as error:
        problems.add(lines.count, "header", f"unreadable CSV header ({error})")

    def rows():
        while True:
            start = lines.count + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                problems.add(start, "row", f"unreadable CSV ({error})")
                continue
            if any("\x00" in cell for cell in row):
                problems.add(start, "row", "contains a NUL character (no field can)")
                continue
            if any(cell.strip() for cell in row):
                # Assay's own exports put an apostrophe before formula-looking text
                # (benchmark.csv_writer); reading them back takes exactly that off.
                yield start, [unneutralise(cell) for cell in row]

    return [name.strip() for name in header], rows()


def _detect_layout(first_line: str, requested: str) -> tuple[str, bool]:
    """Return (layout, is_json) from the first non-empty line and --format."""
    is_json = first_line.lstrip().startswith("{")
    if requested == GENERIC_JSONL:
        return GENERIC_JSONL, True
    if requested == INDUSTRYBENCH or not is_json:
        return INDUSTRYBENCH, is_json
    try:
        value = json.loads(first_line)
    except (ValueError, RecursionError):
        # Not readable JSON: reading the file as JSON Lines reports why, by line.
        return GENERIC_JSONL, True
    if isinstance(value, dict) and "renderings" in value:
        return GENERIC_JSONL, True
    return INDUSTRYBENCH, True


# ------------------------------------------------------------------------- validating


class _Validator:
    """Turns raw rows into ItemRecords, adding a problem for every bad field."""

    def __init__(
        self,
        benchmark: Benchmark,
        taxonomy: Taxonomy,
        problems: Problems,
        existing: set[str],
        update: bool,
    ):
        self.benchmark = benchmark
        self.taxonomy = taxonomy
        self.problems = problems
        self.existing = existing
        self.update = update
        self.seen: dict[str, int] = {}
        self._column_cache: dict[tuple[str, ...], tuple[list, list]] = {}
        self.languages = benchmark.languages
        self.source_language = benchmark.source_language

    def _problem(self, line, field_name, message):
        self.problems.add(line, field_name, message)

    def text(self, line: int, field_name: str, value, *, max_length=None) -> str:
        if type(value) is str and (max_length is None or len(value) <= max_length):
            return value  # the common case, kept cheap: it runs ~20 times per row
        if value is None:
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self._problem(line, field_name, "expected text")
            return ""
        value = str(value)
        if max_length and len(value) > max_length:
            self._problem(line, field_name, f"longer than {max_length} characters")
        return value

    def external_id(self, line: int, field_name: str, value) -> str:
        external_id = self.text(line, field_name, value, max_length=128).strip()
        if not external_id:
            self._problem(line, field_name, "empty id")
            return ""
        first = self.seen.get(external_id)
        if first is not None:
            self._problem(
                line,
                field_name,
                f"duplicate id {external_id!r} (first on line {first})",
            )
        else:
            self.seen[external_id] = line
        if external_id in self.existing and not self.update:
            self._problem(
                line,
                field_name,
                f"item {external_id!r} already exists in {self.benchmark.slug}; to "
                "change it, import with “Update items whose id already exists” "
                "ticked (--update on the command line)",
            )
        return external_id

    def choice(self, line, field_name, value, allowed: set[str], default: str) -> str:
        if value is None:
            return default
        raw = self.text(line, field_name, value).strip()
        if not raw:
            return default
        normalized = raw.lower()
        if normalized not in allowed:
            choices = ", ".join(sorted(v for v in allowed if v))
            self._problem(line, field_name, f"{raw!r} is not one of {choices}")
            return default
        return normalized

    def difficulty(self, line, field_name, value) -> str:
        return self.choice(line, field_name, value, DIFFICULTIES, "")

    def label(self, line, field_name, dimension_code: str, value) -> Label | None:
        raw = self.text(line, field_name, value).strip()
        if not raw:
            return None
        if dimension_code not in self.taxonomy.dimensions:
            self._problem(
                line,
                field_name,
                f"benchmark {self.benchmark.slug} has no label dimension "
                f"{dimension_code!r}",
            )
            return None
        label, problem = self.taxonomy.resolve(dimension_code, raw)
        if label is None:
            self._problem(line, field_name, problem)
        return label

    def rendering(
        self,
        line,
        language: str,
        question,
        answer,
        *,
        question_field: str,
        answer_field: str,
        origin=None,
        review_status=None,
        options: list[str] | None = None,
        key_points: list[str] | None = None,
        required: bool,
    ) -> RenderingRecord | None:
        """The rendering, or None for a translation the row leaves empty (or one in
        a language the benchmark lacks, reported). Whether the answer may be empty
        depends on the format: `check_format` says."""
        question = self.text(line, question_field, question)
        answer = self.text(line, answer_field, answer)
        # strip() returns the string itself when there is nothing to strip, so these
        # cost little even for long texts; they run four times per item.
        has_question = bool(question.strip())
        if (
            not required
            and not has_question
            and not answer.strip()
            and not options
            and not key_points
        ):
            return None
        if language not in self.languages:
            self._problem(
                line,
                question_field,
                f"unknown language {language!r}; benchmark {self.benchmark.slug} "
                f"has {', '.join(self.languages)}",
            )
            return None
        if not has_question:
            self._problem(line, question_field, "empty question")
        default_origin = (
            SOURCE_ORIGIN if language == self.source_language else IMPORTED_ORIGIN
        )
        if origin is None and review_status is None:
            # Every IndustryBench rendering: no field names to build, nothing to check.
            return RenderingRecord(
                question, answer, default_origin, APPROVED, options, key_points
            )
        prefix = question_field.rsplit(".", 1)[0]
        return RenderingRecord(
            question=question,
            answer=answer,
            options=options,
            key_points=key_points,
            origin=self.choice(
                line, f"{prefix}.origin", origin, ORIGINS, default_origin
            ),
            review_status=self.choice(
                line,
                f"{prefix}.review_status",
                review_status,
                REVIEW_STATUSES,
                APPROVED,
            ),
        )

    def industrybench_columns(
        self, columns: list[str], *, line: int = 1, missing: str = "missing column"
    ) -> list[str]:
        """Check a CSV header / JSON key set; return the columns that are ignored.
        Linear in the number of columns, and at most MAX_COLUMNS are read."""
        if len(columns) > MAX_COLUMNS:
            self._problem(
                line,
                "",
                f"{len(columns):,} columns; an item file has at most {MAX_COLUMNS:,}",
            )
            return []
        required = list(BASE_COLUMNS)
        for language in self.benchmark.target_languages:
            required += [f"question_{language}", f"answer_{language}"]
        present = set(columns)
        for name in required:
            if name not in present:
                self._problem(line, name, missing)
        for name in columns:
            answer = f"answer_{name[len('question_') :]}"
            if name.startswith("question_") and answer not in present:
                if answer not in required:
                    self._problem(line, answer, missing)
        for name in columns:
            if name.startswith((OPTION_PREFIX, KEY_POINT_PREFIX)):
                self._list_column_name(line, name, present)
        counts = Counter(columns)
        duplicates = sorted(name for name, count in counts.items() if count > 1)
        for name in duplicates:
            self._problem(line, name, "column appears more than once")
        return [name for name in columns if not self._known_column(name)]

    def _list_column_name(self, line: int, name: str, present: set[str]):
        parsed = list_column(name)
        if parsed is None:
            self._problem(
                line,
                name,
                "not an option or key-point column: options are option_a to "
                "option_g, key points key_point_1 to key_point_5, each with "
                "_<language> after it for a translation",
            )
        elif parsed[2] == self.source_language:
            self._problem(
                line,
                name,
                f"the source language ({self.source_language}) takes no suffix: "
                "option_a, key_point_1",
            )
        elif parsed[2] and f"question_{parsed[2]}" not in present:
            self._problem(
                line, name, f"no question_{parsed[2]} column for this translation"
            )

    def _known_column(self, name: str) -> bool:
        return (
            name in BASE_COLUMNS
            or name in OPTIONAL_COLUMNS
            or name in FORMAT_FIELDS
            or name.startswith(
                (
                    "question_",
                    "answer_",
                    EXTRA_LABEL_PREFIX,
                    OPTION_PREFIX,
                    KEY_POINT_PREFIX,
                )
            )
        )

    def _columns_of(self, columns: tuple[str, ...]):
        """(question column, language) pairs, (label column, dimension) pairs, and
        per language the option and key-point columns in order (None where the
        file has no such column) — or None when the file has no format columns."""
        if columns in self._column_cache:
            return self._column_cache[columns]
        languages = [
            (name, name[len("question_") :])
            for name in columns
            if name.startswith("question_")
        ]
        labels = list(LABEL_COLUMNS.items()) + [
            (name, name[len(EXTRA_LABEL_PREFIX) :])
            for name in columns
            if name.startswith(EXTRA_LABEL_PREFIX)
        ]
        lists: dict[str, dict[str, list[str | None]]] | None = None
        if any(name in FORMAT_FIELDS or list_column(name) for name in columns):
            lists = {
                language: {
                    "options": [None] * formats.MAX_OPTIONS,
                    "key_points": [None] * formats.MAX_KEY_POINTS,
                }
                for language in [self.source_language, *(code for _, code in languages)]
            }
            for name in columns:
                parsed = list_column(name)
                if parsed:
                    kind, index, language = parsed
                    lists[language or self.source_language][kind][index] = name
        self._column_cache[columns] = languages, labels, lists
        return languages, labels, lists

    def _list_cells(self, line: int, row: dict, names: list[str | None]) -> list[str]:
        """The options (or key points) of one language: the cells in order, up to
        the last non-empty one; an empty one before it stays, to be reported."""
        cells = [self.text(line, name, row[name]) if name else "" for name in names]
        while cells and not cells[-1].strip():
            cells.pop()
        return cells

    def format_fields(self, line: int, record: ItemRecord, values: dict) -> set[str]:
        """Read the item's format and answer key from `values` (keyed by
        FORMAT_FIELDS; a missing one is empty) into `record`; return the fields
        that could not be read, already reported."""
        unreadable = set()
        before = self.problems.total
        record.item_format = self.choice(
            line,
            "item_format",
            values.get("item_format"),
            ITEM_FORMATS,
            formats.OPEN,
        )
        if self.problems.total > before:
            unreadable.add("item_format")
        record.correct_options, error = formats.parse_letters(
            values.get("correct_options")
        )
        if error:
            self._problem(line, "correct_options", error)
            unreadable.add("correct_options")
        multiple, error = formats.parse_bool(values.get("multiple_answers"))
        record.multiple_answers = bool(multiple)
        if error:
            self._problem(line, "multiple_answers", error)
            unreadable.add("multiple_answers")
        record.correct_answer, error = formats.parse_bool(values.get("correct_answer"))
        if error:
            self._problem(line, "correct_answer", error)
            unreadable.add("correct_answer")
        return unreadable

    def check_format(
        self,
        line: int,
        record: ItemRecord,
        unreadable: set[str],
        field_name: Callable[[FormatIssue], str],
    ):
        """Report what benchmark.formats finds wrong with the row's format data (a
        row that says nothing of formats is open QA), naming each problem's field
        with `field_name`. A field in `unreadable` (already reported) is not again,
        and an unreadable format leaves nothing to check against."""
        if "item_format" in unreadable:
            return
        issues = format_issues(
            record.item_format or formats.OPEN,
            correct_options=record.correct_options,
            multiple_answers=record.multiple_answers,
            correct_answer=record.correct_answer,
            renderings=[
                RenderingFormat(
                    language,
                    rendering.answer,
                    rendering.options or [],
                    rendering.key_points or [],
                )
                for language, rendering in record.renderings.items()
            ],
            source_language=self.source_language,
        )
        for issue in issues:
            name = field_name(issue)
            if name not in unreadable:
                self._problem(line, name, issue.message)

    def csv_field(self, issue: FormatIssue) -> str:
        """The IndustryBench column a format issue is about."""
        if not issue.language:
            return issue.field
        suffix = "" if issue.language == self.source_language else f"_{issue.language}"
        if issue.field == "answer":
            return f"answer{suffix}"
        if issue.field == "options":
            if issue.index is None:
                return f"option_a{suffix}…option_g{suffix}"
            return f"option_{formats.LETTERS[issue.index].lower()}{suffix}"
        if issue.index is None:
            return f"key_point_1{suffix}…key_point_{formats.MAX_KEY_POINTS}{suffix}"
        return f"key_point_{issue.index + 1}{suffix}"

    def industrybench_row(self, line: int, row: dict, columns: tuple[str, ...]):
        """Validate one IndustryBench row (a dict of column -> value)."""
        record = ItemRecord(
            line=line, external_id=self.external_id(line, "id", row["id"])
        )
        source = self.benchmark.source_language
        language_columns, label_columns, lists = self._columns_of(columns)

        def cells(language: str, kind: str) -> list[str] | None:
            if lists is None:
                return None
            return self._list_cells(line, row, lists[language][kind])

        renderings = {
            source: self.rendering(
                line,
                source,
                row["question"],
                row["answer"],
                question_field="question",
                answer_field="answer",
                options=cells(source, "options"),
                key_points=cells(source, "key_points"),
                required=True,
            )
        }
        for name, language in language_columns:
            renderings[language] = self.rendering(
                line,
                language,
                row[name],
                row.get(f"answer_{language}"),
                question_field=name,
                answer_field=f"answer_{language}",
                options=cells(language, "options"),
                key_points=cells(language, "key_points"),
                required=False,
            )
        record.renderings = {k: v for k, v in renderings.items() if v is not None}
        unreadable = set()
        if lists is not None:
            unreadable = self.format_fields(line, record, row)
        self.check_format(line, record, unreadable, self.csv_field)
        record.difficulty = self.difficulty(line, "difficulty", row["difficulty"])
        record.source_format = self.text(
            line, "_format", row["_format"], max_length=100
        )
        record.knowledge_text = self.text(line, "knowledge_text", row["knowledge_text"])
        record.domain = self.text(line, "domain", row["domain"], max_length=200)
        if "source_kind" in row:
            record.source_kind = self.choice(
                line,
                "source_kind",
                row["source_kind"],
                SOURCE_KINDS,
                Item.SourceKind.OTHER,
            )
        else:
            record.source_kind = source_kind_hint(record.source_format)
        if "source_reference" in row:
            record.source_reference = self.text(
                line, "source_reference", row["source_reference"], max_length=300
            ).strip()
        else:
            record.source_reference = reference_hint(record.knowledge_text)
        if "status" in row:
            record.status = self.choice(
                line, "status", row["status"], STATUSES, Item.Status.ACTIVE
            )
        for column, dimension_code in label_columns:
            label = self.label(line, column, dimension_code, row.get(column))
            if label is not None:
                record.labels.append(label)
        return record

    # The generic JSONL ----------------------------------------------------------------

    def generic_row(self, line: int, value: dict) -> ItemRecord:
        for key in value:
            if key not in GENERIC_KEYS:
                self._problem(line, key, "unknown field")
        if "id" not in value:
            self._problem(line, "id", "missing field")
        record = ItemRecord(
            line=line, external_id=self.external_id(line, "id", value.get("id"))
        )
        record.source_kind = self.choice(
            line,
            "source_kind",
            value.get("source_kind"),
            SOURCE_KINDS,
            Item.SourceKind.OTHER,
        )
        record.source_reference = self.text(
            line, "source_reference", value.get("source_reference"), max_length=300
        ).strip()
        record.knowledge_text = self.text(
            line, "knowledge_text", value.get("knowledge_text")
        )
        record.domain = self.text(line, "domain", value.get("domain"), max_length=200)
        record.difficulty = self.difficulty(line, "difficulty", value.get("difficulty"))
        record.status = self.choice(
            line, "status", value.get("status"), STATUSES, Item.Status.ACTIVE
        )
        record.source_format = self.text(
            line, "format", value.get("format"), max_length=100
        )
        labels = value.get("labels") or {}
        if not isinstance(labels, dict):
            self._problem(line, "labels", "expected an object of dimension: label")
            labels = {}
        for dimension_code, label_value in labels.items():
            label = self.label(
                line, f"labels.{dimension_code}", dimension_code, label_value
            )
            if label is not None:
                record.labels.append(label)
        renderings = value.get("renderings")
        if not isinstance(renderings, dict):
            self._problem(line, "renderings", "expected an object keyed by language")
            renderings = {}
        source = self.benchmark.source_language
        if renderings and source not in renderings:
            self._problem(
                line, f"renderings.{source}", "missing source-language rendering"
            )
        has_formats = any(key in value for key in FORMAT_FIELDS) or any(
            isinstance(rendering, dict)
            and ("options" in rendering or "key_points" in rendering)
            for rendering in renderings.values()
        )
        unreadable = set()
        if has_formats:
            unreadable = self.format_fields(line, record, value)
        for language, rendering in renderings.items():
            prefix = f"renderings.{language}"
            if not isinstance(rendering, dict):
                self._problem(line, prefix, "expected an object with question, answer")
                continue
            for key in rendering:
                if key not in RENDERING_KEYS:
                    self._problem(line, f"{prefix}.{key}", "unknown field")
            lists = {}
            for kind in ("options", "key_points"):
                name = f"{prefix}.{kind}"
                lists[kind] = (
                    self.text_list(line, name, rendering.get(kind), unreadable)
                    if has_formats
                    else None
                )
            parsed = self.rendering(
                line,
                language,
                rendering.get("question"),
                rendering.get("answer"),
                question_field=f"{prefix}.question",
                answer_field=f"{prefix}.answer",
                origin=rendering.get("origin"),
                review_status=rendering.get("review_status"),
                required=True,
                **lists,
            )
            if parsed is not None:
                record.renderings[language] = parsed
        self.check_format(line, record, unreadable, generic_field)
        return record

    def text_list(
        self, line: int, field_name: str, value, unreadable: set[str]
    ) -> list[str]:
        """A JSON list of texts (absent: empty). The list, or an element, that is
        not is reported and its field added to `unreadable`."""
        if value is None:
            return []
        if not isinstance(value, list):
            self._problem(line, field_name, "expected a list of texts")
            unreadable.add(field_name)
            return []
        texts = []
        for index, element in enumerate(value):
            name = f"{field_name}[{index}]"
            before = self.problems.total
            texts.append(self.text(line, name, element))
            if self.problems.total > before:
                unreadable.add(name)
        return texts


def list_column(name: str) -> tuple[str, int, str] | None:
    """option_b_en → ("options", 1, "en"), key_point_2 → ("key_points", 1, "");
    None for any other name, a malformed option or key-point column included."""
    if name.startswith(OPTION_PREFIX):
        kind, keys, rest = "options", OPTION_KEYS, name[len(OPTION_PREFIX) :]
    elif name.startswith(KEY_POINT_PREFIX):
        kind, keys, rest = "key_points", KEY_POINT_KEYS, name[len(KEY_POINT_PREFIX) :]
    else:
        return None
    key, underscore, language = rest.partition("_")
    if len(key) != 1 or key not in keys or (underscore and not language):
        return None
    return kind, keys.index(key), language


def generic_field(issue: FormatIssue) -> str:
    """The generic JSONL field a format issue is about."""
    if not issue.language:
        return issue.field
    name = f"renderings.{issue.language}.{issue.field}"
    return name if issue.index is None else f"{name}[{issue.index}]"


def source_kind_hint(source_format: str) -> str:
    """The public dataset's `_format` says whether an item came from a standard."""
    folded = source_format.casefold()
    if "product" in folded:
        return Item.SourceKind.PRODUCT
    if "standard" in folded or "gb" in folded:
        return Item.SourceKind.STANDARD
    return Item.SourceKind.OTHER


def reference_hint(knowledge_text: str) -> str:
    match = GBT_REFERENCE.search(knowledge_text)
    return match.group(0) if match else ""


def _records(
    source: Iterable[bytes], requested: str, validator: _Validator, summary
) -> Iterator[ItemRecord]:
    problems = validator.problems
    lines = _decoded_lines(source, problems)
    leading = []
    for line in lines:
        leading.append(line)
        if line.strip():
            break
    if not leading or not leading[-1].strip():
        problems.add(1, "file", "the file is empty")
        return
    layout, is_json = _detect_layout(leading[-1], requested)
    summary.layout = (
        layout
        if layout == GENERIC_JSONL
        else f"{layout} {'JSONL' if is_json else 'CSV'}"
    )
    all_lines = itertools.chain(leading, lines)
    if not is_json:
        header, rows = _csv_rows(_LineCounter(all_lines), problems)
        before = problems.total
        summary.ignored_fields = validator.industrybench_columns(header)
        if problems.total > before:
            return
        columns = tuple(header)
        for line, cells in rows:
            if len(cells) != len(header):
                problems.add(
                    line,
                    "row",
                    f"{len(cells)} fields where the header has {len(header)}",
                )
                continue
            yield validator.industrybench_row(
                line, dict(zip(header, cells, strict=True)), columns
            )
        return
    for line, value in json_objects(all_lines, problems):
        if layout == GENERIC_JSONL:
            yield validator.generic_row(line, value)
            continue
        columns = list(value)
        before = problems.total
        ignored = validator.industrybench_columns(
            columns, line=line, missing="missing field"
        )
        if problems.total > before:
            continue
        summary.ignored_fields = sorted(set(summary.ignored_fields) | set(ignored))
        yield validator.industrybench_row(line, value, tuple(columns))


# --------------------------------------------------------------------------- writing


def _columns(model, attnames: list[str]) -> list[str]:
    by_attname = {f.attname: f.column for f in model._meta.concrete_fields}
    return [by_attname[name] for name in attnames]


ITEM_ATTNAMES = [
    "benchmark_id",
    "external_id",
    "source_kind",
    "source_reference",
    "knowledge_text",
    "domain",
    "difficulty",
    "difficulty_provenance",
    "status",
    "source_format",
    "format",
    "correct_options",
    "multiple_answers",
    "correct_answer",
    "created_at",
    "updated_at",
]
RENDERING_ATTNAMES = [
    "item_id",
    "language",
    "version",
    "is_current",
    "question",
    "answer",
    "options",
    "key_points",
    "origin",
    "review_status",
    "created_by_id",
    "created_at",
    "note",
]
LABEL_ATTNAMES = [
    "item_id",
    "dimension_id",
    "label_id",
    "provenance",
    "decided_by_id",
    "decided_at",
    "note",
]
EMPTY_JSON_LIST = "[]"
EVENT_ATTNAMES = [
    "item_id",
    "kind",
    "summary",
    "before",
    "after",
    "user_id",
    "created_at",
]


class _Writer:
    def __init__(self, benchmark, summary: ImportSummary, *, user, filename: str):
        self.benchmark = benchmark
        self.summary = summary
        self.user_id = user.pk if user is not None else None
        self.user = user
        self.note = f"Imported from {filename}" if filename else "Imported"
        self.new: list[ItemRecord] = []
        self.changed: list[ItemRecord] = []
        self.existing: set[str] = set()
        self.use_copy = connection.vendor == "postgresql"

    def add(self, record: ItemRecord):
        if record.external_id in self.existing:
            self.changed.append(record)
        else:
            self.new.append(record)
        if len(self.new) + len(self.changed) >= BATCH_SIZE:
            self.flush()

    def flush(self):
        if self.new:
            self._insert(self.new)
            self.summary.created += len(self.new)
            self.new = []
        if self.changed:
            self._update(self.changed)
            self.changed = []

    # New items --------------------------------------------------------------------

    def _insert(self, records: list[ItemRecord]):
        # Rows are tuples in *_ATTNAMES order: COPY takes them as they are, and the
        # bulk_create fallback zips them into model kwargs.
        now = timezone.now()
        if self.use_copy:
            # COPY's text format parses an ISO timestamp; formatting it once saves
            # adapting the same datetime for every row.
            now = now.isoformat()
        benchmark_id, user_id, note = self.benchmark.pk, self.user_id, self.note
        as_json = self._json_value
        item_rows = [
            (
                benchmark_id,
                record.external_id,
                record.source_kind,
                record.source_reference,
                record.knowledge_text,
                record.domain,
                record.difficulty,
                "imported" if record.difficulty else "",
                record.status,
                record.source_format,
                record.item_format or formats.OPEN,
                as_json(record.correct_options),
                record.multiple_answers,
                record.correct_answer,
                now,
                now,
            )
            for record in records
        ]
        if self.use_copy:
            ids = self._allocate_item_ids(len(records))
            self._copy(
                Item,
                ["id", *ITEM_ATTNAMES],
                [(i, *row) for i, row in zip(ids, item_rows, strict=True)],
            )
        else:
            items = Item.objects.bulk_create(
                Item(**dict(zip(ITEM_ATTNAMES, row, strict=True))) for row in item_rows
            )
            ids = [item.pk for item in items]
        imported = FinalLabel.Provenance.IMPORTED
        renderings, labels, events = [], [], []
        for record, item_id in zip(records, ids, strict=True):
            for language, rendering in record.renderings.items():
                renderings.append(
                    (
                        item_id,
                        language,
                        1,
                        True,
                        rendering.question,
                        rendering.answer,
                        as_json(rendering.options),
                        as_json(rendering.key_points),
                        rendering.origin,
                        rendering.review_status,
                        user_id,
                        now,
                        "",
                    )
                )
            for label in record.labels:
                labels.append(
                    (item_id, label.dimension_id, label.pk, imported, user_id, now, "")
                )
            events.append((item_id, "import", note, None, None, user_id, now))
        self._write(Rendering, RENDERING_ATTNAMES, renderings)
        self._write(FinalLabel, LABEL_ATTNAMES, labels)
        self._write(ItemEvent, EVENT_ATTNAMES, events)

    def _json_value(self, value: list[str] | None):
        """A JSON column's value as COPY takes it (JSON text) or as bulk_create
        does (the list itself); a file without options or key points gives []."""
        if not value:
            return EMPTY_JSON_LIST if self.use_copy else []
        return json.dumps(value, ensure_ascii=False) if self.use_copy else value

    def _allocate_item_ids(self, count: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) "
                "FROM generate_series(1, %s)",
                [Item._meta.db_table, count],
            )
            return [row[0] for row in cursor.fetchall()]

    def _write(self, model, attnames: list[str], rows: list[tuple]):
        if not rows:
            return
        if self.use_copy:
            self._copy(model, attnames, rows)
        else:
            model.objects.bulk_create(
                (model(**dict(zip(attnames, row, strict=True))) for row in rows),
                batch_size=500,
            )

    def _copy(self, model, attnames: list[str], rows: list[tuple]):
        quote = connection.ops.quote_name
        columns = ", ".join(quote(column) for column in _columns(model, attnames))
        statement = f"COPY {quote(model._meta.db_table)} ({columns}) FROM STDIN"
        with connection.cursor() as cursor:
            with cursor.cursor.copy(statement) as copy:
                for row in rows:
                    copy.write_row(row)

    # Existing items (--update) --------------------------------------------------------

    def _update(self, records: list[ItemRecord]):
        items = {
            item.external_id: item
            for item in Item.objects.filter(
                benchmark=self.benchmark,
                external_id__in=[record.external_id for record in records],
            )
        }
        languages = {language for record in records for language in record.renderings}
        current = {
            (rendering.item_id, rendering.language): rendering
            for rendering in Rendering.objects.filter(
                item__in=items.values(), is_current=True, language__in=languages
            ).only("item_id", "language", "question", "answer", "options", "key_points")
        }
        # (label, provenance) per item and dimension: plain rows, not model
        # instances (an update of 10,000 items read 20,000 of them).
        rows = FinalLabel.objects.filter(item__in=items.values()).values_list(
            "item_id", "dimension_id", "label_id", "provenance"
        )
        finals = {(item, dim): (label, how) for item, dim, label, how in rows}
        human = {FinalLabel.Provenance.ADJUDICATED, FinalLabel.Provenance.MANUAL}
        new_texts = []
        for record in records:
            item = items[record.external_id]
            changed = self._update_fields(item, record)
            for language, rendering in record.renderings.items():
                previous = current.get((item.pk, language))
                if previous and _same_text(previous, rendering):
                    continue
                new_texts.append(
                    RenderingChange(
                        item,
                        language,
                        question=rendering.question,
                        answer=rendering.answer,
                        options=rendering.options,
                        key_points=rendering.key_points,
                        origin=rendering.origin,
                        review_status=rendering.review_status,
                    )
                )
                self.summary.renderings_added += 1
                changed = True
            for label in record.labels:
                label_id, provenance = finals.get(
                    (item.pk, label.dimension_id), (0, "")
                )
                if label_id == label.pk:
                    continue
                if provenance in human:
                    self.summary.human_labels_kept.append(
                        f"{item.external_id} ({label.dimension.code})"
                    )
                    continue
                do_set_final_label(
                    item,
                    label,
                    provenance=FinalLabel.Provenance.IMPORTED,
                    user=self.user,
                    note=self.note,
                )
                self.summary.labels_set += 1
                changed = True
            if changed:
                self.summary.updated += 1
            else:
                self.summary.unchanged += 1
        do_add_rendering_versions(new_texts, user=self.user, note=self.note)

    def _update_fields(self, item: Item, record: ItemRecord) -> bool:
        wanted = {
            "source_kind": record.source_kind,
            "source_reference": record.source_reference,
            "knowledge_text": record.knowledge_text,
            "domain": record.domain,
            "difficulty": record.difficulty,
            "status": record.status,
            "source_format": record.source_format,
        }
        if record.item_format is not None:
            wanted |= {
                "format": record.item_format,
                "correct_options": record.correct_options,
                "multiple_answers": record.multiple_answers,
                "correct_answer": record.correct_answer,
            }
        changed = {
            name: value
            for name, value in wanted.items()
            if getattr(item, name) != value
        }
        if not changed:
            return False
        before = {name: getattr(item, name) for name in changed}
        for name, value in changed.items():
            setattr(item, name, value)
        update_fields = [*changed, "updated_at"]
        if "difficulty" in changed:
            item.difficulty_provenance = "imported" if record.difficulty else ""
            update_fields.append("difficulty_provenance")
        item.save(update_fields=update_fields)
        ItemEvent.objects.create(
            item=item,
            kind="import",
            summary=f"{self.note}: {', '.join(changed)} changed",
            before=before,
            after=changed,
            user=self.user,
        )
        return True


def _same_text(current: Rendering, record: RenderingRecord) -> bool:
    """Whether the file's rendering is the current one; options and key points a
    file does not carry (None) are not compared."""
    return (
        current.question == record.question
        and current.answer == record.answer
        and record.options in (None, current.options)
        and record.key_points in (None, current.key_points)
    )


# ---------------------------------------------------------------------------- action

_DONE = object()


def _parsed_in_background(records: Iterator[ItemRecord]) -> Iterator[list]:
    """Yield batches of records that a helper thread reads and validates.

    Reading and validating is pure Python with no database access; while the main
    thread waits for PostgreSQL to store one batch (psycopg releases the GIL while it
    waits), the helper parses the next, so the two overlap instead of adding up. The
    queue holds at most two batches, so memory stays flat.
    """
    handoff: queue.Queue = queue.Queue(maxsize=2)
    stopping = threading.Event()

    def produce():
        try:
            batch = []
            for record in records:
                if stopping.is_set():
                    return
                batch.append(record)
                if len(batch) >= BATCH_SIZE:
                    handoff.put(batch)
                    batch = []
            handoff.put(batch)
            handoff.put(_DONE)
        except BaseException as error:  # re-raised in the importing thread
            handoff.put(error)

    helper = threading.Thread(target=produce, name="import-parser", daemon=True)
    helper.start()
    try:
        while (batch := handoff.get()) is not _DONE:
            if isinstance(batch, BaseException):
                raise batch
            yield batch
    finally:
        stopping.set()
        while helper.is_alive():
            try:
                handoff.get(timeout=0.05)
            except queue.Empty:
                pass
        helper.join()


def do_import_items(
    source: Iterable[bytes],
    *,
    slug: str,
    name: str = "",
    update: bool = False,
    layout: str = "auto",
    user=None,
    filename: str = "",
    is_demo: bool = False,
) -> ImportSummary:
    """Import every item of `source` (a binary file) into the benchmark `slug`.

    The benchmark is created with the default taxonomy when the slug is new. Raises
    ImportRejected, with nothing written, when any row has a problem.

    With `update`, items whose id exists are updated: changed item fields are saved
    with an `import` history event; a changed question/answer adds a new rendering
    version (do_add_rendering_version); a changed label becomes the final label with
    provenance `imported` unless a person decided it (adjudicated or manual), in
    which case the human decision is kept and reported. Languages and labels absent
    from the file are left alone.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"Unknown layout {layout!r}; choose one of {LAYOUTS}.")
    with transaction.atomic():
        benchmark = Benchmark.objects.filter(slug=slug).first()
        created = benchmark is None
        if created:
            benchmark = do_create_benchmark(
                name=name or slug, slug=slug, is_demo=is_demo
            )
        summary = ImportSummary(
            benchmark=benchmark, layout=layout, benchmark_created=created
        )
        problems = Problems()
        existing = set(
            Item.objects.filter(benchmark=benchmark).values_list(
                "external_id", flat=True
            )
        )
        validator = _Validator(
            benchmark, Taxonomy(benchmark), problems, existing, update
        )
        writer = _Writer(benchmark, summary, user=user, filename=filename)
        writer.existing = existing
        records = _records(source, layout, validator, summary)
        seen = 0
        for batch in _parsed_in_background(records):
            seen += len(batch)
            if not problems:
                for record in batch:
                    writer.add(record)
        if not seen and not problems:
            problems.add(0, "", "the file holds no items (a header alone, or nothing).")
        if problems:
            raise problems.rejection()
        writer.flush()
    return summary
