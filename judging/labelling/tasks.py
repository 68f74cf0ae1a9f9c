"""Labelling-run tasks: thin wrappers around judging.labelling.runs; idempotent."""

from celery import shared_task

from judging.labelling import runs
from judging.labelling.actions import do_apply_consensus
from judging.labelling.models import LabellingRun


@shared_task(name="judging.tasks.start_labelling_run")
def start_labelling_run(run_id: int) -> None:
    runs.start_run(run_id)


@shared_task(name="judging.tasks.label_chunk")
def label_chunk(run_id: int, item_ids: list[int]) -> None:
    runs.label_chunk(run_id, item_ids)


@shared_task(name="judging.tasks.apply_consensus")
def apply_consensus(run_id: int) -> None:
    run = LabellingRun.objects.filter(pk=run_id).first()
    if run is not None and run.status in LabellingRun.ENDED_WITH_RESULTS:
        do_apply_consensus(run)
