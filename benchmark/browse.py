"""Read side of the item browser: filters, facet counts, one page of items, item page.

Facet counts follow the usual faceted-search rule: each facet is counted with every
other active filter applied but not its own, so the counts say what choosing another
value would give. The label and item-field facets come from one aggregate query (item
counts per combination of values, `facet_groups`) folded in Python (`count_facets`);
languages, which an item has several of, take a second. A page costs a fixed number
of queries whatever the number of items, labels or filters.
"""

from dataclasses import dataclass, field

from django import forms
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    F,
    FilteredRelation,
    Func,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
)
from django.utils.translation import gettext_lazy as _

from benchmark.formats import LETTERS
from benchmark.models import (
    Benchmark,
    FinalLabel,
    Item,
    ItemEvent,
    LabelDimension,
    Rendering,
)
from benchmark.taxonomy import LANGUAGE_NAMES
from benchmark.textdiff import diff_segments

PAGE_SIZE = 50
# Filter value meaning "difficulty not set" / "no final label in this dimension"; the
# stored values are "" and a missing row, which a query string cannot select.
UNSET = "unset"
NO_LABEL = "none"
ITEM_FIELD_FACETS = ("difficulty", "source_kind", "status", "format")


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


class ItemFilterForm(forms.Form):
    """The browser's query string. Invalid values are reported and left out."""

    q = forms.CharField(required=False, max_length=200, strip=True, label=_("Search"))
    language = forms.ChoiceField(required=False, label=_("Language"))
    difficulty = forms.ChoiceField(
        required=False,
        label=_("Difficulty"),
        choices=[
            (UNSET if value == "" else value, label)
            for value, label in Item.Difficulty.choices
        ],
    )
    source_kind = forms.ChoiceField(
        required=False, choices=Item.SourceKind.choices, label=_("Source")
    )
    status = forms.ChoiceField(
        required=False, choices=Item.Status.choices, label=_("Status")
    )
    format = forms.ChoiceField(
        required=False, choices=Item.Format.choices, label=_("Format")
    )

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
                + [(NO_LABEL, _("No final label"))],
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
    # The item's format, difficulty, source kind and status in the reader's language.
    names: dict[str, str]


# The choices a row names, translated once per page: `get_FOO_display()` would hash
# every lazy label of the field for each row (one catalogue lookup each).
ROW_CHOICES = {
    "format": Item.Format,
    "difficulty": Item.Difficulty,
    "source_kind": Item.SourceKind,
    "status": Item.Status,
}


def choice_names() -> dict[str, dict[str, str]]:
    return {
        field: {value: str(label) for value, label in choices.choices}
        for field, choices in ROW_CHOICES.items()
    }


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


class EqualsAny(Func):
    """`expression = ANY(%s)`, the values passed as one array parameter (PostgreSQL).

    One parameter however many ids (a common word matches 20,000 items), where
    `pk__in` would build, send and parse a placeholder per id in every query;
    PostgreSQL hashes the array once per query.
    """

    output_field = BooleanField()

    def __init__(self, expression, values):
        super().__init__(expression)
        self.values = list(values)

    def as_sql(self, compiler, connection, **extra_context):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"{sql} = ANY(%s)", (*params, self.values)


def search_condition(benchmark: Benchmark, text: str) -> Q:
    """Items whose current question or answer in any language, external id or source
    reference contains `text` (case-insensitive).

    Scanning the text is the expensive part of a page at 100k items (no index serves a
    substring search; docs/BENCHMARKS.md says why there is no trigram index), and a
    page runs three queries with the search. On PostgreSQL the matching ids are
    collected by one scan and passed to the others as an array, however many there
    are; elsewhere (SQLite, small benchmarks) each query evaluates the two
    uncorrelated subqueries once.
    """
    in_renderings = (
        Rendering.objects.filter(item__benchmark=benchmark, is_current=True)
        .filter(Q(question__icontains=text) | Q(answer__icontains=text))
        .values("item_id")
    )
    in_fields = (
        Item.objects.filter(benchmark=benchmark)
        .filter(Q(external_id__icontains=text) | Q(source_reference__icontains=text))
        .values("pk")
    )
    if connection.vendor != "postgresql":
        return Q(pk__in=in_renderings) | Q(pk__in=in_fields)
    ids = [row["item_id"] for row in in_renderings.union(in_fields)]
    return Q(EqualsAny(F("pk"), ids))


def filter_items(
    benchmark: Benchmark,
    criteria: dict[str, str],
    dimensions: list[LabelDimension],
    search: Q | None,
    *,
    skip_language: bool = False,
) -> QuerySet:
    """Items of `benchmark` matching `search` and every criterion (but the language
    filter when `skip_language`)."""
    items = Item.objects.filter(benchmark=benchmark)
    if search is not None:
        items = items.filter(search)
    if "language" in criteria and not skip_language:
        items = items.filter(has_language(criteria["language"]))
    for name in ITEM_FIELD_FACETS:
        if name in criteria:
            value = "" if criteria[name] == UNSET else criteria[name]
            items = items.filter(**{name: value})
    for dimension in dimensions:
        if dimension.code not in criteria:
            continue
        value = criteria[dimension.code]
        labelled = FinalLabel.objects.filter(item=OuterRef("pk"), dimension=dimension)
        if value == NO_LABEL:
            items = items.filter(~Exists(labelled))
        else:
            items = items.filter(Exists(labelled.filter(label__code=value)))
    return items


def has_language(code: str) -> Exists:
    return Exists(
        Rendering.objects.filter(item=OuterRef("pk"), is_current=True, language=code)
    )


def facet_groups(
    benchmark: Benchmark,
    criteria: dict[str, str],
    dimensions: list[LabelDimension],
    search: Q | None,
) -> list[tuple[dict[str, str], int]]:
    """Item counts per combination of item-field and label values, in one query.

    The search and the language filter apply here; the item-field and label filters
    are applied afterwards by `count_facets`, which can then leave out each facet's
    own filter. Group values are keyed like the filters: item field names and
    dimension codes (label code or NO_LABEL).
    """
    items = Item.objects.filter(benchmark=benchmark)
    if search is not None:
        items = items.filter(search)
    if "language" in criteria:
        items = items.filter(has_language(criteria["language"]))
    columns = {name: name for name in ITEM_FIELD_FACETS}
    for index, dimension in enumerate(dimensions):
        # A left join restricted to this dimension: unlabelled items group as NULL.
        alias = f"final{index}"
        items = items.annotate(
            **{
                alias: FilteredRelation(
                    "final_labels", condition=Q(final_labels__dimension=dimension)
                )
            }
        )
        columns[dimension.code] = f"{alias}__label_id"
    rows = items.order_by().values_list(*columns.values()).annotate(n=Count("pk"))
    label_codes = {
        label.pk: label.code
        for dimension in dimensions
        for label in dimension.labels.all()
    }
    groups = []
    for *values, count in rows:
        group = dict(zip(columns, values, strict=True))
        for name in ITEM_FIELD_FACETS:
            group[name] = group[name] or UNSET
        for dimension in dimensions:
            label_id = group[dimension.code]
            group[dimension.code] = (
                NO_LABEL if label_id is None else label_codes[label_id]
            )
        groups.append((group, count))
    return groups


def count_facets(
    groups: list[tuple[dict[str, str], int]],
    criteria: dict[str, str],
    facet_names: list[str],
) -> tuple[dict[str, dict[str, int]], int]:
    """Per facet, item counts per value with every other facet filter applied; and
    the number of items matching all filters."""
    active = {name: criteria[name] for name in facet_names if name in criteria}

    def matches(group, skip: str) -> bool:
        return all(
            group[name] == value for name, value in active.items() if name != skip
        )

    counts: dict[str, dict[str, int]] = {name: {} for name in facet_names}
    total = 0
    for group, count in groups:
        if matches(group, skip=""):
            total += count
        for name in facet_names:
            if matches(group, skip=name):
                counts[name][group[name]] = counts[name].get(group[name], 0) + count
    return counts, total


def language_counts(benchmark, criteria, dimensions, search) -> dict[str, int]:
    """Items per language with every filter but the language one applied."""
    items = filter_items(benchmark, criteria, dimensions, search, skip_language=True)
    rows = (
        Rendering.objects.filter(is_current=True, item__in=items)
        .order_by()
        .values_list("language")
        .annotate(n=Count("pk"))
    )
    return dict(rows)


def browse_dimensions(benchmark: Benchmark) -> list[LabelDimension]:
    return list(benchmark.dimensions.prefetch_related("labels"))


def browse_items(
    benchmark: Benchmark, form: ItemFilterForm, page_number
) -> BrowseResult:
    form.is_valid()
    criteria = form.criteria()
    dimensions = form.dimensions
    search = search_condition(benchmark, criteria["q"]) if "q" in criteria else None
    shown_language = criteria.get("language", benchmark.source_language)
    items = filter_items(benchmark, criteria, dimensions, search).prefetch_related(
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
    facet_names = [*(dimension.code for dimension in dimensions), *ITEM_FIELD_FACETS]
    groups = facet_groups(benchmark, criteria, dimensions, search)
    counts, total = count_facets(groups, criteria, facet_names)
    counts["language"] = language_counts(benchmark, criteria, dimensions, search)
    paginator = Paginator(items.order_by("external_id"), PAGE_SIZE)
    # The facet groups already counted the matching items; reuse that figure instead
    # of another pass over the items.
    paginator.count = total
    page = paginator.get_page(page_number)
    names = choice_names()
    rows = [
        item_row(item, dimensions, shown_language, benchmark.languages, names)
        for item in page.object_list
    ]
    facets = [
        Facet(
            name,
            form.fields[name].label or name.replace("_", " ").capitalize(),
            criteria.get(name, ""),
            [
                FacetOption(value, str(label), counts[name].get(value, 0))
                for value, label in form.fields[name].choices
            ],
        )
        for name in ["language", *facet_names]
    ]
    return BrowseResult(page, rows, facets, dimensions, shown_language, criteria)


def item_row(
    item: Item, dimensions, shown_language: str, languages, names: dict
) -> ItemRow:
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
        names={
            field: names[field].get(getattr(item, field), getattr(item, field))
            for field in ROW_CHOICES
        },
    )


@dataclass
class Option:
    letter: str
    text: str
    correct: bool


@dataclass
class LanguageColumn:
    code: str
    name: str
    current: Rendering | None
    versions: list[Rendering]
    options: list[Option] = field(default_factory=list)


def lettered_options(options: list[str], correct: list[str]) -> list[Option]:
    """The options in their stored order, lettered A, B, … and marked correct from
    the item's answer key."""
    return [
        Option(letter, text, letter in correct)
        for letter, text in zip(LETTERS, options, strict=False)
    ]


@dataclass
class FieldChange:
    name: str
    title: str  # what the history shows for the field, in the reader's language
    before: object
    after: object
    # Text edited from one value to another: what changed, for <del>/<ins>.
    segments: list[tuple[str, str]] | None


@dataclass
class EventRow:
    event: ItemEvent
    changes: list[FieldChange]


# jsonb does not keep key order; history shows the fields in reading order.
CHANGE_ORDER = (
    "label",
    "provenance",
    "version",
    "review_status",
    "question",
    "answer",
    "options",
    "key_points",
)


# The fields' names as the history shows them (other keys show as stored).
CHANGE_TITLES = {
    "label": _("label"),
    "provenance": _("provenance"),
    "version": _("version"),
    "review_status": _("review status"),
    "question": _("question"),
    "answer": _("answer"),
    "options": _("options"),
    "key_points": _("key points"),
    "note": _("note"),
}


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


def field_changes(before: dict | None, after: dict | None) -> list[FieldChange]:
    """`event_changes` with what changed inside each text that was edited (both
    sides text; a value set for the first time, or a number, shows whole)."""
    return [
        FieldChange(
            name,
            CHANGE_TITLES.get(name, name),
            old,
            new,
            diff_segments(old, new)
            if isinstance(old, str) and isinstance(new, str)
            else None,
        )
        for name, old, new in event_changes(before, after)
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
        options = (
            lettered_options(current.options, item.correct_options) if current else []
        )
        columns.append(LanguageColumn(code, language_name(code), current, own, options))
    final_labels = item.final_labels.select_related(
        "dimension", "label", "decided_by"
    ).order_by("dimension__position", "dimension__code")
    events = [
        EventRow(event, field_changes(event.before, event.after))
        for event in item.events.select_related("user")
    ]
    return {
        "benchmark": benchmark,
        "item": item,
        # The answer key says what is right; a reference answer is optional.
        "answer_optional": item.format
        in (Item.Format.MULTIPLE_CHOICE, Item.Format.TRUE_FALSE),
        "columns": columns,
        "final_labels": final_labels,
        "events": events,
    }
