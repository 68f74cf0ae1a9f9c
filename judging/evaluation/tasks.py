"""Evaluation-run tasks: thin wrappers around judging.evaluation.pipeline."""

from celery import shared_task

from benchmark.models import Benchmark
from judging.evaluation import pipeline


@shared_task(name="judging.tasks.evaluate_run")
def evaluate_run(run_id: int) -> None:
    """Queue the run's chunks; each answers, judges and SV-checks what it lacks."""
    pipeline.start_run(run_id)


@shared_task(name="judging.tasks.evaluate_chunk")
def evaluate_chunk(chunk_id: int) -> None:
    pipeline.evaluate_chunk(chunk_id)


@shared_task(name="judging.tasks.warm_leaderboard")
def warm_leaderboard(benchmark_id: int, language: str) -> None:
    """Build a changed leaderboard into the cache before anyone asks for it."""
    # Imported here: the leaderboard needs scipy, and every process imports this
    # module at start-up (judging.apps) to register the tasks.
    from judging.evaluation import presenting

    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is not None:
        presenting.warm_leaderboard(benchmark, language)
