"""Writing validated records: new items in batches (PostgreSQL COPY, bulk_create
elsewhere), existing ones (--update) as new rendering versions, changed fields
and labels, each with its history event."""

import json

from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext_noop

from benchmark import formats
from benchmark.actions import (
    RenderingChange,
    do_add_rendering_versions,
    do_set_final_label,
)
from benchmark.importing.records import (
    BATCH_SIZE,
    ImportSummary,
    ItemRecord,
    RenderingRecord,
)
from benchmark.models import FinalLabel, Item, ItemEvent, Rendering
from benchmark.notes import Note


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
    "summary_note",
    "before",
    "after",
    "user_id",
    "created_at",
]


class Writer:
    def __init__(self, benchmark, summary: ImportSummary, *, user, filename: str):
        self.benchmark = benchmark
        self.summary = summary
        self.user_id = user.pk if user is not None else None
        self.user = user
        # The history's summary (a Note) and the new renderings' note (English,
        # like every rendering note a person writes).
        self.event_note = (
            Note(gettext_noop("Imported from %(file)s"), file=filename)
            if filename
            else Note(gettext_noop("Imported"))
        )
        self.note = str(self.event_note)
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
        benchmark_id, user_id = self.benchmark.pk, self.user_id
        summary = ItemEvent.summary_fields(self.event_note)
        summary_note = (
            json.dumps(summary["summary_note"], ensure_ascii=False)
            if self.use_copy
            else summary["summary_note"]
        )
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
            events.append(
                (
                    item_id,
                    "import",
                    summary["summary"],
                    summary_note,
                    None,
                    None,
                    user_id,
                    now,
                )
            )
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
            **ItemEvent.summary_fields(
                Note(
                    gettext_noop("%(source)s: %(fields)s changed"),
                    source=self.event_note,
                    # Field names, the same in every language.
                    fields=", ".join(changed),
                )
            ),
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
