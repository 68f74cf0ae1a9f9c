"""Validating an item file's rows: each field read into an ItemRecord, and a
problem, in words a person reads in their own language, for every bad one."""

from collections import Counter
from collections.abc import Callable

from django.utils.translation import gettext_noop

from benchmark import formats
from benchmark.formats import FormatIssue, RenderingFormat, format_issues
from benchmark.importing.records import (
    APPROVED,
    BASE_COLUMNS,
    DIFFICULTIES,
    EXTRA_LABEL_PREFIX,
    FORMAT_FIELDS,
    GBT_REFERENCE,
    GENERIC_KEYS,
    IMPORTED_ORIGIN,
    ITEM_FORMATS,
    KEY_POINT_KEYS,
    KEY_POINT_PREFIX,
    LABEL_COLUMNS,
    MAX_COLUMNS,
    OPTION_KEYS,
    OPTION_PREFIX,
    OPTIONAL_COLUMNS,
    ORIGINS,
    RENDERING_KEYS,
    REVIEW_STATUSES,
    SOURCE_KINDS,
    SOURCE_ORIGIN,
    STATUSES,
    ItemRecord,
    RenderingRecord,
    Taxonomy,
)
from benchmark.models import Benchmark, Item, Label
from benchmark.notes import Note, noop
from benchmark.validation import (
    Problems,
)


class Validator:
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

    def _problem(self, line, field_name, message: str | tuple[str, str], **values):
        """`message` marked with gettext_noop (or noop.ngettext) where it is
        written; `values` fill its %(name)s holes (benchmark.notes)."""
        if not isinstance(message, Note):  # a Note comes made (formats, Taxonomy)
            message = Note(message, **values)
        self.problems.add(line, field_name, message)

    def text(self, line: int, field_name: str, value, *, max_length=None) -> str:
        if type(value) is str and (max_length is None or len(value) <= max_length):
            return value  # the common case, kept cheap: it runs ~20 times per row
        if value is None:
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self._problem(line, field_name, gettext_noop("expected text"))
            return ""
        value = str(value)
        if max_length and len(value) > max_length:
            self._problem(
                line,
                field_name,
                noop.ngettext(
                    "longer than %(count)s character",
                    "longer than %(count)s characters",
                ),
                count=max_length,
            )
        return value

    def external_id(self, line: int, field_name: str, value) -> str:
        external_id = self.text(line, field_name, value, max_length=128).strip()
        if not external_id:
            self._problem(line, field_name, gettext_noop("empty id"))
            return ""
        first = self.seen.get(external_id)
        if first is not None:
            self._problem(
                line,
                field_name,
                gettext_noop("duplicate id %(id)s (first on line %(first)s)"),
                id=repr(external_id),
                first=first,
            )
        else:
            self.seen[external_id] = line
        if external_id in self.existing and not self.update:
            self._problem(
                line,
                field_name,
                gettext_noop(
                    "item %(id)s already exists in %(benchmark)s; to change it, "
                    "import with “Update items whose id already exists” ticked "
                    "(--update on the command line)"
                ),
                id=repr(external_id),
                benchmark=self.benchmark.slug,
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
            self._problem(
                line,
                field_name,
                gettext_noop("%(value)s is not one of %(choices)s"),
                value=repr(raw),
                choices=choices,
            )
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
                gettext_noop("benchmark %(benchmark)s has no label dimension %(code)s"),
                benchmark=self.benchmark.slug,
                code=repr(dimension_code),
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
                gettext_noop(
                    "unknown language %(language)s; benchmark %(benchmark)s has "
                    "%(languages)s"
                ),
                language=repr(language),
                benchmark=self.benchmark.slug,
                languages=", ".join(self.languages),
            )
            return None
        if not has_question:
            self._problem(line, question_field, gettext_noop("empty question"))
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
        self,
        columns: list[str],
        *,
        line: int = 1,
        missing: str = gettext_noop("missing column"),
    ) -> list[str]:
        """Check a CSV header / JSON key set; return the columns that are ignored.
        Linear in the number of columns, and at most MAX_COLUMNS are read."""
        if len(columns) > MAX_COLUMNS:
            self._problem(
                line,
                "",
                gettext_noop("%(columns)s columns; an item file has at most %(most)s"),
                columns=f"{len(columns):,}",
                most=f"{MAX_COLUMNS:,}",
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
            self._problem(line, name, gettext_noop("column appears more than once"))
        return [name for name in columns if not self._known_column(name)]

    def _list_column_name(self, line: int, name: str, present: set[str]):
        parsed = list_column(name)
        if parsed is None:
            self._problem(
                line,
                name,
                gettext_noop(
                    "not an option or key-point column: options are option_a to "
                    "option_g, key points key_point_1 to key_point_5, each with "
                    "_<language> after it for a translation"
                ),
            )
        elif parsed[2] == self.source_language:
            self._problem(
                line,
                name,
                gettext_noop(
                    "the source language (%(language)s) takes no suffix: option_a, "
                    "key_point_1"
                ),
                language=self.source_language,
            )
        elif parsed[2] and f"question_{parsed[2]}" not in present:
            self._problem(
                line,
                name,
                gettext_noop("no %(column)s column for this translation"),
                column=f"question_{parsed[2]}",
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
                self._problem(line, key, gettext_noop("unknown field"))
        if "id" not in value:
            self._problem(line, "id", gettext_noop("missing field"))
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
            self._problem(
                line, "labels", gettext_noop("expected an object of dimension: label")
            )
            labels = {}
        for dimension_code, label_value in labels.items():
            label = self.label(
                line, f"labels.{dimension_code}", dimension_code, label_value
            )
            if label is not None:
                record.labels.append(label)
        renderings = value.get("renderings")
        if not isinstance(renderings, dict):
            self._problem(
                line, "renderings", gettext_noop("expected an object keyed by language")
            )
            renderings = {}
        source = self.benchmark.source_language
        if renderings and source not in renderings:
            self._problem(
                line,
                f"renderings.{source}",
                gettext_noop("missing source-language rendering"),
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
                self._problem(
                    line,
                    prefix,
                    gettext_noop("expected an object with question, answer"),
                )
                continue
            for key in rendering:
                if key not in RENDERING_KEYS:
                    self._problem(
                        line, f"{prefix}.{key}", gettext_noop("unknown field")
                    )
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
            self._problem(line, field_name, gettext_noop("expected a list of texts"))
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
