"""State changes for evaluation runs: model categories, waivers, panel difficulty."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from benchmark.actions import do_set_item_difficulties
from benchmark.models import Item

from . import scoring
from .models import EvaluationRun, Response
from .reports import load_scores


class EvaluationActionError(ValueError):
    """A request that cannot be carried out; the message says why."""


@transaction.atomic
def do_set_model_category(benchmark, model_name: str, category: str) -> int:
    """Set the category (closed, open MoE, …) of every run of `model_name`."""
    category = category.strip()
    if len(category) > 100:
        raise EvaluationActionError("A category has at most 100 characters.")
    updated = EvaluationRun.objects.filter(
        benchmark=benchmark, model_name=model_name
    ).update(model_category=category)
    if not updated:
        raise EvaluationActionError(
            f"No run of model {model_name!r} in this benchmark."
        )
    return updated


def pending_responses(run: EvaluationRun):
    """Responses of `run` still missing a verdict its metrics need (not waived)."""
    matrix = load_scores([run])
    item_ids = matrix.item_ids[matrix.pending()[0]].tolist()
    return (
        run.responses.filter(item_id__in=item_ids)
        .select_related("item")
        .order_by("item__external_id")
    )


@transaction.atomic
def do_waive_pending(run: EvaluationRun, response_ids, *, user, note: str) -> int:
    """Waive pending items: they leave every metric and are reported as waived.

    Only pending responses can be waived, and only with a note saying why.
    """
    note = note.strip()
    if not note:
        raise EvaluationActionError("Say why the items are waived.")
    pending = set(pending_responses(run).values_list("pk", flat=True))
    wanted = {int(pk) for pk in response_ids}
    if not wanted:
        raise EvaluationActionError("Choose the pending items to waive.")
    if not wanted <= pending:
        raise EvaluationActionError("Only pending items can be waived.")
    waived = Response.objects.filter(pk__in=wanted).update(
        waived_at=timezone.now(), waived_by=user, waive_note=note[:500]
    )
    _complete_if_resolved(run)
    return waived


def _complete_if_resolved(run: EvaluationRun) -> None:
    if run.status != EvaluationRun.Status.RUNNING:
        return
    if not run.responses.filter(status=Response.Status.PENDING).exists() and not (
        load_scores([run]).pending().any()
    ):
        run.status = EvaluationRun.Status.COMPLETE
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])


def panel_difficulty(benchmark, runs: list[EvaluationRun]) -> dict[int, str]:
    """Item id -> easy/medium/hard from the panel's mean raw scores."""
    if not runs:
        raise EvaluationActionError("Choose at least one run for the panel.")
    if any(run.benchmark_id != benchmark.pk for run in runs):
        raise EvaluationActionError("Every panel run must belong to this benchmark.")
    matrix = load_scores(runs)
    keys = dict(
        Item.objects.filter(pk__in=matrix.item_ids.tolist()).values_list(
            "pk", "external_id"
        )
    )
    terciles, _ = scoring.difficulty_terciles(
        matrix.raw_scores(), [keys[int(pk)] for pk in matrix.item_ids]
    )
    return {
        int(pk): scoring.TERCILE_NAMES[code]
        for pk, code in zip(matrix.item_ids, terciles, strict=True)
        if code >= 0
    }


def do_write_panel_difficulty(benchmark, runs: list[EvaluationRun], *, user) -> int:
    """Write panel-derived terciles to the items, recording the panel as provenance."""
    difficulties = panel_difficulty(benchmark, runs)
    ids = ",".join(str(pk) for pk in sorted(run.pk for run in runs))
    provenance = f"panel terciles of mean raw score, runs {ids}"[:200]
    return do_set_item_difficulties(
        benchmark, difficulties, provenance=provenance, user=user
    )


def _evaluation_items(benchmark, language: str, limit: int | None):
    items = (
        Item.objects.filter(
            benchmark=benchmark,
            status=Item.Status.ACTIVE,
            renderings__language=language,
            renderings__is_current=True,
        )
        .order_by("external_id")
        .values_list("pk", "renderings__pk")
    )
    return list(items[:limit] if limit else items)


@transaction.atomic
def do_start_evaluation(
    benchmark,
    *,
    tested,
    judge,
    sv_judge,
    language: str,
    thinking: bool = False,
    answer_template=None,
    rubric_template=None,
    sv_template=None,
    limit: int | None = None,
    model_category: str = "",
    user=None,
    enqueue: bool = True,
) -> EvaluationRun:
    """Create a pipeline run with one pending response per item and queue it."""
    from .evaluation import prompt_version
    from .prompts import default_template

    if language not in benchmark.languages:
        raise EvaluationActionError(
            f"Language {language!r} is not one of this benchmark's languages "
            f"({', '.join(benchmark.languages)})."
        )
    items = _evaluation_items(benchmark, language, limit)
    if not items:
        raise EvaluationActionError(
            f"No active item has a current {language} rendering to ask."
        )
    answer_template = answer_template or default_template("answering")
    rubric_template = rubric_template or default_template("rubric_judging")
    sv_template = sv_template or default_template("safety_check")
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=tested.name,
        model_category=model_category,
        language=language,
        thinking=thinking,
        origin=EvaluationRun.Origin.PIPELINE,
        status=EvaluationRun.Status.PENDING,
        tested_endpoint=tested,
        answer_template=answer_template,
        judge_endpoint=judge,
        rubric_template=rubric_template,
        sv_endpoint=sv_judge,
        sv_template=sv_template,
        judge_name=judge.name,
        judge_prompt_version=prompt_version(rubric_template),
        sv_judge_name=sv_judge.name,
        sv_prompt_version=prompt_version(sv_template),
        item_filter={"limit": limit} if limit else {},
        total_items=len(items),
        created_by=user,
    )
    Response.objects.bulk_create(
        [
            Response(run=run, item_id=item_id, rendering_id=rendering_id)
            for item_id, rendering_id in items
        ],
        batch_size=2000,
    )
    if enqueue:
        _enqueue(run)
    return run


@transaction.atomic
def do_rejudge(
    run: EvaluationRun,
    *,
    judge=None,
    rubric_template=None,
    sv_judge=None,
    sv_template=None,
    enqueue: bool = True,
) -> EvaluationRun:
    """Score the run's stored answers with another judge or prompt version.

    The tested model is not asked again; earlier verdicts stay (several judges can
    score the same responses) and the run's metrics switch to the new judges.
    """
    from .evaluation import prompt_version

    if run.status == EvaluationRun.Status.CANCELLED:
        raise EvaluationActionError("A cancelled run cannot be re-judged.")
    if judge is not None or rubric_template is not None:
        run.judge_endpoint = judge or run.judge_endpoint
        run.rubric_template = rubric_template or run.rubric_template
        run.judge_name = run.judge_endpoint.name
        run.judge_prompt_version = prompt_version(run.rubric_template)
    if sv_judge is not None or sv_template is not None:
        run.sv_endpoint = sv_judge or run.sv_endpoint
        run.sv_template = sv_template or run.sv_template
        run.sv_judge_name = run.sv_endpoint.name
        run.sv_prompt_version = prompt_version(run.sv_template)
    run.status = EvaluationRun.Status.RUNNING
    run.finished_at = None
    run.save(
        update_fields=[
            "judge_endpoint",
            "rubric_template",
            "judge_name",
            "judge_prompt_version",
            "sv_endpoint",
            "sv_template",
            "sv_judge_name",
            "sv_prompt_version",
            "status",
            "finished_at",
        ]
    )
    if enqueue:
        _enqueue(run)
    return run


def _enqueue(run: EvaluationRun) -> None:
    from functools import partial

    from . import tasks

    transaction.on_commit(partial(tasks.evaluate_run.delay, run.pk))
