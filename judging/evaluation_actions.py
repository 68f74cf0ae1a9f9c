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
