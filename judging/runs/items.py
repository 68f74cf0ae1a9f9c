"""Which items a labelling or translation run covers: the item filter they share."""

from benchmark.models import Item

ITEM_FILTER_KEYS = {"external_ids", "source_kind", "difficulty", "status", "limit"}


def filtered_items(benchmark_id: int, spec: dict, *, language: str | None = None):
    """The benchmark's items matching `spec` that have a current text (in
    `language`, if given), by id. Keys: external_ids (list), source_kind,
    difficulty, status (default "active"), limit."""
    current = {"renderings__is_current": True}
    if language:
        current["renderings__language"] = language
    items = Item.objects.filter(
        benchmark_id=benchmark_id,
        status=spec.get("status", Item.Status.ACTIVE),
        **current,
    )
    if spec.get("external_ids"):
        items = items.filter(external_id__in=spec["external_ids"])
    if spec.get("source_kind"):
        items = items.filter(source_kind=spec["source_kind"])
    if spec.get("difficulty"):
        items = items.filter(difficulty=spec["difficulty"])
    items = items.distinct().order_by("pk")
    if spec.get("limit"):
        items = items[: int(spec["limit"])]
    return items
