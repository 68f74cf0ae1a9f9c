"""From seed items in the database to variant specs (the ORM side of
judging/evaluation/relations.py; benchmark.actions.do_create_variants writes them).

Seeds are a benchmark's active MC and TF items that are not variants themselves,
read in the benchmark's source language. A seed's sector is read from the field a
manager names: the item's domain, or the final label of a taxonomy dimension.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.utils.translation import gettext_noop

from benchmark import formats
from benchmark.actions import VariantSpec
from benchmark.models import Benchmark, FinalLabel, Item, Rendering
from judging.llm import answer_prompts
from judging.robustness import relations
from judging.robustness.models import Resource
from judging.robustness.relations import NotApplicable
from judging.robustness.resources import Entry, resources_for

SEED_FORMATS = (formats.MULTIPLE_CHOICE, formats.TRUE_FALSE)
DOMAIN = "domain"
RELATION_NAMES = tuple(relations.RELATIONS)
DETERMINISTIC = tuple(n for n, r in relations.RELATIONS.items() if not r.llm_written)
LLM_WRITTEN = tuple(n for n, r in relations.RELATIONS.items() if r.llm_written)
_RELATION_FORMAT = {
    formats.MULTIPLE_CHOICE: relations.MC,
    formats.TRUE_FALSE: relations.TF,
}


def applicable_formats(relation: str, item_formats: Iterable[str]) -> list[str]:
    """The item formats among `item_formats` that `relation` applies to."""
    allowed = relations.RELATIONS[relation].formats
    return [f for f in item_formats if _RELATION_FORMAT.get(f) in allowed]


@dataclass(frozen=True)
class Seed:
    item: Item
    rendering: Rendering
    sector: str

    def as_relation_item(self, sector_name: str) -> relations.Item:
        item, rendering = self.item, self.rendering
        if item.format == formats.TRUE_FALSE:
            answer = bool(item.correct_answer)
        else:
            answer = frozenset(formats.LETTERS.index(c) for c in item.correct_options)
        return relations.Item(
            text=rendering.question,
            options=tuple(rendering.options),
            answer=answer,
            language=rendering.language,
            sector=sector_name,
        )


def sector_fields(benchmark: Benchmark) -> list[tuple[str, str]]:
    """(value, label) of the fields a sector can be read from."""
    dimensions = [(d.code, f"Label: {d.name}") for d in benchmark.dimensions.all()]
    return [*dimensions, (DOMAIN, "Item domain")]


def seeds(
    benchmark: Benchmark,
    item_formats: Sequence[str],
    sector_field: str,
    *,
    item_ids: Iterable[int] | None = None,
) -> list[Seed]:
    items = Item.objects.filter(
        benchmark=benchmark,
        format__in=[f for f in item_formats if f in SEED_FORMATS],
        status=Item.Status.ACTIVE,
        variant_of__isnull=True,
    ).order_by("id")
    if item_ids is not None:
        items = items.filter(pk__in=list(item_ids))
    items = list(items)
    renderings = {
        r.item_id: r
        for r in Rendering.objects.filter(
            item__in=items, language=benchmark.source_language, is_current=True
        )
    }
    if sector_field == DOMAIN:
        sectors = {item.pk: item.domain for item in items}
    else:
        sectors = dict(
            FinalLabel.objects.filter(
                item__in=items,
                dimension__benchmark=benchmark,
                dimension__code=sector_field,
            ).values_list("item_id", "label__name")
        )
    return [
        Seed(item, renderings[item.pk], sectors.get(item.pk, ""))
        for item in items
        if item.pk in renderings
    ]


def stored_entries(benchmark: Benchmark) -> list[Entry]:
    return [
        Entry(kind, language, key, value)
        for kind, language, key, value in Resource.objects.filter(
            benchmark=benchmark
        ).values_list("kind", "language", "key", "value")
    ]


@dataclass(frozen=True)
class SamePrompt(NotApplicable):
    """A variant refused because the tested model would be sent its seed's prompt:
    asking it would measure nothing."""


def _asked(item: Item, question: str, options, language: str) -> dict:
    return answer_prompts.answer_variables(
        item_format=item.format,
        multiple_answers=item.multiple_answers,
        question=question,
        options=options,
        language=language,
    )


def same_prompt(seed: Seed, relation: str, variant) -> SamePrompt | None:
    """Why `variant` would be asked exactly as its seed is, or None: the answer
    prompt is rendered from the question and the options shown
    (judging.llm.answer_prompts), so equal variables mean equal bytes sent."""
    rendering = seed.rendering
    language = rendering.language
    seed_asked = _asked(seed.item, rendering.question, rendering.options, language)
    if seed_asked != _asked(seed.item, variant.text, variant.options, language):
        return None
    if tuple(variant.options) != tuple(rendering.options):
        return SamePrompt(
            relation,
            gettext_noop(
                "its prompt would be the seed's: the seed's question lists its options "
                "itself, so the variant's changed options would not be shown"
            ),
        )
    return SamePrompt(
        relation,
        gettext_noop(
            "its prompt would be the seed's: the relation changed nothing shown"
        ),
    )


def variant_spec(
    seed: Seed,
    relation: str,
    entries: list[Entry],
    *,
    llm_text: str = "",
    provenance: dict | None = None,
) -> VariantSpec | NotApplicable:
    """The variant of `seed` under `relation`, or why it does not apply."""
    resources, industry = resources_for(entries, seed.rendering.language, seed.sector)
    variant = relations.generate(
        relation, seed.as_relation_item(industry), resources, llm_text=llm_text
    )
    if isinstance(variant, NotApplicable):
        return variant
    if refused := same_prompt(seed, relation, variant):
        return refused
    if isinstance(variant.answer, bool):
        correct_options, correct_answer = [], variant.answer
        answer = "True" if variant.answer else "False"
    else:
        correct_options = [formats.LETTERS[i] for i in sorted(variant.answer)]
        correct_answer = None
        answer = ", ".join(correct_options)
    return VariantSpec(
        seed=seed.item,
        relation=relation,
        sector=seed.sector,
        language=seed.rendering.language,
        question=variant.text,
        answer=answer,
        options=list(variant.options),
        correct_options=correct_options,
        correct_answer=correct_answer,
        option_map=list(variant.option_map),
        provenance={
            "seed": seed.item.external_id,
            "relation": relation,
            **(provenance or {}),
        },
    )


def deterministic_specs(
    seeds_: Sequence[Seed], relation_names: Sequence[str], entries: list[Entry]
) -> tuple[list[VariantSpec], Counter, Counter]:
    """The specs of every applicable (seed, relation); how many did not apply per
    relation; and how many were refused because their prompt would be their
    seed's, per (relation, reason)."""
    specs, skipped, refused = [], Counter(), Counter()
    for seed in seeds_:
        for relation in relation_names:
            spec = variant_spec(seed, relation, entries)
            if isinstance(spec, SamePrompt):
                refused[(relation, spec.reason)] += 1
            elif isinstance(spec, NotApplicable):
                skipped[relation] += 1
            else:
                specs.append(spec)
    return specs, skipped, refused
