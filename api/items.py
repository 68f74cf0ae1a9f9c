"""Benchmarks and their items: read in keyset pages (api.cursor), written in bulk by
the item import (benchmark.importing), all or nothing, by the Import page's rules."""

import json
from collections import defaultdict
from datetime import datetime
from typing import Any

import pydantic
from django.conf import settings
from django.db.models import Count
from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError

from api.cursor import BadCursor, decode_cursor, encode_cursor
from api.schemas import (
    BadJson,
    InSchema,
    answers,
    invalid,
    load_json,
    read_by_the_route,
)
from benchmark.browse import (
    ItemFilterForm,
    browse_dimensions,
    filter_items,
    item_page,
)
from benchmark.importing import GENERIC_JSONL, do_import_items
from benchmark.models import Benchmark, FinalLabel, Item, Rendering
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected

router = Router(tags=["benchmarks and items"])


class LabelOut(Schema):
    code: str
    name: str


class DimensionOut(Schema):
    code: str
    name: str
    labels: list[LabelOut]

    @staticmethod
    def resolve_labels(dimension):
        return list(dimension.labels.all())


class BenchmarkOut(Schema):
    slug: str
    name: str
    version: str
    description: str
    source_language: str
    languages: list[str]
    is_demo: bool
    item_count: int


class BenchmarkDetailOut(BenchmarkOut):
    dimensions: list[DimensionOut]

    @staticmethod
    def resolve_dimensions(benchmark):
        return browse_dimensions(benchmark)


class RenderingOut(Schema):
    question: str
    answer: str
    version: int
    origin: str
    review_status: str


class FinalLabelOut(Schema):
    code: str
    name: str
    provenance: str
    decided_at: datetime


class ItemOut(Schema):
    id: int
    external_id: str
    source_kind: str
    source_reference: str
    knowledge_text: str
    domain: str
    difficulty: str
    difficulty_provenance: str
    status: str
    source_format: str
    created_at: datetime
    updated_at: datetime
    renderings: dict[str, RenderingOut] = Field(
        description="The current rendering in each language, keyed by language"
    )
    labels: dict[str, FinalLabelOut] = Field(
        description="The final label in each dimension, keyed by dimension code"
    )


class ItemPage(Schema):
    items: list[ItemOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page"
    )


@router.get("/benchmarks", response=answers({200: list[BenchmarkOut]}))
@role_required(*Role.values)
def list_benchmarks(request):
    return Benchmark.objects.annotate(item_count=Count("items")).order_by("name")


@router.get("/benchmarks/{slug}", response=answers({200: BenchmarkDetailOut}, 404))
@role_required(*Role.values)
def get_benchmark(request, slug: str):
    return get_object_or_404(
        Benchmark.objects.annotate(item_count=Count("items")), slug=slug
    )


@router.get("/benchmarks/{slug}/items", response=answers({200: ItemPage}, 404, 422))
@role_required(*Role.values)
def list_items(
    request,
    slug: str,
    cursor: str | None = None,
    limit: int = Query(100, ge=1, le=500),
    external_id: str | None = None,
    difficulty: str | None = Query(None, description="easy, medium, hard or unset"),
    status: str | None = None,
    source_kind: str | None = None,
    language: str | None = Query(None, description="items with a rendering in it"),
    label: list[str] | None = Query(
        None,
        description="`dimension:label` codes, e.g. capability:fault_diagnosis; "
        "`dimension:none` for items without a final label there",
    ),
):
    """Items in the order they were created, `limit` per page, each with its
    current renderings and final labels; the same filters as the item browser."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    dimensions = browse_dimensions(benchmark)
    fields = {
        "difficulty": difficulty,
        "status": status,
        "source_kind": source_kind,
        "language": language,
    }
    criteria = _criteria(benchmark, dimensions, fields, label or [])
    try:
        after = decode_cursor(cursor) if cursor else 0
    except BadCursor as error:
        raise invalid("cursor", str(error)) from None
    items = filter_items(benchmark, criteria, dimensions, search=None)
    if external_id is not None:
        items = items.filter(external_id=external_id)
    page = list(items.filter(pk__gt=after).order_by("pk")[: limit + 1])
    more, page = len(page) > limit, page[:limit]
    return {
        "items": _items(page, dimensions),
        "next_cursor": encode_cursor(page[-1].pk) if more else None,
    }


class VersionOut(Schema):
    version: int
    is_current: bool
    question: str
    answer: str
    options: list[str]
    origin: str
    review_status: str
    note: str
    created_by: str | None
    created_at: datetime


class LanguageHistoryOut(Schema):
    language: str
    versions: list[VersionOut] = Field(description="Newest first")


class FinalLabelHistoryOut(FinalLabelOut):
    dimension: str
    decided_by: str | None
    note: str


class ChangeOut(Schema):
    field: str
    before: Any
    after: Any


class EventOut(Schema):
    kind: str
    summary: str
    user: str | None
    created_at: datetime
    changes: list[ChangeOut]


class ItemHistoryOut(Schema):
    id: int
    external_id: str
    renderings: list[LanguageHistoryOut] = Field(
        description="Every version in each language, the benchmark's languages first"
    )
    labels: list[FinalLabelHistoryOut]
    events: list[EventOut] = Field(description="As the item page lists them")


@router.get(
    "/benchmarks/{slug}/items/{external_id}/history",
    response=answers({200: ItemHistoryOut}, 404),
)
@role_required(*Role.values)
def item_history(request, slug: str, external_id: str):
    """What the item page shows of the item's past: each rendering version with its
    origin and review status, the final labels with their provenance, the events."""
    item = get_object_or_404(
        Item.objects.select_related("benchmark"),
        benchmark__slug=slug,
        external_id=external_id,
    )
    page = item_page(item)
    return {
        "id": item.pk,
        "external_id": item.external_id,
        "renderings": [
            {
                "language": column.code,
                "versions": [_version(rendering) for rendering in column.versions],
            }
            for column in page["columns"]
        ],
        "labels": [
            {
                "dimension": final.dimension.code,
                "code": final.label.code,
                "name": final.label.name,
                "provenance": final.provenance,
                "decided_by": _username(final.decided_by),
                "decided_at": final.decided_at,
                "note": final.note,
            }
            for final in page["final_labels"]
        ],
        "events": [
            {
                "kind": row.event.kind,
                "summary": row.event.summary,
                "user": _username(row.event.user),
                "created_at": row.event.created_at,
                # Without the page's word-level diff: a client has both texts.
                "changes": [
                    {"field": c.name, "before": c.before, "after": c.after}
                    for c in row.changes
                ],
            }
            for row in page["events"]
        ],
    }


def _version(rendering: Rendering) -> dict:
    return {
        "version": rendering.version,
        "is_current": rendering.is_current,
        "question": rendering.question,
        "answer": rendering.answer,
        "options": rendering.options,
        "origin": rendering.origin,
        "review_status": rendering.review_status,
        "note": rendering.note,
        "created_by": _username(rendering.created_by),
        "created_at": rendering.created_at,
    }


def _username(user) -> str | None:
    return user.get_username() if user else None


def _criteria(benchmark, dimensions, fields: dict, labels: list[str]) -> dict:
    """The item browser's filters from the query, checked by its form; a bad value
    is a 422 naming the parameter (the browser leaves it out instead)."""
    data = {name: value for name, value in fields.items() if value is not None}
    codes = {dimension.code for dimension in dimensions}
    for value in labels:
        dimension, _, code = value.partition(":")
        if dimension not in codes or not code:
            raise invalid(
                "label",
                f"{value!r}: give dimension:label, the dimension one of "
                + ", ".join(sorted(codes)),
            )
        if dimension in data:
            raise invalid("label", f"more than one label for {dimension}")
        data[dimension] = code
    form = ItemFilterForm(benchmark, dimensions, data)
    if not form.is_valid():
        name, messages = next(iter(form.errors.items()))
        raise invalid("label" if name in codes else name, " ".join(messages))
    return form.criteria()


RENDERING_FIELDS = ("question", "answer", "version", "origin", "review_status")


def _items(items: list[Item], dimensions) -> list[dict]:
    """The items with their current renderings and final labels. Those are read as
    plain rows: made into model instances, they took half the time of a page."""
    ids = [item.pk for item in items]
    renderings = defaultdict(dict)
    for row in Rendering.objects.filter(item_id__in=ids, is_current=True).values(
        "item_id", "language", *RENDERING_FIELDS
    ):
        renderings[row.pop("item_id")][row.pop("language")] = row
    codes = {dimension.pk: dimension.code for dimension in dimensions}
    labels = defaultdict(dict)
    for item_id, dimension_id, *label in FinalLabel.objects.filter(
        item_id__in=ids
    ).values_list(
        "item_id",
        "dimension_id",
        "label__code",
        "label__name",
        "provenance",
        "decided_at",
    ):
        labels[item_id][codes[dimension_id]] = dict(
            zip(("code", "name", "provenance", "decided_at"), label, strict=True)
        )
    return [
        {
            "id": item.pk,
            "external_id": item.external_id,
            "source_kind": item.source_kind,
            "source_reference": item.source_reference,
            "knowledge_text": item.knowledge_text,
            "domain": item.domain,
            "difficulty": item.difficulty,
            "difficulty_provenance": item.difficulty_provenance,
            "status": item.status,
            "source_format": item.source_format,
            "created_at": item.created_at,
            "updated_at": item.updated_at,
            "renderings": renderings[item.pk],
            "labels": labels[item.pk],
        }
        for item in items
    ]


# ------------------------------------------------------------------------ bulk write


class RenderingIn(InSchema):
    question: str | None = None
    answer: str | None = None
    origin: str | None = Field(
        None, description="source, imported, machine or human_edited"
    )
    review_status: str | None = Field(
        None, description="approved, pending, flagged or rejected"
    )
    options: list[str] | None = Field(
        None, description="Multiple choice: the option texts, in order A, B, …"
    )
    key_points: list[str] | None = Field(
        None, description="Short answer: what a correct answer must contain"
    )


class ItemIn(InSchema):
    """One item in the generic JSONL layout (docs/IMPORT_FORMATS.md); the import
    checks the values, as for a file. Loose types where the file's are."""

    id: str = Field(description="The item's external id")
    source_kind: str | None = None
    source_reference: str | None = None
    knowledge_text: str | None = None
    domain: str | None = None
    difficulty: str | None = Field(None, description="easy, medium or hard")
    status: str | None = None
    format: str | None = Field(None, description="The source file's `_format`")
    item_format: str | None = Field(
        None, description="open, multiple_choice, true_false or short_answer"
    )
    correct_options: list[str] | str | None = None
    multiple_answers: bool | str | None = None
    correct_answer: bool | str | None = None
    labels: dict[str, str] | None = Field(
        None, description="Label code keyed by dimension code"
    )
    renderings: dict[str, RenderingIn] = Field(
        description="Keyed by language; the source language's is required"
    )


class BulkItemsIn(InSchema):
    update: bool = Field(
        False,
        description="Update items whose id exists (else each is an error), as the "
        "Import page's “Update items whose id already exists”",
    )
    items: list[ItemIn]


class BulkSummaryOut(Schema):
    created: int
    updated: int
    unchanged: int
    renderings_added: int
    labels_set: int
    human_labels_kept: list[str] = Field(
        description="Items whose human label decision was kept over the call's"
    )


class BulkError(Schema):
    row: int | None = Field(
        description="Position of the item in `items`, from 0; null: the call as a whole"
    )
    item_id: str
    field: str
    message: str


class BulkRejectedOut(Schema):
    detail: str
    total: int = Field(description="Errors found; the first 100 are listed")
    errors: list[BulkError]


@router.post(
    "/benchmarks/{slug}/items/bulk",
    response=answers({200: BulkSummaryOut, 422: BulkRejectedOut}, 400, 404, 413),
    openapi_extra=read_by_the_route(BulkItemsIn),
)
@role_required(Role.MANAGER)
def bulk_items(request, slug: str):
    """Create items, or with `update` also change existing ones, in one transaction:
    one bad item and nothing is written, and every error names its row and field."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        call = BulkItemsIn.model_validate(load_json(_body(request)))
    except BadJson as error:
        raise HttpError(400, str(error)) from None
    except pydantic.ValidationError as error:
        return Status(422, _rejected([_row_error(e) for e in error.errors()]))
    if not call.items:
        return Status(422, _rejected([(None, "items", "no items")]))
    try:
        summary = do_import_items(
            (
                json.dumps(
                    item.model_dump(exclude_unset=True), ensure_ascii=False
                ).encode()
                for item in call.items
            ),
            slug=benchmark.slug,
            update=call.update,
            layout=GENERIC_JSONL,
            user=request.user,
            filename="the REST API",
        )
    except ImportRejected as rejected:
        # The import numbers lines from 1, one item per line.
        errors = [
            (p.line - 1 if p.line else None, p.field, p.message)
            for p in rejected.problems
        ]
        ids = [item.id for item in call.items]
        return Status(422, _rejected(errors, total=rejected.total, ids=ids))
    return Status(200, summary)


def _body(request) -> bytes:
    # Read, not request.body: that refuses anything over DATA_UPLOAD_MAX_MEMORY_SIZE,
    # the 10 MB limit meant for forms.
    limit = settings.API_BULK_MAX_BYTES
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    body = request.read(limit + 1) if length <= limit else b""
    if length > limit or len(body) > limit:
        raise HttpError(
            413,
            f"The call is larger than {limit:,} bytes (API_BULK_MAX_BYTES); send "
            "the items in several calls.",
        )
    return body


def _row_error(error) -> tuple[int | None, str, str]:
    """A schema error as (row, field, message): `items.3.renderings.zh` is row 3,
    field `renderings.zh`, as the import names them."""
    loc = list(error["loc"])
    if len(loc) >= 2 and loc[0] == "items" and isinstance(loc[1], int):
        return loc[1], ".".join(map(str, loc[2:])) or "items", error["msg"]
    return None, ".".join(map(str, loc)), error["msg"]


def _rejected(errors, *, total=None, ids=()) -> dict:
    def item_id(row):
        return ids[row] if row is not None and row < len(ids) else ""

    total = len(errors) if total is None else total
    return {
        "detail": f"{total} error(s); nothing was written",
        "total": total,
        "errors": [
            {"row": row, "item_id": item_id(row), "field": field, "message": message}
            for row, field, message in errors
        ],
    }
