"""Which items a run covers: the item filter every run kind's start shares
(labelling, translation, evaluation), with one meaning of "at most N items" — the
first N by external id, the order the item browser lists them in."""

from benchmark.models import Item

ITEM_FILTER_KEYS = {"external_ids", "source_kind", "difficulty", "status", "limit"}


def narrowed(items, spec: dict):
    """`items` narrowed by the filter's external_ids (list), source_kind and
    difficulty."""
    if spec.get("external_ids"):
        items = items.filter(external_id__in=spec["external_ids"])
    if spec.get("source_kind"):
        items = items.filter(source_kind=spec["source_kind"])
    if spec.get("difficulty"):
        items = items.filter(difficulty=spec["difficulty"])
    return items


def first_n(items, spec: dict):
    """`items` by external id, cut to the filter's limit (at most N items)."""
    items = items.order_by("external_id", "pk")
    limit = spec.get("limit")
    return items[: int(limit)] if limit else items


def filtered_items(benchmark_id: int, spec: dict, *, language: str | None = None):
    """The benchmark's items matching `spec` that have a current text (in
    `language`, if given). Keys: external_ids (list), source_kind, difficulty,
    status (default "active"), limit."""
    current = {"renderings__is_current": True}
    if language:
        current["renderings__language"] = language
    items = Item.objects.filter(
        benchmark_id=benchmark_id,
        status=spec.get("status", Item.Status.ACTIVE),
        **current,
    )
    return first_n(narrowed(items, spec).distinct(), spec)
