"""The stalled-run sweep repeats every RUN_SWEEP_SECONDS, as one chain however many
workers started one."""

from django.core.cache import cache

from judging.runs import tasks


def test_the_sweep_schedules_the_next_one_once_per_half_period(
    db, settings, monkeypatch
):
    settings.RUN_SWEEP_SECONDS = 60
    cache.delete(tasks.NEXT_SWEEP_LOCK)
    scheduled = []
    monkeypatch.setattr(
        tasks.resume_stalled_runs,
        "apply_async",
        lambda countdown: scheduled.append(countdown),
    )
    tasks.resume_stalled_runs()
    # A second chain (another worker started) sweeping within the half period ends.
    tasks.resume_stalled_runs()
    assert scheduled == [60]
    cache.delete(tasks.NEXT_SWEEP_LOCK)
    tasks.resume_stalled_runs()
    assert scheduled == [60, 60]
    cache.delete(tasks.NEXT_SWEEP_LOCK)
