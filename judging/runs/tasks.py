"""The stalled-run sweep, for every run kind."""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.core.cache import cache

from judging.runs import lifecycle

logger = logging.getLogger(__name__)


NEXT_SWEEP_LOCK = "judging:runs:next-sweep"


@shared_task(name="judging.tasks.resume_stalled_runs")
def resume_stalled_runs() -> None:
    for kind in lifecycle.KINDS:
        resumed = lifecycle.resume_stalled(kind)
        if resumed:
            logger.info("Resumed stalled %s runs %s", kind.name, resumed)
    # Sweep again in RUN_SWEEP_SECONDS. Every starting worker begins a chain of
    # sweeps; the lock, held for half a period, lets only one of them go on once two
    # sweep within that half.
    period = settings.RUN_SWEEP_SECONDS
    if cache.add(NEXT_SWEEP_LOCK, True, timeout=max(period // 2, 1)):
        resume_stalled_runs.apply_async(countdown=period)


@worker_ready.connect
def resume_runs_when_a_worker_starts(sender=None, **kwargs):
    # A worker killed mid-run leaves its chunk unacknowledged in the broker for the
    # broker's visibility timeout (an hour on Redis). A starting worker therefore
    # looks for runs nobody has written to for LABELLING_STALE_SECONDS and resumes
    # them; the check waits that long so live workers elsewhere can prove they live.
    resume_stalled_runs.apply_async(countdown=settings.LABELLING_STALE_SECONDS)
