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

import queue
import threading
from collections.abc import Iterable, Iterator

from django.db import transaction
from django.utils.translation import gettext_noop

from benchmark.actions import do_create_benchmark
from benchmark.importing.reading import read_records
from benchmark.importing.records import (
    BATCH_SIZE,
    FORMAT_FIELDS,
    GENERIC_JSONL,
    INDUSTRYBENCH,
    LABEL_COLUMNS,
    LAYOUTS,
    ImportSummary,
    ItemRecord,
    Taxonomy,
)
from benchmark.importing.validating import Validator
from benchmark.importing.writing import Writer
from benchmark.models import Benchmark, Item
from benchmark.notes import Note
from benchmark.validation import Problems

__all__ = [
    "FORMAT_FIELDS",
    "GENERIC_JSONL",
    "INDUSTRYBENCH",
    "LABEL_COLUMNS",
    "LAYOUTS",
    "ImportSummary",
    "do_import_items",
]

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
        validator = Validator(
            benchmark, Taxonomy(benchmark), problems, existing, update
        )
        writer = Writer(benchmark, summary, user=user, filename=filename)
        writer.existing = existing
        records = read_records(source, layout, validator, summary)
        seen = 0
        for batch in _parsed_in_background(records):
            seen += len(batch)
            if not problems:
                for record in batch:
                    writer.add(record)
        if not seen and not problems:
            problems.add(
                0,
                "",
                Note(
                    gettext_noop(
                        "the file holds no items (a header alone, or nothing)."
                    )
                ),
            )
        if problems:
            raise problems.rejection()
        writer.flush()
    return summary
