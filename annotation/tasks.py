"""Annotation tasks: work other apps hand to the annotation app by task name."""

from celery import shared_task

from annotation.actions import do_open_translation_review


@shared_task(name="annotation.tasks.open_translation_review")
def open_translation_review(run_id: int) -> None:
    do_open_translation_review(run_id)
