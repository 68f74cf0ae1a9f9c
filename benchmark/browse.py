"""Read side of the item browser: filters, facet counts, one page of items, item page.

Facet counts follow the usual faceted-search rule: each facet is counted with every
other active filter applied but not its own, so the counts say what choosing another
value would give. Every facet is one aggregate query, so a page costs a fixed number of
queries whatever the number of items or labels.
"""

from dataclasses import dataclass, field

from django import forms
from django.core.paginator import Page, Paginator
from django.db.models import (
    Count,
    Exists,
    FilteredRelation,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
)

from .models import Benchmark, FinalLabel, Item, ItemEvent, LabelDimension, Rendering
from .taxonomy import LANGUAGE_NAMES

PAGE_SIZE = 50
# Filter value meaning "difficulty not set" / "no final label in this dimension"; the
# stored values are "" and a missing row, which a query string cannot select.
UNSET = "unset"
NO_LABEL = "none"
ITEM_FIELD_FACETS = ("difficulty", "source_kind", "status")


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


class ItemFilterForm(forms.Form):
    """The browser's query string. Invalid values are reported and left out."""

    q = forms.CharField(required=False, max_length=200, strip=True, label="Search")
    language = forms.ChoiceField(required=False)
    difficulty = forms.ChoiceField(
        required=False,
        choices=[
            (UNSET if value == "" else value, label)
            for value, label in Item.Difficulty.choices
        ],
    )
    source_kind = forms.ChoiceField(
        required=False, choices=Item.SourceKind.choices, label="Source"
    )
    status = forms.ChoiceField(required=False, choices=Item.Status.choices)

    def __init__(self, benchmark: Benchmark, dimensions, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = [
            (code, language_name(code)) for code in benchmark.languages
        ]
        self.dimensions = dimensions
        for dimension in dimensions:
            self.fields[dimension.code] = forms.ChoiceField(
                required=False,
                label=dimension.name,
                choices=[(label.code, label.name) for label in dimension.labels.all()]
                + [(NO_LABEL, "No final label")],
            )

    def criteria(self) -> dict[str, str]:
        """The valid, non-empty filters; call after is_valid()."""
        return {name: value for name, value in self.cleaned_data.items() if value}


@dataclass
class FacetOption:
    value: str
    label: str
    count: int


@dataclass
class Facet:
    name: str
    title: str
    selected: str
    options: list[FacetOption]


@dataclass
class ItemRow:
    item: Item
    question: str
    shown_language: str
    languages: list[str]
    labels: list[str]


@dataclass
class BrowseResult:
    page: Page
    rows: list[ItemRow]
    facets: list[Facet]
    dimensions: list[LabelDimension]
    shown_language: str
    criteria: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.page.paginator.count


def search_condition(text: str) -> Q:
    renderings = Rendering.objects.filter(item=OuterRef("pk"), is_current=True).filter(
        Q(question__icontains=text) | Q(answer__icontains=text)
    )
    return (
        Q(external_id__icontains=text)
        | Q(source_reference__icontains=text)
        | Q(Exists(renderings))
    )


def filter_items(
    benchmark: Benchmark,
    criteria: dict[str, str],
    dimensions: list[LabelDimension],
    *,
    skip: str = "",
) -> QuerySet:
    """Items of `benchmark` matching every criterion except the one named `skip`."""
    active = {name: value for name, value in criteria.items() if name != skip}
    items = Item.objects.filter(benchmark=benchmark)
    if "q" in active:
        items = items.filter(search_condition(active["q"]))
    if "language" in active:
        items = items.filter(
            Exists(
                Rendering.objects.filter(
                    item=OuterRef("pk"), is_current=True, language=active["language"]
                )
            )
        )
    for name in ITEM_FIELD_FACETS:
        if name in active:
            value = "" if active[name] == UNSET else active[name]
            items = items.filter(**{name: value})
    for dimension in dimensions:
        if dimension.code not in active:
            continue
        value = active[dimension.code]
        labelled = FinalLabel.objects.filter(item=OuterRef("pk"), dimension=dimension)
        if value == NO_LABEL:
            items = items.filter(~Exists(labelled))
        else:
            items = items.filter(Exists(labelled.filter(label__code=value)))
    return items


def _options(choices, counts: dict[str, int]) -> list[FacetOption]:
    return [FacetOption(value, label, counts.get(value, 0)) for value, label in choices]


def item_field_facet(
    form: ItemFilterForm, benchmark, criteria, dimensions, name: str
) -> Facet:
    rows = (
        filter_items(benchmark, criteria, dimensions, skip=name)
        .order_by()
        .values_list(name)
        .annotate(n=Count("pk"))
    )
    counts = {(UNSET if value == "" else value): n for value, n in rows}
    formfield = form.fields[name]
    return Facet(
        name,
        formfield.label or name.replace("_", " ").capitalize(),
        criteria.get(name, ""),
        _options(formfield.choices, counts),
    )


def language_facet(form, benchmark, criteria, dimensions) -> Facet:
    rows = (
        Rendering.objects.filter(
            is_current=True,
            item__in=filter_items(benchmark, criteria, dimensions, skip="language"),
        )
        .order_by()
        .values_list("language")
        .annotate(n=Count("pk"))
    )
    return Facet(
        "language",
        "Language",
        criteria.get("language", ""),
        _options(form.fields["language"].choices, dict(rows)),
    )


def dimension_facet(form, benchmark, criteria, dimensions, dimension) -> Facet:
    # A left join restricted to this dimension: items without a final label in it
    # group under NULL, so "No final label" is counted by the same query.
    rows = (
        filter_items(benchmark, criteria, dimensions, skip=dimension.code)
        .annotate(
            final=FilteredRelation(
                "final_labels", condition=Q(final_labels__dimension=dimension)
            )
        )
        .order_by()
        .values_list("final__label__code")
        .annotate(n=Count("pk"))
    )
    counts = {(NO_LABEL if code is None else code): n for code, n in rows}
    return Facet(
        dimension.code,
        dimension.name,
        criteria.get(dimension.code, ""),
        _options(form.fields[dimension.code].choices, counts),
    )


def browse_dimensions(benchmark: Benchmark) -> list[LabelDimension]:
    return list(benchmark.dimensions.prefetch_related("labels"))


def browse_items(
    benchmark: Benchmark, form: ItemFilterForm, page_number
) -> BrowseResult:
    form.is_valid()
    criteria = form.criteria()
    dimensions = form.dimensions
    shown_language = criteria.get("language", benchmark.source_language)
    items = filter_items(benchmark, criteria, dimensions).prefetch_related(
        Prefetch(
            "renderings",
            queryset=Rendering.objects.filter(is_current=True).only(
                "item_id", "language", "question"
            ),
            to_attr="current_renderings",
        ),
        Prefetch(
            "final_labels",
            queryset=FinalLabel.objects.select_related("label").only(
                "item_id", "dimension_id", "label__name"
            ),
            to_attr="final_label_list",
        ),
    )
    page = Paginator(items.order_by("external_id"), PAGE_SIZE).get_page(page_number)
    rows = [
        item_row(item, dimensions, shown_language, benchmark.languages)
        for item in page.object_list
    ]
    facets = [
        language_facet(form, benchmark, criteria, dimensions),
        *(
            dimension_facet(form, benchmark, criteria, dimensions, dimension)
            for dimension in dimensions
        ),
        *(
            item_field_facet(form, benchmark, criteria, dimensions, name)
            for name in ITEM_FIELD_FACETS
        ),
    ]
    return BrowseResult(page, rows, facets, dimensions, shown_language, criteria)


def item_row(item: Item, dimensions, shown_language: str, languages) -> ItemRow:
    by_language = {r.language: r for r in item.current_renderings}
    order = {code: index for index, code in enumerate(languages)}
    shown = by_language.get(shown_language) or next(iter(by_language.values()), None)
    by_dimension = {f.dimension_id: f.label.name for f in item.final_label_list}
    return ItemRow(
        item=item,
        question=shown.question if shown else "",
        shown_language=shown.language if shown else shown_language,
        languages=sorted(by_language, key=lambda code: (order.get(code, 99), code)),
        labels=[by_dimension.get(d.pk, "") for d in dimensions],
    )


@dataclass
class LanguageColumn:
    code: str
    name: str
    current: Rendering | None
    versions: list[Rendering]


@dataclass
class EventRow:
    event: ItemEvent
    changes: list[tuple[str, object, object]]


# jsonb does not keep key order; history shows the fields in reading order.
CHANGE_ORDER = ("label", "provenance", "version", "review_status", "question", "answer")


def event_changes(before: dict | None, after: dict | None) -> list[tuple]:
    """(field, before, after) for every field that differs."""
    before = before or {}
    after = after or {}
    keys = sorted(
        {*before, *after},
        key=lambda key: (
            CHANGE_ORDER.index(key) if key in CHANGE_ORDER else len(CHANGE_ORDER),
            key,
        ),
    )
    return [
        (key, before.get(key), after.get(key))
        for key in keys
        if before.get(key) != after.get(key)
    ]


def item_page(item: Item) -> dict:
    benchmark = item.benchmark
    versions = list(
        item.renderings.select_related("created_by").order_by("language", "-version")
    )
    languages = list(
        dict.fromkeys([*benchmark.languages, *(r.language for r in versions)])
    )
    columns = []
    for code in languages:
        own = [r for r in versions if r.language == code]
        current = next((r for r in own if r.is_current), None)
        columns.append(LanguageColumn(code, language_name(code), current, own))
    final_labels = item.final_labels.select_related(
        "dimension", "label", "decided_by"
    ).order_by("dimension__position", "dimension__code")
    events = [
        EventRow(event, event_changes(event.before, event.after))
        for event in item.events.select_related("user")
    ]
    return {
        "benchmark": benchmark,
        "item": item,
        "columns": columns,
        "final_labels": final_labels,
        "events": events,
    }
