"""Translation runs, worker side: the run's tasks, the chunks they are cut into, the
translator and reviewer calls, and routing each rendering to approval or review.

Flow: `judging.translation.actions.do_start_translation` creates the run and queues
`tasks.start_translation_run` → `start_run` creates one TranslationTask per item ×
target language — pending only where something is missing (`translation_need`: no
rendering, or options / key points it lacks; machine work again only when the run
overwrites it; a person's work never) — and queues its chunk tasks → each
`translate_chunk` sends its pending tasks to the translator through the gateway
(`save_translations` adds a machine rendering version per reply), then sends the
translated ones to the reviewer (`save_reviews` runs the preservation check,
stores a FaithfulnessReview and approves or flags the rendering) → the chunk that
finishes the last task marks the run complete.

Every step is idempotent: task rows are unique per run × item × language and only
move forward under a row lock, the gateway serves recorded calls, and reviews are
unique per rendering × run. A killed worker's chunk is simply queued again.
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from functools import partial

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from assay.celery import enqueue
from benchmark.actions import do_add_rendering_version, do_set_rendering_review_status
from benchmark.models import ItemEvent, Rendering
from benchmark.taxonomy import english_language_name
from judging.llm.gateway import GatewayStats, LLMRequest, run_requests
from judging.llm.models import LLMCall
from judging.llm.outputs import score_validator, translation_validator
from judging.runs import lifecycle
from judging.runs.items import filtered_items
from judging.runs.usage import usage_of
from judging.translation.models import (
    FaithfulnessReview,
    TranslationRun,
    TranslationTask,
)
from judging.translation.parts import review_variables, translation_variables
from judging.translation.rendering_check import check_rendering

CHUNK_TASKS = 100
# Queued by name: the annotation app depends on this one, never the reverse.
OPEN_REVIEW_TASK = "annotation.tasks.open_translation_review"


def route(
    score: int | None, preservation_passed: bool, threshold: int
) -> tuple[bool, bool]:
    """(flagged_by_score, flagged_by_preservation) for one reviewed rendering.

    A missing score (the reviewer's reply was unparseable or the call failed) is
    flagged by score: it is never taken for a pass.
    """
    return score is None or score < threshold, not preservation_passed


HUMAN_ORIGINS = (
    Rendering.Origin.HUMAN_EDITED,
    Rendering.Origin.IMPORTED,
    Rendering.Origin.SOURCE,
)


class Need(StrEnum):
    """What a run does for one item × language."""

    WHOLE = "whole"  # no usable rendering (none, empty, rejected), or overwritten
    PARTS = "parts"  # only the options and/or key points it lacks
    HUMAN = "human"  # a person's work with every part: kept
    PRESENT = "present"  # a machine translation with every part: kept


def approved_by_a_person(renderings) -> set[int]:
    """The renderings (of those given) a person approved: a review event with a
    user that set exactly that version approved. Automatic approvals have none."""
    by_version = {
        (rendering.item_id, f"{rendering.language} v{rendering.version}"): rendering.pk
        for rendering in renderings
    }
    if not by_version:
        return set()
    events = ItemEvent.objects.filter(
        item_id__in={item_id for item_id, _ in by_version},
        kind="review",
        user__isnull=False,
        after__review_status=Rendering.ReviewStatus.APPROVED,
    ).values_list("item_id", "summary")
    return {
        by_version[item_id, summary.split(":", 1)[0]]
        for item_id, summary in events
        if (item_id, summary.split(":", 1)[0]) in by_version
    }


def missing_parts(current: Rendering, source: Rendering | None) -> list[str]:
    """The part lists ("options", "key_points") the source has and the rendering
    lacks altogether."""
    if source is None:
        return []
    return [
        name
        for name in ("options", "key_points")
        if getattr(source, name) and not getattr(current, name)
    ]


def translation_need(
    current: Rendering | None,
    source: Rendering | None,
    *,
    overwrite_machine: bool,
    by_a_person: bool,
) -> Need:
    """A run fills only what is missing: a rendering where there is none (or it was
    rejected), the options and key points a rendering lacks; with
    `overwrite_machine` it translates machine work again. A person's work — edited,
    imported, or approved by a person — is never overwritten, only completed."""
    if (
        current is None
        or current.review_status == Rendering.ReviewStatus.REJECTED
        or not current.question.strip()
    ):
        return Need.WHOLE
    human = current.origin in HUMAN_ORIGINS or by_a_person
    if overwrite_machine and not human:
        return Need.WHOLE
    if missing_parts(current, source):
        return Need.PARTS
    return Need.HUMAN if human else Need.PRESENT


def needs(run: TranslationRun, item_ids, languages) -> dict[tuple[int, str], Need]:
    """The need of each item × language of `languages`, from what is stored now."""
    current = current_renderings(item_ids, languages)
    sources = current_renderings(item_ids, [run.benchmark.source_language])
    by_a_person = approved_by_a_person(current.values())
    return {
        (item_id, language): translation_need(
            current.get((item_id, language)),
            sources.get((item_id, run.benchmark.source_language)),
            overwrite_machine=run.overwrite_machine,
            by_a_person=getattr(current.get((item_id, language)), "pk", None)
            in by_a_person,
        )
        for item_id in item_ids
        for language in languages
    }


def select_items(run: TranslationRun):
    """The run's items that match its `item_filter` and have a current
    source-language text (judging.runs.items)."""
    return filtered_items(
        run.benchmark_id, run.item_filter or {}, language=run.benchmark.source_language
    )


def run_scope(run: TranslationRun) -> str | None:
    return f"translation-run-{run.pk}" if run.refresh else None


def current_renderings(item_ids, languages) -> dict[tuple[int, str], Rendering]:
    return {
        (rendering.item_id, rendering.language): rendering
        for rendering in Rendering.objects.filter(
            item_id__in=item_ids, language__in=languages, is_current=True
        )
    }


def start_run(run_id: int) -> int:
    """Create the run's tasks, mark it running and queue its chunks."""
    return lifecycle.start(TRANSLATION, run_id)


NEED_STAGE = {
    Need.WHOLE: TranslationTask.Stage.PENDING,
    Need.PARTS: TranslationTask.Stage.PENDING,
    Need.HUMAN: TranslationTask.Stage.KEPT,
    Need.PRESENT: TranslationTask.Stage.PRESENT,
}


def _create_tasks(run: TranslationRun) -> None:
    """One task per item × target language: pending where something is missing,
    `kept` where a person's work is whole, `present` where a machine's is."""
    item_ids = list(select_items(run).values_list("pk", flat=True))
    tasks = [
        TranslationTask(
            run=run, item_id=item_id, language=language, stage=NEED_STAGE[need]
        )
        for (item_id, language), need in needs(run, item_ids, run.languages).items()
    ]
    TranslationTask.objects.bulk_create(tasks, ignore_conflicts=True)
    run.total_tasks = len(tasks)
    run.kept_reviewed = sum(task.stage == TranslationTask.Stage.KEPT for task in tasks)
    run.already_present = sum(
        task.stage == TranslationTask.Stage.PRESENT for task in tasks
    )
    run.save(update_fields=["total_tasks", "kept_reviewed", "already_present"])


OPEN_STAGES = (TranslationTask.Stage.PENDING, TranslationTask.Stage.TRANSLATED)


def open_chunks(run: TranslationRun) -> list[tuple[int, list[int]]]:
    """`translate_chunk` arguments for the run's open tasks, CHUNK_TASKS at a time."""
    task_ids = list(
        run.tasks.filter(stage__in=OPEN_STAGES)
        .order_by("item_id", "language")
        .values_list("pk", flat=True)
    )
    return [
        (run.pk, task_ids[start : start + CHUNK_TASKS])
        for start in range(0, len(task_ids), CHUNK_TASKS)
    ]


def translate_chunk(run_id: int, task_ids: list[int]) -> list[GatewayStats]:
    """Translate the chunk's pending tasks, then review its translated ones."""
    run = TranslationRun.objects.select_related(
        "benchmark",
        "translator",
        "translation_template",
        "reviewer",
        "review_template",
    ).get(pk=run_id)
    if run.status != TranslationRun.Status.RUNNING:
        return []
    stats = []
    source_language = run.benchmark.source_language
    tasks = list(TranslationTask.objects.filter(pk__in=task_ids, stage__in=OPEN_STAGES))
    sources = current_renderings({task.item_id for task in tasks}, [source_language])
    to_translate = [
        task
        for task in tasks
        if task.stage == TranslationTask.Stage.PENDING
        and (task.item_id, source_language) in sources
    ]
    fail_without_source(
        run.pk,
        [task.pk for task in tasks if (task.item_id, source_language) not in sources],
    )
    if to_translate:
        stats.append(
            run_requests(
                [
                    LLMRequest(
                        key=task.pk,
                        endpoint=run.translator,
                        template=run.translation_template,
                        variables=translation_request_variables(
                            sources[task.item_id, source_language], task.language
                        ),
                        validate=_translation_validator(
                            sources[task.item_id, source_language]
                        ),
                    )
                    for task in to_translate
                ],
                scope=run_scope(run),
                on_results=partial(save_translations, run.pk),
                should_stop=lambda: not lifecycle.keep_alive(TranslationRun, run.pk),
            )
        )
    translated = list(
        TranslationTask.objects.filter(
            pk__in=task_ids, stage=TranslationTask.Stage.TRANSLATED
        ).select_related("rendering")
    )
    if translated and lifecycle.is_running(TranslationRun, run.pk):
        stats.append(
            run_requests(
                [
                    LLMRequest(
                        key=task.pk,
                        endpoint=run.reviewer,
                        template=run.review_template,
                        variables={
                            "source_language": english_language_name(source_language),
                            "target_language": english_language_name(task.language),
                            "source_question": sources[
                                task.item_id, source_language
                            ].question,
                            "source_answer": sources[
                                task.item_id, source_language
                            ].answer,
                            "translated_question": task.rendering.question,
                            "translated_answer": task.rendering.answer,
                            **review_variables(
                                sources[task.item_id, source_language], task.rendering
                            ),
                        },
                        validate=score_validator(1, 5),
                    )
                    for task in translated
                    if (task.item_id, source_language) in sources
                ],
                scope=run_scope(run),
                on_results=partial(save_reviews, run.pk),
                should_stop=lambda: not lifecycle.keep_alive(TranslationRun, run.pk),
            )
        )
    lifecycle.finish(TRANSLATION, run.pk)
    return stats


def translation_request_variables(source: Rendering, target_language: str) -> dict:
    """What a translation prompt is filled with: the source rendering's question and
    answer, and its options and key points with the reply format naming each."""
    return {
        "source_language": english_language_name(source.language),
        "target_language": english_language_name(target_language),
        "question": source.question,
        "answer": source.answer,
        **translation_variables(source),
    }


def _translation_validator(source: Rendering):
    return translation_validator(
        len(source.options or []),
        len(source.key_points or []),
        answer_required=bool(source.answer.strip()),
    )


def fail_without_source(run_id: int, task_ids: list[int]) -> None:
    """Tasks whose item lost its source text since the run started end as failed
    instead of staying open forever."""
    if not task_ids:
        return
    with transaction.atomic():
        failed = TranslationTask.objects.filter(
            pk__in=task_ids, stage__in=OPEN_STAGES
        ).update(stage=TranslationTask.Stage.FAILED, error="No current source text.")
        TranslationRun.objects.filter(pk=run_id).update(failed=F("failed") + failed)


def _count_tokens(run_id: int, outcomes, delta: Counter) -> None:
    TranslationRun.objects.filter(pk=run_id).update(
        **{name: F(name) + change for name, change in delta.items() if change},
        **usage_of(outcomes).updates(),
        heartbeat_at=timezone.now(),
    )


def save_translations(run_id: int, outcomes) -> None:
    """Add a machine rendering version per translated task (inside the gateway's
    transaction). Tasks lock their rows and move only from pending, so a result
    recorded twice is written once."""
    run = TranslationRun.objects.select_for_update().get(pk=run_id)
    tasks = {
        task.pk: task
        for task in TranslationTask.objects.select_for_update(of=("self",))
        .select_related("item")
        .filter(
            pk__in=[outcome.key for outcome in outcomes],
            stage=TranslationTask.Stage.PENDING,
        )
    }
    item_ids = {task.item_id for task in tasks.values()}
    languages = {task.language for task in tasks.values()}
    # Decided again from what is stored now: a reviewer may have finished a
    # rendering while the call was in flight.
    need = needs(run, item_ids, languages)
    current = current_renderings(item_ids, languages)
    delta: Counter[str] = Counter()
    for outcome in outcomes:
        task = tasks.get(outcome.key)
        if task is None:
            continue
        call = outcome.call
        task.translation_call = call
        task_need = need[task.item_id, task.language]
        if task_need in (Need.HUMAN, Need.PRESENT):
            task.stage = NEED_STAGE[task_need]
            delta[
                "kept_reviewed" if task_need == Need.HUMAN else "already_present"
            ] += 1
        elif call.status == LLMCall.Status.OK:
            task.rendering = _save_translation(
                task,
                call.parsed_output,
                current.get((task.item_id, task.language))
                if task_need == Need.PARTS
                else None,
                note=f"Translation run {run_id} ({run.translator})",
            )
            task.stage = TranslationTask.Stage.TRANSLATED
            delta["translated"] += 1
        else:
            task.stage = (
                TranslationTask.Stage.UNPARSEABLE
                if call.status == LLMCall.Status.UNPARSEABLE
                else TranslationTask.Stage.FAILED
            )
            task.error = call.error
            delta[task.stage] += 1
        task.save(update_fields=["stage", "rendering", "translation_call", "error"])
    _count_tokens(run_id, outcomes, delta)


def _save_translation(
    task: TranslationTask, reply: dict, completed: Rendering | None, *, note: str
) -> Rendering:
    """A new version from the translator's reply: the whole reply, or — to complete
    `completed` — only the part lists it lacks, its own text kept as it is (its
    origin too: a person's question stays a person's). Pending review either way."""
    if completed is None:
        return do_add_rendering_version(
            task.item,
            task.language,
            question=reply["question"],
            answer=reply["answer"],
            # Absent for an item without them: the previous version's stay.
            options=reply.get("options"),
            key_points=reply.get("key_points"),
            origin=Rendering.Origin.MACHINE,
            review_status=Rendering.ReviewStatus.PENDING,
            note=note,
        )
    # The reply carries a part list exactly when the source has one.
    filled = [
        name
        for name in ("options", "key_points")
        if reply.get(name) and not getattr(completed, name)
    ]
    return do_add_rendering_version(
        task.item,
        task.language,
        question=completed.question,
        answer=completed.answer,
        options=reply.get("options") if "options" in filled else None,
        key_points=reply.get("key_points") if "key_points" in filled else None,
        origin=completed.origin,
        review_status=Rendering.ReviewStatus.PENDING,
        note=f"{note}: translated its {' and '.join(filled).replace('_', ' ')}",
    )


def preservation_of(rendering: Rendering, source: Rendering):
    return check_rendering(
        source.question,
        source.answer,
        rendering.question,
        rendering.answer,
        source_language=source.language,
        target_language=rendering.language,
        source_options=source.options or [],
        target_options=rendering.options or [],
        source_key_points=source.key_points or [],
        target_key_points=rendering.key_points or [],
    )


def do_record_review(
    rendering: Rendering,
    source: Rendering,
    *,
    run: TranslationRun | None,
    reviewer_name: str,
    prompt_version: str,
    score: int | None,
    reason: str,
    status: str,
    threshold: int,
    call: LLMCall | None = None,
    note_prefix: str = "",
) -> FaithfulnessReview:
    """Store a faithfulness review with the rendering's preservation check and
    approve or flag the rendering. Used by runs and by the demo seeder."""
    check = preservation_of(rendering, source)
    by_score, by_preservation = route(score, check.passed, threshold)
    review, _ = FaithfulnessReview.objects.get_or_create(
        rendering=rendering,
        run=run,
        defaults={
            "reviewer_name": reviewer_name,
            "prompt_version": prompt_version,
            "score": score,
            "reason": reason,
            "status": status,
            "preservation": check.as_dict(),
            "preservation_passed": check.passed,
            "threshold": threshold,
            "flagged_by_score": by_score,
            "flagged_by_preservation": by_preservation,
            "call": call,
        },
    )
    reasons = []
    if by_score:
        reasons.append(
            f"faithfulness {score}/5 below {threshold}"
            if score is not None
            else f"no faithfulness score ({status})"
        )
    if by_preservation:
        reasons.append("preservation check: " + "; ".join(check.problems()))
    status = (
        Rendering.ReviewStatus.FLAGGED if reasons else Rendering.ReviewStatus.APPROVED
    )
    if rendering.review_status != status:
        do_set_rendering_review_status(
            rendering,
            status,
            note=note_prefix
            + (
                "; ".join(reasons)
                if reasons
                else f"auto-approved: faithfulness {score}/5"
            ),
        )
    return review


def save_reviews(run_id: int, outcomes) -> None:
    """Store the reviewer's scores and route each rendering (inside the gateway's
    transaction)."""
    run = (
        TranslationRun.objects.select_for_update(of=("self",))
        .select_related("benchmark", "reviewer", "review_template")
        .get(pk=run_id)
    )
    tasks = {
        task.pk: task
        for task in TranslationTask.objects.select_for_update(of=("self",))
        .select_related("rendering")
        .filter(
            pk__in=[outcome.key for outcome in outcomes],
            stage=TranslationTask.Stage.TRANSLATED,
        )
    }
    sources = current_renderings(
        {task.item_id for task in tasks.values()}, [run.benchmark.source_language]
    )
    delta: Counter[str] = Counter()
    for outcome in outcomes:
        task = tasks.get(outcome.key)
        if task is None:
            continue
        call = outcome.call
        ok = call.status == LLMCall.Status.OK
        review = do_record_review(
            task.rendering,
            sources[task.item_id, run.benchmark.source_language],
            run=run,
            reviewer_name=run.reviewer.name,
            prompt_version=str(run.review_template),
            score=call.parsed_output["score"] if ok else None,
            reason=call.parsed_output["reason"] if ok else call.error,
            status=(
                FaithfulnessReview.Status.DONE
                if ok
                else FaithfulnessReview.Status.UNPARSEABLE
                if call.status == LLMCall.Status.UNPARSEABLE
                else FaithfulnessReview.Status.FAILED
            ),
            threshold=run.approve_threshold,
            call=call,
        )
        task.stage = TranslationTask.Stage.REVIEWED
        task.outcome = (
            TranslationTask.Outcome.FLAGGED
            if review.is_flagged
            else TranslationTask.Outcome.AUTO_APPROVED
        )
        task.save(update_fields=["stage", "outcome"])
        delta["reviewed"] += 1
        delta[task.outcome] += 1
    _count_tokens(run_id, outcomes, delta)


def end_state(run: TranslationRun) -> str | None:
    """Ended once every task has ended — Complete, or Needs attention while
    translation calls failed (*Resume* makes them again)."""
    if run.tasks.filter(stage__in=OPEN_STAGES).exists():
        return None
    if run.failed:
        return TranslationRun.Status.ATTENTION
    return TranslationRun.Status.COMPLETE


def open_review(run: TranslationRun) -> None:
    """What the ended run flagged goes into a translation-review campaign, made by
    the annotation app."""
    if run.flagged and run.review_campaign_id is None:
        enqueue(OPEN_REVIEW_TASK, run.pk)


@transaction.atomic
def do_link_review_campaign(run_id: int, campaign_id: int) -> None:
    TranslationRun.objects.filter(pk=run_id).update(review_campaign_id=campaign_id)


def latest_review(rendering: Rendering) -> FaithfulnessReview | None:
    """The newest faithfulness review of exactly this rendering version."""
    return rendering.faithfulness_reviews.order_by("-created_at", "-id").first()


TRANSLATION = lifecycle.RunKind(
    name="translation",
    model=TranslationRun,
    start_task="judging.tasks.start_translation_run",
    chunk_task="judging.tasks.translate_chunk",
    prepare=_create_tasks,
    open_chunks=open_chunks,
    end_state=end_state,
    on_end=open_review,
    page="judging:translation_run",
    counts=lambda run: {
        "auto_approved": run.auto_approved,
        "flagged": run.flagged,
        "failed": run.failed,
    },
    sweepable=Q(origin=TranslationRun.Origin.PIPELINE),
)
