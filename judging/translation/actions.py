"""State changes for translation runs: validate (`check_…`) and write (`do_…`).

Kept apart from judging/actions.py (endpoints, prompts, labelling) so each pipeline's
writes read as one unit.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from assay.celery import enqueue
from benchmark.models import Benchmark, Item
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import check_template
from judging.runs import lifecycle
from judging.runs.items import ITEM_FILTER_KEYS, filtered_items
from judging.translation.models import TranslationRun, TranslationTask
from judging.translation.pipeline import TRANSLATION

TRANSLATION_PLACEHOLDERS = {"question", "answer", "target_language"}
REVIEW_PLACEHOLDERS = {
    "source_question",
    "source_answer",
    "translated_question",
    "translated_answer",
}
# An item with options or key points is translated whole: the prompt must show
# them and ask for each (judging.translation.parts), the reviewer must see them.
PART_PLACEHOLDERS = {"options", "key_points", "reply_format"}
REVIEW_PART_PLACEHOLDERS = {"source_parts", "translated_parts"}
LANGUAGES = {"source_language", "target_language"}


def check_start_translation(
    benchmark: Benchmark,
    languages: list[str],
    translator: Endpoint,
    translation_template: PromptTemplate,
    reviewer: Endpoint,
    review_template: PromptTemplate,
    *,
    approve_threshold: int,
    item_filter: dict,
) -> None:
    if not languages:
        raise ValidationError(_("Choose at least one target language."))
    if len(set(languages)) != len(languages):
        raise ValidationError(_("Each target language may appear only once."))
    if benchmark.source_language in languages:
        raise ValidationError(
            _("%(source_language)s is the benchmark's source language.")
            % {"source_language": benchmark.source_language}
        )
    unknown = [code for code in languages if code not in benchmark.target_languages]
    if unknown:
        raise ValidationError(
            _("%(benchmark)s has no target language %(value)s (it has %(value2)s).")
            % {
                "benchmark": benchmark,
                "value": ", ".join(unknown),
                "value2": ", ".join(benchmark.target_languages) or "none",
            }
        )
    inactive = [e.name for e in (translator, reviewer) if not e.is_active]
    if inactive:
        raise ValidationError(
            _("Inactive endpoints: %(value)s.") % {"value": ", ".join(inactive)}
        )
    with_parts = _has_parts(benchmark, item_filter)
    check_template(
        translation_template,
        PromptTemplate.Purpose.TRANSLATION,
        needed=TRANSLATION_PLACEHOLDERS | (PART_PLACEHOLDERS if with_parts else set()),
        provided=TRANSLATION_PLACEHOLDERS | PART_PLACEHOLDERS | LANGUAGES,
    )
    check_template(
        review_template,
        PromptTemplate.Purpose.FAITHFULNESS_REVIEW,
        needed=REVIEW_PLACEHOLDERS
        | (REVIEW_PART_PLACEHOLDERS if with_parts else set()),
        provided=REVIEW_PLACEHOLDERS | REVIEW_PART_PLACEHOLDERS | LANGUAGES,
    )
    if not 1 <= approve_threshold <= 5:
        raise ValidationError(_("The auto-approve threshold is a score from 1 to 5."))
    unknown_keys = set(item_filter) - ITEM_FILTER_KEYS
    if unknown_keys:
        raise ValidationError(
            _("Unknown item filter keys: %(value)s.")
            % {"value": ", ".join(sorted(unknown_keys))}
        )
    if not benchmark.items.exists():
        raise ValidationError(
            _("%(benchmark)s has no items to translate.") % {"benchmark": benchmark}
        )


def _has_parts(benchmark: Benchmark, item_filter: dict) -> bool:
    """Do the items to translate include multiple-choice or short-answer ones?"""
    if set(item_filter) - ITEM_FILTER_KEYS:
        return False  # refused below, by name
    return (
        filtered_items(benchmark.pk, item_filter)
        .filter(format__in=[Item.Format.MULTIPLE_CHOICE, Item.Format.SHORT_ANSWER])
        .exists()
    )


@transaction.atomic
def do_start_translation(
    benchmark: Benchmark,
    languages: list[str],
    translator: Endpoint,
    translation_template: PromptTemplate,
    reviewer: Endpoint,
    review_template: PromptTemplate,
    *,
    approve_threshold: int = 5,
    item_filter: dict | None = None,
    overwrite_machine: bool = False,
    refresh: bool = False,
    user=None,
) -> TranslationRun:
    item_filter = item_filter or {}
    check_start_translation(
        benchmark,
        languages,
        translator,
        translation_template,
        reviewer,
        review_template,
        approve_threshold=approve_threshold,
        item_filter=item_filter,
    )
    run = TranslationRun.objects.create(
        benchmark=benchmark,
        languages=list(languages),
        translator=translator,
        translation_template=translation_template,
        reviewer=reviewer,
        review_template=review_template,
        approve_threshold=approve_threshold,
        item_filter=item_filter,
        overwrite_machine=overwrite_machine,
        refresh=refresh,
        created_by=user,
    )
    enqueue(TRANSLATION.start_task, run.pk)
    return run


def do_cancel_translation(run: TranslationRun) -> TranslationRun:
    """Stop a run: queued chunks do nothing and running ones stop within a second."""
    return lifecycle.cancel(run)


@transaction.atomic
def do_resume_translation(run: TranslationRun) -> TranslationRun:
    """Continue a cancelled or finished run: open tasks go on, and tasks whose
    translation call failed are tried again; finished renderings are kept."""
    run = TranslationRun.objects.select_for_update().get(pk=run.pk)
    lifecycle.check_resumable(run)
    retried = run.tasks.filter(stage=TranslationTask.Stage.FAILED).update(
        stage=TranslationTask.Stage.PENDING, error=""
    )
    run.failed -= retried
    run.save(update_fields=["failed"])
    lifecycle.resume(TRANSLATION, run)
    return run
