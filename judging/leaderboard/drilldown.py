"""A leaderboard heatmap cell's items and their responses."""

from __future__ import annotations

from benchmark.models import FinalLabel, Item, Label
from judging.evaluation.models import (
    EvaluationRun,
    Response,
)
from judging.evaluation.responses import response_details
from judging.evaluation.scores import benchmark_runs, load_scores
from judging.reporting import scoring


def cell_item_ids(benchmark, run: EvaluationRun, dimension: str, group: str):
    """Ids of the items in one heatmap cell (same grouping as build_report)."""
    run_items = Response.objects.filter(run=run).values("item_id")
    if dimension in {"capability", "industry"}:
        return FinalLabel.objects.filter(
            item_id__in=run_items, dimension__code=dimension, label__code=group
        ).values_list("item_id", flat=True)
    if dimension != "difficulty" or group not in scoring.TERCILE_NAMES:
        raise ValueError(f"Unknown slice {dimension}={group}.")
    stored = Item.objects.filter(benchmark=benchmark).exclude(difficulty="")
    if stored.exists():
        return stored.filter(difficulty=group, pk__in=run_items).values_list(
            "pk", flat=True
        )
    panel = [r for r in benchmark_runs(benchmark) if r.language == run.language]
    matrix = load_scores(panel)
    keys = dict(
        Item.objects.filter(pk__in=matrix.item_ids.tolist()).values_list(
            "pk", "external_id"
        )
    )
    terciles, _ = scoring.difficulty_terciles(
        matrix.raw_scores(), [keys[int(pk)] for pk in matrix.item_ids]
    )
    code = scoring.TERCILE_NAMES.index(group)
    return matrix.item_ids[terciles == code].tolist()


def cell_details(benchmark, run: EvaluationRun, dimension: str, group: str) -> dict:
    item_ids = cell_item_ids(benchmark, run, dimension, group)
    responses = (
        Response.objects.filter(run=run, item_id__in=item_ids)
        .select_related("run", "item", "rendering")
        .order_by("item__external_id")
    )
    details = response_details(responses)
    if dimension == "difficulty":
        group_name = group.capitalize()
    else:
        label = Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code=dimension, code=group
        ).first()
        group_name = label.name if label else group
    finals = [d.final for d in details if d.final is not None]
    return {
        "dimension": dimension,
        "group": group,
        "group_name": group_name,
        "details": details,
        "scored": len(finals),
        "mean_final": sum(finals) / len(finals) if finals else None,
        "perfect": sum(1 for f in finals if f == scoring.PERFECT_SCORE),
    }
