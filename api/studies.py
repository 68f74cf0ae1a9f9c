"""Studies over finished runs: saved item subsets (list, derive and save one, as
the subsets page) and the robustness report's tables (as its page and CSVs).
Managers only, as those pages."""

from datetime import datetime
from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status

from api.schemas import Cell, InSchema, answers
from benchmark.models import Benchmark, ItemSubset
from benchmark.roles import Role, role_required
from judging.evaluation.actions import (
    EvaluationActionError,
    default_solved_at,
    do_derive_subset,
)
from judging.evaluation.scores import benchmark_runs
from judging.robustness import report as robustness

router = Router(tags=["subsets and robustness"])


class SubsetOut(Schema):
    id: int
    name: str
    rule: str
    description: str
    item_ids: list[int] = Field(description="Sorted item ids")
    derived_from: dict[str, Any] = Field(
        description="The runs (ids and labels) and solved threshold it came from"
    )
    created_by: str | None
    created_at: datetime

    @staticmethod
    def resolve_created_by(subset):
        return subset.created_by.get_username() if subset.created_by else None


class SubsetIn(InSchema):
    name: str = Field(description="Letters, digits and -, unique in the benchmark")
    rule: str = Field(description="A rule of the subsets page, e.g. solved-by-some")
    runs: list[int] = Field(description="Evaluation run ids: at least two")
    solved_at: int | None = Field(
        None,
        description=(
            "The final score that counts as solved; when not given, 1 (correct) "
            "on a binary benchmark and 3 on the 0–3 rubric"
        ),
    )


@router.get("/benchmarks/{slug}/subsets", response=answers({200: list[SubsetOut]}, 404))
@role_required(Role.MANAGER)
def list_subsets(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return benchmark.subsets.select_related("created_by")


@router.post(
    "/benchmarks/{slug}/subsets",
    response=answers({201: SubsetOut}, 400, 404, 422),
)
@role_required(Role.MANAGER)
def derive_subset(request, slug: str, call: SubsetIn):
    """Derive a subset by a rule over runs and save it, as the subsets page's
    confirm; a refusal is a 422 with the action's message."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    offered = {run.pk: run for run in benchmark_runs(benchmark)}
    unknown = [pk for pk in call.runs if pk not in offered]
    if unknown:
        return Status(422, {"detail": f"No finished run {unknown[0]} here."})
    try:
        subset = do_derive_subset(
            benchmark,
            name=call.name,
            rule=call.rule,
            runs=[offered[pk] for pk in call.runs],
            solved_at=(
                default_solved_at(benchmark)
                if call.solved_at is None
                else call.solved_at
            ),
            user=request.user,
        )
    except EvaluationActionError as error:
        return Status(422, {"detail": str(error)})
    return Status(
        201, ItemSubset.objects.select_related("created_by").get(pk=subset.pk)
    )


class TableOut(Schema):
    slug: str
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    notes: list[str]


class RobustnessOut(Schema):
    language: str = Field(description="The language the reported runs were asked in")
    runs: list[str] = Field(description="The reported runs' labels, in table order")
    seeds: int
    variants: int
    missing: int = Field(description="Variant answers the runs have not given")
    tables: dict[str, TableOut] = Field(description="Keyed by the table's CSV name")


@router.get(
    "/benchmarks/{slug}/robustness", response=answers({200: RobustnessOut}, 404, 422)
)
@role_required(Role.MANAGER)
def robustness_report(request, slug: str, language: str | None = None):
    """The robustness report (correct / incorrect robustness per model, relation
    and sector) of the runs asked in `language` (default: the benchmark's source
    language), from the cache its page fills."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    language = language or benchmark.source_language
    if language not in benchmark.languages:
        raise Http404(f"{benchmark.name} has no such language.")
    built = robustness.cached_build(benchmark, language)
    return {
        "language": built.language,
        "runs": built.labels,
        "seeds": built.seeds,
        "variants": built.variants,
        "missing": built.missing,
        "tables": {name: table.as_dict() for name, table in built.tables.items()},
    }
