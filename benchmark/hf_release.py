"""The release export as a Hugging Face dataset repository, and its import.

The repository layout is what the Hub's loader reads without a script:
`data/train-00000-of-00001.parquet`, one row per item, and `README.md`, the dataset
card, whose YAML header points the loader at `data/*.parquet`.

The Parquet schema is explicit and flat: one column per language and part
(`question_en`, `options_en`, …) rather than a struct keyed by language, because the
Hub's viewer, pandas and `datasets` filter flat columns directly, and a language's
columns are null exactly when the release has no approved rendering in it. Labels
are codes (`label_capability`), which name one label whatever its display name; the
card lists code → name. The columns and their meaning: docs/IMPORT_FORMATS.md.

The import turns each Parquet row into the generic JSONL line it stands for and
hands the lines to `do_import_items`, so every rule and problem of the item import
applies; problems name the Parquet column and row (1-based) instead of the JSONL
field.
"""

import io
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.conf import settings
from django.db import transaction

from benchmark.actions import do_create_benchmark
from benchmark.english import english
from benchmark.exporting import ExportReport, exported_chunks
from benchmark.importing import do_import_items
from benchmark.models import Benchmark, FinalLabel, Item, Rendering
from benchmark.validation import ImportRejected, Problem, Problems

DATA_PATH = "data/train-00000-of-00001.parquet"
CARD_PATH = "README.md"
LICENSE_PATH = "LICENSE.md"
# The benchmark's own fields, in the Parquet file's key-value metadata: the import
# restores them from the file alone (`datasets` keeps its own key beside it).
METADATA_KEY = b"assay.benchmark"
BENCHMARK_FIELDS = ("name", "version", "description", "source_language")
# Hub license ids a release may carry. The default is "other": a license is the data
# owner's decision, and a card that names one the team never chose would mislead
# whoever downloads the dataset.
LICENSES = (
    "other",
    "cc-by-4.0",
    "cc-by-sa-4.0",
    "cc-by-nc-4.0",
    "cc-by-nc-sa-4.0",
    "cc0-1.0",
    "apache-2.0",
    "mit",
)
DEFAULT_LICENSE = "other"

TEXT = pa.string()
TEXTS = pa.list_(pa.string())
ITEM_COLUMNS = [
    ("id", TEXT, False),
    ("item_format", TEXT, False),
    ("correct_options", TEXTS, False),
    ("multiple_answers", pa.bool_(), True),
    ("correct_answer", pa.bool_(), True),
    ("difficulty", TEXT, True),
    ("source_kind", TEXT, False),
    ("source_reference", TEXT, False),
    ("knowledge_text", TEXT, False),
    ("domain", TEXT, False),
    ("source_format", TEXT, False),
]
LANGUAGE_COLUMNS = [
    ("question", TEXT),
    ("answer", TEXT),
    ("options", TEXTS),
    ("key_points", TEXTS),
]
LABEL_PREFIX = "label_"
LANGUAGE_COLUMN = re.compile(r"^(question|answer|options|key_points)_([a-z]{2,8})$")


def release_schema(languages: list[str], dimensions: list[str]) -> pa.Schema:
    fields = [pa.field(name, kind, nullable) for name, kind, nullable in ITEM_COLUMNS]
    for language in languages:
        fields += [
            pa.field(f"{part}_{language}", kind) for part, kind in LANGUAGE_COLUMNS
        ]
    fields += [pa.field(f"{LABEL_PREFIX}{code}", TEXT) for code in dimensions]
    return pa.schema(fields)


@dataclass
class ReleaseStats:
    """What the dataset card reports, gathered while the rows are written."""

    items: int = 0
    formats: Counter = field(default_factory=Counter)
    difficulties: Counter = field(default_factory=Counter)
    source_kinds: Counter = field(default_factory=Counter)
    languages: Counter = field(default_factory=Counter)
    origins: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    labels: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    provenance: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))

    def add(self, row: dict):
        self.items += 1
        self.formats[row["format"]] += 1
        self.difficulties[row["difficulty"] or "unrated"] += 1
        self.source_kinds[row["source_kind"]] += 1
        for language, rendering in row["renderings"].items():
            self.languages[language] += 1
            self.origins[language][rendering["origin"]] += 1
        for dimension, (code, _name, provenance) in row["labels"].items():
            self.labels[dimension][code] += 1
            self.provenance[dimension][provenance] += 1


def benchmark_metadata(benchmark: Benchmark) -> dict:
    return {
        **{name: getattr(benchmark, name) for name in BENCHMARK_FIELDS},
        "target_languages": list(benchmark.target_languages),
    }


def _release_row(row: dict, languages: list[str], dimensions: list[str]) -> dict:
    multiple_choice = row["format"] == Item.Format.MULTIPLE_CHOICE
    values = {
        "id": row["external_id"],
        "item_format": row["format"],
        "correct_options": row["correct_options"],
        "multiple_answers": row["multiple_answers"] if multiple_choice else None,
        "correct_answer": row["correct_answer"],
        "difficulty": row["difficulty"] or None,
        "source_kind": row["source_kind"],
        "source_reference": row["source_reference"],
        "knowledge_text": row["knowledge_text"],
        "domain": row["domain"],
        "source_format": row["source_format"],
    }
    for language in languages:
        rendering = row["renderings"].get(language)
        for part, _kind in LANGUAGE_COLUMNS:
            default = [] if part in ("options", "key_points") else None
            values[f"{part}_{language}"] = (
                rendering.get(part, default) if rendering else None
            )
    for code in dimensions:
        label = row["labels"].get(code)
        values[f"{LABEL_PREFIX}{code}"] = label[0] if label else None
    return values


def release_table(
    benchmark: Benchmark, report: ExportReport | None = None
) -> tuple[pa.Table, ReleaseStats]:
    """The release rows (approved renderings, final labels) as one Arrow table."""
    report = report if report is not None else ExportReport()
    languages = benchmark.languages
    dimensions = list(
        benchmark.dimensions.order_by("position", "code").values_list("code", flat=True)
    )
    schema = release_schema(languages, dimensions).with_metadata(
        {METADATA_KEY: json.dumps(benchmark_metadata(benchmark), ensure_ascii=False)}
    )
    stats = ReleaseStats()
    batches = []
    for rows in exported_chunks(benchmark, True, True, report):
        for row in rows:
            stats.add(row)
        batches.append(
            pa.RecordBatch.from_pylist(
                [_release_row(row, languages, dimensions) for row in rows],
                schema=schema,
            )
        )
    return pa.Table.from_batches(batches, schema=schema), stats


def parquet_bytes(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd")
    return out.getvalue()


# ------------------------------------------------------------------- the dataset card


def _size_category(count: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if count < limit:
            return name
    return "n>1M"


def _table(header: tuple[str, ...], rows) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


YAML_TYPES = {pa.string(): "string", pa.bool_(): "bool"}


def _dataset_info(schema: pa.Schema, rows: int) -> list[str]:
    """The card's `dataset_info` block: each column's feature as `datasets` writes
    it (`dtype: string`, `list: string`), and the one split's size."""
    lines = ["dataset_info:", "  features:"]
    for column in schema:
        lines.append(f"  - name: {column.name}")
        if pa.types.is_list(column.type):
            lines.append(f"    list: {YAML_TYPES[column.type.value_type]}")
        else:
            lines.append(f"    dtype: {YAML_TYPES[column.type]}")
    lines += [
        "  splits:",
        "  - name: train",
        f"    num_examples: {rows}",
        "  config_name: default",
    ]
    return lines


def dataset_card(
    benchmark: Benchmark,
    stats: ReleaseStats,
    report: ExportReport,
    license_id: str,
    schema: pa.Schema,
) -> str:
    """README.md of the dataset repository: the Hub's YAML header, then what the
    release holds and how its labels and translations were decided."""
    languages = benchmark.languages
    task_categories = ["question-answering"]
    if (
        stats.formats[Item.Format.MULTIPLE_CHOICE]
        or stats.formats[Item.Format.TRUE_FALSE]
    ):
        task_categories.append("multiple-choice")
    # The header is JSON-quoted YAML: a benchmark name with a colon or a quote
    # stays one string.
    license_lines = [f"license: {license_id}"]
    if license_id == DEFAULT_LICENSE:
        # The Hub wants a name and a link for `other`; the link is the repository's
        # LICENSE.md, which says that no license was stated.
        license_lines += ["license_name: unstated", f"license_link: {LICENSE_PATH}"]
    header = [
        "---",
        *license_lines,
        "language:",
        *(f"- {language}" for language in languages),
        "task_categories:",
        *(f"- {category}" for category in task_categories),
        "size_categories:",
        f"- {_size_category(stats.items)}",
        f"pretty_name: {json.dumps(benchmark.name, ensure_ascii=False)}",
        *_dataset_info(schema, stats.items),
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        "    path: data/*.parquet",
        "---",
    ]
    body = [
        "",
        f"# {benchmark.name}",
        "",
        f"Version {benchmark.version}. Exported from Assay as a release: active items "
        "whose source-language text is approved, only approved renderings, and the "
        "final labels.",
    ]
    if benchmark.description:
        body += ["", benchmark.description]
    body += ["", "## Counts", "", f"{stats.items} items.", ""]
    body += _table(
        ("item format", "items"),
        ((name, stats.formats[name]) for name in Item.Format.values),
    )
    body += [""]
    body += _table(
        ("difficulty", "items"),
        (
            (name, stats.difficulties[name])
            for name in [*Item.Difficulty.values, "unrated"]
            if stats.difficulties[name]
        ),
    )
    body += [""]
    body += _table(
        ("source kind", "items"),
        (
            (english(Item.SourceKind(name).label), count)
            for name, count in sorted(stats.source_kinds.items())
        ),
    )
    body += ["", "## Label distributions", ""]
    for dimension in benchmark.dimensions.order_by("position", "code"):
        counts = stats.labels.get(dimension.code, Counter())
        unlabelled = stats.items - sum(counts.values())
        body += [f"### {dimension.name} (`label_{dimension.code}`)", ""]
        rows = [
            (f"`{label.code}`", label.name, counts[label.code])
            for label in dimension.labels.order_by("position", "code")
        ]
        if unlabelled:
            rows.append(("(null)", "unlabelled", unlabelled))
        body += _table(("code", "label", "items"), rows) + [""]
    body += ["## Languages", ""]
    body += [
        f"Source language: {benchmark.source_language}. Every language's text is "
        "item-aligned: `question_<language>` of a row is the same item as "
        f"`question_{benchmark.source_language}`. A null column means the item has "
        "no approved rendering in that language.",
        "",
    ]
    body += _table(
        ("language", "items", "missing (no approved rendering)"),
        (
            (
                language,
                stats.languages[language],
                stats.items - stats.languages[language],
            )
            for language in languages
        ),
    )
    body += ["", "## Construction and validation", ""]
    body += [
        "How each final label was decided: imported with the source data, by the "
        "consensus of three LLM annotators (all three, or two of three), by an "
        "adjudicator where they disagreed, or set by hand.",
        "",
    ]
    provenances = FinalLabel.Provenance
    body += _table(
        ("dimension", *map(english, provenances.labels)),
        (
            (code, *(counts[value] for value in provenances.values))
            for code, counts in sorted(stats.provenance.items())
        ),
    )
    body += [
        "",
        "Where each released text came from (every one approved): the source, "
        "imported with a translation, a machine translation approved by a reviewer "
        "or by the faithfulness check, or edited by a person.",
        "",
    ]
    origins = Rendering.Origin
    body += _table(
        ("language", *map(english, origins.labels)),
        (
            (language, *(stats.origins[language][value] for value in origins.values))
            for language in languages
        ),
    )
    if report.skipped_unapproved_source:
        body += [
            "",
            f"{len(report.skipped_unapproved_source)} active item(s) are left out: "
            "their source-language text is not approved.",
        ]
    body += ["", "## License", ""]
    body += [
        f"Not stated by the exporter (`other`, see {LICENSE_PATH}): ask the "
        "dataset's owners."
        if license_id == DEFAULT_LICENSE
        else f"`{license_id}`."
    ]
    return "\n".join(header + body) + "\n"


def release_files(
    benchmark: Benchmark, license_id: str = DEFAULT_LICENSE
) -> tuple[dict[str, bytes], ExportReport]:
    """{path in the repository: content} and the release report."""
    if license_id not in LICENSES:
        raise ValueError(f"Unknown license {license_id!r}; choose one of {LICENSES}.")
    report = ExportReport()
    table, stats = release_table(benchmark, report)
    card = dataset_card(benchmark, stats, report, license_id, table.schema)
    files = {DATA_PATH: parquet_bytes(table), CARD_PATH: card.encode()}
    if license_id == DEFAULT_LICENSE:
        files[LICENSE_PATH] = (
            f"# License of {benchmark.name}\n\n"
            "No license was stated when this release was exported from Assay. "
            "Ask the dataset's owners before you use or share it.\n"
        ).encode()
    return files, report


def write_release_folder(files: dict[str, bytes], folder: Path):
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


# -------------------------------------------------------------------------- import


def _expected_type(name: str) -> pa.DataType | None:
    for column, kind, _nullable in ITEM_COLUMNS:
        if name == column:
            return kind
    match = LANGUAGE_COLUMN.match(name)
    if match:
        return dict(LANGUAGE_COLUMNS)[match.group(1)]
    if name.startswith(LABEL_PREFIX) and len(name) > len(LABEL_PREFIX):
        return TEXT
    return None


def _readable(actual: pa.DataType, expected: pa.DataType) -> bool:
    """Arrow types that give the Python values the expected type gives."""
    if pa.types.is_null(actual):
        return True
    if pa.types.is_string(expected):
        return pa.types.is_string(actual) or pa.types.is_large_string(actual)
    if pa.types.is_boolean(expected):
        return pa.types.is_boolean(actual)
    return (pa.types.is_list(actual) or pa.types.is_large_list(actual)) and (
        _readable(actual.value_type, pa.string())
    )


def _check_schema(schema: pa.Schema, source_language: str) -> Problems:
    problems = Problems()
    names = set(schema.names)
    for name in ("id", f"question_{source_language}", f"answer_{source_language}"):
        if name not in names:
            problems.add(0, name, "missing column")
    for column in schema:
        expected = _expected_type(column.name)
        if expected is None:
            problems.add(0, column.name, "unknown column")
        elif not _readable(column.type, expected):
            problems.add(
                0, column.name, f"is {column.type}; expected {expected} (or null)"
            )
    return problems


def _generic_line(row: dict) -> dict:
    """The generic JSONL object a release row stands for."""
    line = {
        "id": row.get("id"),
        "item_format": row.get("item_format"),
        "labels": {},
        "renderings": {},
    }
    for name in ("source_kind", "source_reference", "knowledge_text", "domain"):
        if row.get(name) is not None:
            line[name] = row[name]
    line["difficulty"] = row.get("difficulty") or ""
    if row.get("source_format") is not None:
        line["format"] = row["source_format"]
    for name in ("correct_options", "multiple_answers", "correct_answer"):
        # Empty and null mean "this format has no such key": leaving them out lets
        # an open item through, while a stray key on the wrong format is reported.
        if row.get(name) not in (None, []):
            line[name] = row[name]
    for name, value in row.items():
        if name.startswith(LABEL_PREFIX) and value is not None:
            line["labels"][name[len(LABEL_PREFIX) :]] = value
        match = LANGUAGE_COLUMN.match(name)
        if match and value not in (None, []):
            part, language = match.groups()
            line["renderings"].setdefault(language, {})[part] = value
    return line


GENERIC_FIELD = re.compile(r"^renderings\.([^.]+)\.(\w+)(.*)$")


def _release_field(name: str) -> str:
    """The Parquet column a generic JSONL field comes from."""
    match = GENERIC_FIELD.match(name)
    if match:
        language, part, rest = match.groups()
        return f"{part}_{language}{rest}"
    if name.startswith("labels."):
        return LABEL_PREFIX + name[len("labels.") :]
    if name == "format":
        return "source_format"
    return name


def _check_sizes(metadata: pq.FileMetaData) -> Problems:
    """What the file expands to, from its footer, before a page is decompressed: a
    few KB of Parquet can hold gigabytes. One column chunk may expand to
    IMPORT_MAX_MEMBER_BYTES, the file to IMPORT_MAX_EXPANDED_BYTES."""
    problems = Problems()
    chunk_cap = settings.IMPORT_MAX_MEMBER_BYTES
    total_cap = settings.IMPORT_MAX_EXPANDED_BYTES
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            size = chunk.total_uncompressed_size
            total += size
            if size > chunk_cap:
                problems.add(
                    0,
                    chunk.path_in_schema.split(".")[0],
                    f"expands to {size:,} bytes in row group {group + 1}; a column "
                    f"chunk may expand to at most {chunk_cap:,} "
                    "(IMPORT_MAX_MEMBER_BYTES)",
                )
    if total > total_cap:
        problems.add(
            0,
            "",
            f"the file expands to {total:,} bytes; at most {total_cap:,} "
            "(IMPORT_MAX_EXPANDED_BYTES)",
        )
    return problems


def _check_cells(batch: pa.RecordBatch, first_row: int) -> None:
    """Refuse a text cell (or a list element) over IMPORT_MAX_CELL_CHARS: no item
    text is that long, and a run would send it to a provider on every call."""
    cap = settings.IMPORT_MAX_CELL_CHARS
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        values, parents = column, None
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            values, parents = pc.list_flatten(column), pc.list_parent_indices(column)
        if not (
            pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
        ):
            continue
        lengths = pc.utf8_length(values)
        longest = pc.max(lengths).as_py()
        if longest is None or longest <= cap:
            continue
        where = pc.index(lengths, longest).as_py()
        row = first_row + (where if parents is None else parents[where].as_py())
        raise ImportRejected(
            [
                Problem(
                    row + 1,
                    name,
                    f"a cell of {longest:,} characters; a cell has at most "
                    f"{cap:,} (IMPORT_MAX_CELL_CHARS)",
                )
            ],
            1,
        )


def _jsonl(table_batches: Iterator[pa.RecordBatch]) -> Iterator[bytes]:
    first_row = 0
    for batch in table_batches:
        _check_cells(batch, first_row)
        first_row += batch.num_rows
        for row in batch.to_pylist():
            yield json.dumps(_generic_line(row), ensure_ascii=False).encode() + b"\n"


def _restored_fields(schema: pa.Schema) -> dict:
    """A new benchmark's fields from the file: Assay's metadata when the file
    carries it, else the languages its columns name (source language first)."""
    try:
        saved = json.loads((schema.metadata or {}).get(METADATA_KEY, b"{}"))
    except ValueError:
        saved = {}
    fields = {}
    if isinstance(saved, dict):
        fields = {
            name: saved[name]
            for name in BENCHMARK_FIELDS
            if isinstance(saved.get(name), str) and saved[name]
        }
        targets = saved.get("target_languages")
        if isinstance(targets, list) and all(isinstance(t, str) for t in targets):
            fields["target_languages"] = tuple(targets)
    if "target_languages" not in fields:
        columns = [LANGUAGE_COLUMN.match(name) for name in schema.names]
        languages = list(
            dict.fromkeys(m.group(2) for m in columns if m and m.group(1) == "question")
        )
        source = fields.get("source_language") or (
            "zh" if "zh" in languages or not languages else languages[0]
        )
        fields["source_language"] = source
        fields["target_languages"] = tuple(lang for lang in languages if lang != source)
    return fields


def do_import_release(source, *, slug: str, name: str = "", update=False, user=None):
    """Import a release Parquet file (a path or a binary file) into the benchmark
    `slug`, all or nothing, through the item import. A new benchmark gets the name,
    version, description and languages the file carries."""
    try:
        parquet = pq.ParquetFile(source)
    except (pa.ArrowException, OSError) as error:
        raise ImportRejected(
            [Problem(0, "", f"not a readable Parquet file ({error})")], 1
        ) from None
    benchmark = Benchmark.objects.filter(slug=slug).first()
    restored = _restored_fields(parquet.schema_arrow)
    if benchmark:
        source_language = benchmark.source_language
    else:
        source_language = restored.get("source_language", "zh")
        name = name or restored.pop("name", "")
    restored.pop("name", None)
    problems = _check_schema(parquet.schema_arrow, source_language)
    if not problems:
        problems = _check_sizes(parquet.metadata)
    if problems:
        raise problems.rejection()
    try:
        # The benchmark is created here, with the file's fields, inside the same
        # transaction as the items: a rejected file leaves no benchmark behind.
        with transaction.atomic():
            if benchmark is None:
                do_create_benchmark(name=name or slug, slug=slug, **restored)
            summary = do_import_items(
                _jsonl(parquet.iter_batches(batch_size=2000)),
                slug=slug,
                update=update,
                layout="jsonl",
                user=user,
                filename=getattr(source, "name", str(source)),
            )
            summary.benchmark_created = benchmark is None
            return summary
    except ImportRejected as rejected:
        renamed = [
            Problem(p.line, _release_field(p.field), p.message, p.item_id)
            for p in rejected.problems
        ]
        raise ImportRejected(renamed, rejected.total) from None
