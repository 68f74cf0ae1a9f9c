"""Evaluation-run tasks: thin wrappers around judging.evaluation.pipeline."""

from celery import shared_task

from judging.evaluation import pipeline


@shared_task(name="judging.tasks.evaluate_run")
def evaluate_run(run_id: int) -> None:
    """Queue the run's chunks; each answers, judges and SV-checks what it lacks."""
    pipeline.start_run(run_id)


@shared_task(name="judging.tasks.evaluate_chunk")
def evaluate_chunk(chunk_id: int) -> None:
    pipeline.evaluate_chunk(chunk_id)
