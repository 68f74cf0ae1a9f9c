"""Translation-run tasks: thin wrappers around judging.translation.pipeline."""

from celery import shared_task

from judging.translation import pipeline


@shared_task(name="judging.tasks.start_translation_run")
def start_translation_run(run_id: int) -> None:
    pipeline.start_run(run_id)


@shared_task(name="judging.tasks.translate_chunk")
def translate_chunk(run_id: int, task_ids: list[int]) -> None:
    pipeline.translate_chunk(run_id, task_ids)
