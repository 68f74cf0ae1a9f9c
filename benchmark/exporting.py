"""Streaming export of a benchmark's items, in the layouts benchmark.importing reads.

* `csv`: the public IndustryBench layout (labels by name), plus `source_kind`,
  `source_reference`, `status` and `label_<dimension>` for dimensions beyond
  capability and industry. Rendering origin and review status are not carried.
* `jsonl`: the generic Assay JSONL, lossless for current renderings (with origin and
  review status) and final labels (by code).

Items are written in external-id order, renderings in the benchmark's language order
and labels in dimension order, so exporting what was imported gives the same bytes.

Item formats (benchmark.formats) are written only by a benchmark that has an item
other than open QA: a benchmark of open QA exports exactly as it did before formats
existed. Then the CSV has the columns `item_format`, `correct_options`,
`multiple_answers`, `correct_answer`, `option_a` … `option_g` and `key_point_1` …
`key_point_5` (suffixed `_<language>` for each target language), and every JSONL
line an `item_format`, with the answer key and each rendering's `options` or
`key_points` where the format has them.

A release export writes only active items whose source-language rendering is
approved, only approved current renderings, and the final labels; `ExportReport`
lists, per language, the active items that lack an approved rendering.
"""

import io
import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef
from django.utils.translation import gettext, ngettext

from benchmark import formats
from benchmark.csv_writer import CsvWriter
from benchmark.importing import FORMAT_FIELDS, LABEL_COLUMNS
from benchmark.models import Benchmark, FinalLabel, Item, Rendering

FORMATS = ("csv", "jsonl")
CHUNK = 2000
DIMENSION_COLUMNS = {dimension: column for column, dimension in LABEL_COLUMNS.items()}


@dataclass
class ExportReport:
    items: int = 0
    skipped_unapproved_source: list[str] = field(default_factory=list)
    missing_approved: dict[str, list[str]] = field(default_factory=dict)

    def lines(self, release: bool) -> list[str]:
        """What export_items prints about the export, in the active language."""
        text = [
            ngettext(
                "%(count)s item exported.", "%(count)s items exported.", self.items
            )
            % {"count": self.items}
        ]
        if release:
            if left_out := len(self.skipped_unapproved_source):
                text.append(
                    ngettext(
                        "%(count)s active item left out: no approved source-language "
                        "rendering.",
                        "%(count)s active items left out: no approved source-language "
                        "rendering.",
                        left_out,
                    )
                    % {"count": left_out}
                )
            for language, ids in self.missing_approved.items():
                if not ids:
                    text.append(
                        gettext("%(language)s: no item lacks an approved rendering")
                        % {"language": language}
                    )
                    continue
                sample = ", ".join(ids[:10]) + (" …" if len(ids) > 10 else "")
                text.append(
                    ngettext(
                        "%(language)s: %(count)s item lacks an approved rendering "
                        "(%(sample)s)",
                        "%(language)s: %(count)s items lack an approved rendering "
                        "(%(sample)s)",
                        len(ids),
                    )
                    % {"language": language, "count": len(ids), "sample": sample}
                )
        return text


def csv_header(
    benchmark: Benchmark, extra_dimensions: list[str], with_formats: bool
) -> list[str]:
    header = ["id", "question", "answer"]
    for language in benchmark.target_languages:
        header += [f"question_{language}", f"answer_{language}"]
    header += [
        "difficulty",
        "_format",
        "industry_primary",
        "capability",
        "knowledge_text",
        "domain",
        "source_kind",
        "source_reference",
        "status",
    ]
    header += [f"label_{code}" for code in extra_dimensions]
    if with_formats:
        header += FORMAT_FIELDS
        for language in benchmark.languages:
            suffix = "" if language == benchmark.source_language else f"_{language}"
            header += [f"option_{letter.lower()}{suffix}" for letter in formats.LETTERS]
            header += [
                f"key_point_{n}{suffix}" for n in range(1, formats.MAX_KEY_POINTS + 1)
            ]
    return header


def _chunks(
    benchmark: Benchmark, release: bool, with_formats: bool
) -> Iterator[list[dict]]:
    """Items in external-id order, CHUNK at a time, with renderings and labels (and
    the format data `with_formats`: reading it costs a JSON decode per rendering)."""
    items = Item.objects.filter(benchmark=benchmark).order_by("external_id")
    if release:
        items = items.filter(status=Item.Status.ACTIVE)
    fields = [
        "id",
        "external_id",
        "source_kind",
        "source_reference",
        "knowledge_text",
        "domain",
        "difficulty",
        "status",
        "source_format",
    ]
    rendering_fields = [
        "item_id",
        "language",
        "question",
        "answer",
        "origin",
        "review_status",
    ]
    if with_formats:
        fields += ["format", "correct_options", "multiple_answers", "correct_answer"]
        rendering_fields += ["options", "key_points"]
    after = None
    while True:
        page = items if after is None else items.filter(external_id__gt=after)
        rows = list(page.values(*fields)[:CHUNK])
        if not rows:
            return
        after = rows[-1]["external_id"]
        by_id = {row["id"]: row for row in rows}
        for row in rows:
            row["renderings"] = {}
            row["labels"] = {}
        for (
            item_id,
            language,
            question,
            answer,
            origin,
            status,
            *lists,
        ) in Rendering.objects.filter(item_id__in=by_id, is_current=True).values_list(
            *rendering_fields
        ):
            rendering = {
                "question": question,
                "answer": answer,
                "origin": origin,
                "review_status": status,
            }
            # Written only where there are some, as the generic JSONL reads them.
            for name, value in zip(("options", "key_points"), lists, strict=False):
                if value:
                    rendering[name] = value
            by_id[item_id]["renderings"][language] = rendering
        # The provenance is read only by the Hugging Face release's dataset card.
        for item_id, dimension, *label in (
            FinalLabel.objects.filter(item_id__in=by_id)
            .order_by("dimension__position", "dimension__code")
            .values_list(
                "item_id",
                "dimension__code",
                "label__code",
                "label__name",
                "provenance",
            )
        ):
            by_id[item_id]["labels"][dimension] = tuple(label)
        yield rows


def iter_export(
    benchmark: Benchmark, fmt: str, *, release: bool = False, report=None
) -> Iterator[str]:
    """Yield the export file piece by piece; fills `report` as it goes."""
    if fmt not in FORMATS:
        raise ValueError(f"Unknown export format {fmt!r}; choose one of {FORMATS}.")
    report = report if report is not None else ExportReport()
    languages = benchmark.languages
    dimensions = list(benchmark.dimensions.order_by("position", "code"))
    extra_dimensions = [d.code for d in dimensions if d.code not in DIMENSION_COLUMNS]
    with_formats = (
        Item.objects.filter(benchmark=benchmark)
        .exclude(format=Item.Format.OPEN)
        .exists()
    )
    buffer = io.StringIO()
    writer = CsvWriter(buffer, newline="\n")
    if fmt == "csv":
        writer.writerow(csv_header(benchmark, extra_dimensions, with_formats))
    for rows in exported_chunks(benchmark, release, with_formats, report):
        for row in rows:
            if fmt == "jsonl":
                buffer.write(_json_line(row, languages, dimensions, with_formats))
                buffer.write("\n")
            else:
                writer.writerow(
                    _csv_row(row, benchmark, extra_dimensions, with_formats)
                )
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def exported_chunks(
    benchmark: Benchmark, release: bool, with_formats: bool, report: ExportReport
) -> Iterator[list[dict]]:
    """The rows an export writes, a chunk at a time: with `release`, only approved
    renderings of items whose source text is approved. Fills `report` as it goes
    and, once the last chunk is out, its per-language gaps."""
    languages = benchmark.languages
    missing = defaultdict(list)
    for rows in _chunks(benchmark, release, with_formats):
        kept = []
        for row in rows:
            renderings = row["renderings"]
            if release:
                for language in languages:
                    rendering = renderings.get(language)
                    if not rendering or rendering["review_status"] != "approved":
                        missing[language].append(row["external_id"])
                        renderings.pop(language, None)
                if benchmark.source_language not in renderings:
                    report.skipped_unapproved_source.append(row["external_id"])
                    continue
            report.items += 1
            kept.append(row)
        yield kept
    report.missing_approved = {
        language: missing.get(language, []) for language in languages
    }


def _json_line(row: dict, languages: list[str], dimensions, with_formats: bool) -> str:
    labels = row["labels"]
    renderings = row["renderings"]
    line = {
        "id": row["external_id"],
        "source_kind": row["source_kind"],
        "source_reference": row["source_reference"],
        "knowledge_text": row["knowledge_text"],
        "domain": row["domain"],
        "difficulty": row["difficulty"],
        "status": row["status"],
        "format": row["source_format"],
    }
    if with_formats:
        line["item_format"] = row["format"]
        if row["format"] == Item.Format.MULTIPLE_CHOICE:
            line["correct_options"] = row["correct_options"]
            line["multiple_answers"] = row["multiple_answers"]
        if row["format"] == Item.Format.TRUE_FALSE:
            line["correct_answer"] = row["correct_answer"]
    line["labels"] = {d.code: labels[d.code][0] for d in dimensions if d.code in labels}
    line["renderings"] = {
        language: renderings[language]
        for language in languages
        if language in renderings
    }
    return json.dumps(line, ensure_ascii=False)


def _format_cells(row: dict, benchmark: Benchmark) -> list:
    """The format columns of one CSV row, in csv_header's order."""
    multiple_choice = row["format"] == Item.Format.MULTIPLE_CHOICE
    cells = [
        row["format"],
        ",".join(row["correct_options"]),
        ("true" if row["multiple_answers"] else "false") if multiple_choice else "",
        {True: "true", False: "false", None: ""}[row["correct_answer"]],
    ]
    for language in benchmark.languages:
        rendering = row["renderings"].get(language, {})
        options = rendering.get("options", [])
        key_points = rendering.get("key_points", [])
        cells += options + [""] * (formats.MAX_OPTIONS - len(options))
        cells += key_points + [""] * (formats.MAX_KEY_POINTS - len(key_points))
    return cells


def _csv_row(
    row: dict, benchmark: Benchmark, extra_dimensions: list[str], with_formats: bool
) -> list:
    renderings = row["renderings"]
    labels = row["labels"]

    def text(language, part):
        rendering = renderings.get(language)
        return rendering[part] if rendering else ""

    def label_name(dimension_code):
        label = labels.get(dimension_code)
        return label[1] if label else ""

    cells = [
        row["external_id"],
        text(benchmark.source_language, "question"),
        text(benchmark.source_language, "answer"),
    ]
    for language in benchmark.target_languages:
        cells += [text(language, "question"), text(language, "answer")]
    cells += [
        row["difficulty"],
        row["source_format"],
        label_name("industry"),
        label_name("capability"),
        row["knowledge_text"],
        row["domain"],
        row["source_kind"],
        row["source_reference"],
        row["status"],
    ]
    cells += [label_name(code) for code in extra_dimensions]
    if with_formats:
        cells += _format_cells(row, benchmark)
    return cells


def write_export(
    benchmark: Benchmark, out, fmt: str, *, release: bool = False
) -> ExportReport:
    report = ExportReport()
    for piece in iter_export(benchmark, fmt, release=release, report=report):
        out.write(piece)
    return report


def release_gaps(benchmark: Benchmark) -> dict[str, int]:
    """Per language, how many active items lack an approved current rendering."""
    active = Item.objects.filter(benchmark=benchmark, status=Item.Status.ACTIVE)
    gaps = {}
    for language in benchmark.languages:
        approved = Rendering.objects.filter(
            item=OuterRef("pk"),
            language=language,
            is_current=True,
            review_status=Rendering.ReviewStatus.APPROVED,
        )
        gaps[language] = active.filter(~Exists(approved)).count()
    return gaps
