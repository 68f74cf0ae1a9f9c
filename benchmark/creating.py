"""Creating items: each with its source-language text as rendering version 1 and
a history entry saying where it came from, in a few statements per batch
whatever the count (the construction release opened 8,237 candidates one item
at a time, ~11 ms each, inside a web request)."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from benchmark import formats, history
from benchmark.actions import RenderingChange, do_add_rendering_versions
from benchmark.models import Benchmark, Item, ItemEvent, Rendering
from benchmark.notes import Note

CREATE_BATCH = 1000


@dataclass(frozen=True)
class NewItem:
    """An item to create. `provenance` is its creation event's `after` (e.g. the
    construction candidate and source it was released from). A `draft` item is
    not yet part of the benchmark (runs and exports take active items): a
    construction candidate waiting for its labels and the release sample.

    Open QA unless `item_format` says otherwise: a multiple-choice item's options
    and correct letters, a short answer's key points."""

    external_id: str
    question: str
    answer: str
    source_kind: str = Item.SourceKind.OTHER
    source_reference: str = ""
    knowledge_text: str = ""
    summary: Note | str = history.CREATED
    provenance: dict | None = None
    status: str = Item.Status.ACTIVE
    item_format: str = Item.Format.OPEN
    options: list[str] | None = None
    correct_options: list[str] | None = None
    key_points: list[str] | None = None


def check_create_items(benchmark: Benchmark, new: Sequence[NewItem]):
    """ValidationError naming an external id taken (in the benchmark or twice in
    `new`) or each broken format rule (benchmark.formats)."""
    wanted = [spec.external_id for spec in new]
    taken = set(
        Item.objects.filter(benchmark=benchmark, external_id__in=wanted).values_list(
            "external_id", flat=True
        )
    )
    seen: set[str] = set()
    for spec in new:
        if spec.external_id in taken or spec.external_id in seen:
            raise ValidationError(
                _("%(benchmark)s already has an item %(id)s.")
                % {"benchmark": benchmark, "id": spec.external_id}
            )
        seen.add(spec.external_id)
        issues = formats.format_issues(
            spec.item_format,
            correct_options=spec.correct_options or [],
            multiple_answers=False,
            correct_answer=None,
            renderings=[
                formats.RenderingFormat(
                    benchmark.source_language,
                    spec.answer,
                    spec.options or [],
                    spec.key_points or [],
                )
            ],
            source_language=benchmark.source_language,
        )
        if issues:
            raise ValidationError(
                f"{spec.external_id}: " + "; ".join(issue.message for issue in issues)
            )


@transaction.atomic
def do_create_items(
    benchmark: Benchmark, new: Sequence[NewItem], *, user=None
) -> list[Item]:
    """The new items, in `new`'s order, after check_create_items. Per batch: the
    items, their `created` events, then their renderings with the `rendering`
    events do_add_rendering_versions writes, one statement each."""
    check_create_items(benchmark, new)
    created: list[Item] = []
    for start in range(0, len(new), CREATE_BATCH):
        batch = new[start : start + CREATE_BATCH]
        items = Item.objects.bulk_create(
            Item(
                benchmark=benchmark,
                external_id=spec.external_id,
                source_kind=spec.source_kind,
                source_reference=spec.source_reference[:300],
                knowledge_text=spec.knowledge_text,
                status=spec.status,
                format=spec.item_format,
                correct_options=spec.correct_options or [],
            )
            for spec in batch
        )
        ItemEvent.objects.bulk_create(
            ItemEvent(
                item=item,
                kind="created",
                **ItemEvent.summary_fields(spec.summary),
                after=spec.provenance,
                user=user,
            )
            for item, spec in zip(items, batch, strict=True)
        )
        do_add_rendering_versions(
            [
                RenderingChange(
                    item,
                    benchmark.source_language,
                    question=spec.question,
                    answer=spec.answer,
                    origin=Rendering.Origin.SOURCE,
                    review_status=Rendering.ReviewStatus.APPROVED,
                    options=spec.options or [],
                    key_points=spec.key_points or [],
                )
                for item, spec in zip(items, batch, strict=True)
            ],
            user=user,
        )
        created += items
    return created


def do_create_item(benchmark: Benchmark, new: NewItem, *, user=None) -> Item:
    return do_create_items(benchmark, [new], user=user)[0]
