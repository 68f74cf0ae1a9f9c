"""Which prompt asks each item of a run, whether it shows the options, and the
requests a run will send (the ORM side of judging.llm.answer_prompts).

Evaluation runs choose their answer prompts here when they start
(`choose_answer_prompts`), refuse a prompt that would hide a multiple-choice
item's options (`check_options_shown`), and the start page previews the first
request of each item format (`request_previews`).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.models import Benchmark, Item, Rendering
from judging.llm import answer_prompts
from judging.llm.models import PromptTemplate
from judging.llm.prompts import (
    default_template,
    newest_templates,
    placeholders,
    render_messages,
)


class OptionsNotShown(ValueError):
    """A run would ask multiple-choice items without their options."""


def format_answer_templates(language: str) -> dict[str, PromptTemplate]:
    """{answer kind: the newest version of its shipped prompt in `language`}."""
    names = answer_prompts.format_answer_names(language)
    newest = newest_templates(names.values())
    return {kind: newest[name] for kind, name in names.items()}


def choose_answer_prompts(benchmark, language: str, answer_template=None):
    """(the answer prompt, {answer kind: prompt}) a run asks with. No prompt
    chosen: on a binary benchmark each format is asked with its own shipped
    prompt in the run's language, open items with the default answer prompt."""
    binary = benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
    by_kind = (
        format_answer_templates(language) if binary and not answer_template else {}
    )
    return answer_template or default_template("answering"), by_kind


def check_options_shown(items, answer_template, answer_templates: dict) -> None:
    """Refuse a run that would ask multiple-choice items without their options:
    the item's answer prompt has no {{options}} and its question does not list
    them itself."""
    blind = [
        template
        for template in {
            answer_templates.get(kind, answer_template)
            for kind in (answer_prompts.MC_SINGLE, answer_prompts.MC_MULTIPLE)
        }
        if "options" not in placeholders(template.system_text + template.text)
    ]
    if not blind:
        return
    hidden = [
        external_id
        for external_id, multiple, question in Rendering.objects.filter(
            pk__in=[rendering_id for _, rendering_id in items],
            item__format=Item.Format.MULTIPLE_CHOICE,
        )
        .order_by("item__external_id")
        .values_list("item__external_id", "item__multiple_answers", "question")
        if answer_templates.get(
            answer_prompts.answer_kind(Item.Format.MULTIPLE_CHOICE, multiple),
            answer_template,
        )
        in blind
        and not answer_prompts.embeds_options(question)
    ]
    if hidden:
        shown = ", ".join(hidden[:5]) + (" …" if len(hidden) > 5 else "")
        names = ", ".join(str(template) for template in blind)
        raise OptionsNotShown(
            f"The tested model would not see the options of {len(hidden)} "
            f"multiple-choice item(s) ({shown}): {names} has no {{{{options}}}} "
            "and their questions do not list them. Choose the built-in answer "
            "prompts (one per item format) or a prompt that shows {{options}}."
        )


@dataclass
class RequestPreview:
    """The answer request of the first item of one format, as it will be sent."""

    kind: str  # e.g. "multiple choice"
    external_id: str
    template: str
    messages: list[dict]


def request_previews(asked, template, by_kind: dict) -> list[RequestPreview]:
    """The first item of each format, by external id, asked as the run will ask
    it (judging.evaluation.pipeline builds its requests from the same variables
    and prompts)."""
    first = {}
    for rendering in (
        Rendering.objects.filter(pk__in=[rendering_id for _, rendering_id in asked])
        .select_related("item")
        .order_by("item__external_id")
    ):
        item = rendering.item
        first.setdefault(
            answer_prompts.answer_kind(item.format, item.multiple_answers), rendering
        )
    previews = []
    for kind in answer_prompts.ANSWER_KINDS:
        rendering = first.get(kind)
        if rendering is None:
            continue
        item = rendering.item
        prompt = by_kind.get(kind, template)
        variables = answer_prompts.answer_variables(
            item_format=item.format,
            multiple_answers=item.multiple_answers,
            question=rendering.question,
            options=rendering.options,
            language=rendering.language,
        )
        previews.append(
            RequestPreview(
                answer_prompts.KIND_NAMES[kind],
                item.external_id,
                str(prompt),
                render_messages(prompt, variables),
            )
        )
    return previews


def format_prompt_rows(answer_templates: dict) -> list[tuple[str, str]]:
    """(item format, prompt version) of a run's per-format answer prompts."""
    by_pk = PromptTemplate.objects.in_bulk(list(answer_templates.values()))
    return [
        (answer_prompts.KIND_NAMES[kind], str(by_pk.get(answer_templates[kind], "—")))
        for kind in answer_prompts.ANSWER_KINDS
        if kind in answer_templates
    ]
