"""How fast a run goes and when it should end, worked out the same way for every run
kind from the counters its workers write (labelling counts calls, evaluation items).
"""

from __future__ import annotations

from django.utils import timezone

from judging.runs.models import Run


def run_timing(
    run: Run, *, remaining: int, finished: int, calls_made: int, now=None
) -> dict:
    """Elapsed seconds, calls per second and the ETA of `run`.

    `finished` counts the units (calls or items) the run's own calls have finished,
    not those served from the record: the ETA extrapolates their pace over the
    `remaining` units. An ended run has no ETA.
    """
    now = now or timezone.now()
    elapsed = 0.0
    if run.started_at:
        elapsed = max((_end(run, now) - run.started_at).total_seconds(), 0.0)
    eta = None
    if run.is_active and finished and elapsed > 0:
        eta = remaining * elapsed / finished
    return {
        "elapsed_seconds": round(elapsed, 1),
        "calls_per_second": round(calls_made / elapsed, 2) if elapsed > 0 else 0.0,
        "eta_seconds": round(eta) if eta is not None else None,
    }


def _end(run: Run, now):
    if run.finished_at:
        return run.finished_at
    if run.is_active:
        return now
    # Ended without a finish time (an evaluation run needing attention is finished
    # only once its pending items are resolved): its workers stopped writing then.
    return run.heartbeat_at or run.started_at
