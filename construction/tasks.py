"""Construction stage tasks: thin wrappers around construction.pipeline;
idempotent."""

from celery import shared_task

from construction import pipeline
from judging.runs import lifecycle


@shared_task(name="construction.tasks.start_stage_run")
def start_stage_run(run_id: int) -> None:
    lifecycle.start(pipeline.STAGES, run_id)


@shared_task(name="construction.tasks.stage_chunk")
def stage_chunk(run_id: int, unit_ids: list[int]) -> None:
    pipeline.stage_chunk(run_id, unit_ids)
