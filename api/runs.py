"""Evaluation runs: their status and counts, and cancelling one."""

from datetime import datetime
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status

from api.schemas import Detail
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from judging.evaluation.actions import do_cancel_evaluation
from judging.evaluation.models import EvaluationRun
from judging.evaluation.pipeline import run_progress

router = Router(tags=["evaluation runs"])


class ProgressOut(Schema):
    total: int
    finished: int
    scored: int
    pending: int
    open: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost: Decimal
    elapsed_seconds: float
    calls_per_second: float
    eta_seconds: int | None


class RunOut(Schema):
    id: int
    benchmark: str
    model_name: str
    model_category: str
    language: str
    thinking: bool
    origin: str
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    answered: int
    judged: int
    sv_checked: int
    progress: ProgressOut


@router.get("/benchmarks/{slug}/runs", response=list[RunOut])
@role_required(Role.MANAGER)
def list_runs(request, slug: str):
    """Every evaluation run of the benchmark, cancelled ones included."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    runs = benchmark.evaluation_runs.order_by(
        "model_name", "language", "thinking", "id"
    )
    return [_run(run, benchmark) for run in runs]


@router.get("/runs/{run_id}", response=RunOut)
@role_required(Role.MANAGER)
def get_run(request, run_id: int):
    run = get_object_or_404(
        EvaluationRun.objects.select_related("benchmark"), pk=run_id
    )
    return _run(run, run.benchmark)


@router.post("/runs/{run_id}/cancel", response={200: RunOut, 409: Detail})
@role_required(Role.MANAGER)
def cancel_run(request, run_id: int):
    """Stop the run within a second, keeping what it recorded (as its page's Cancel
    run); a run that has ended is a 409."""
    run = get_object_or_404(
        EvaluationRun.objects.select_related("benchmark"), pk=run_id
    )
    try:
        cancelled = do_cancel_evaluation(run)
    except ValidationError as error:
        return Status(409, {"detail": error.messages[0]})
    return Status(200, _run(cancelled, run.benchmark))


def _run(run: EvaluationRun, benchmark: Benchmark) -> dict:
    return {
        "id": run.pk,
        "benchmark": benchmark.slug,
        "model_name": run.model_name,
        "model_category": run.model_category,
        "language": run.language,
        "thinking": run.thinking,
        "origin": run.origin,
        "status": run.status,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "answered": run.answered_count,
        "judged": run.judged_count,
        "sv_checked": run.sv_checked_count,
        "progress": run_progress(run),
    }
