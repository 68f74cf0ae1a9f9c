"""One lifecycle for every LLM run kind (labelling, evaluation, translation).

    pending ──start──▶ running ──finish──▶ complete | needs attention
       │                 │  ▲
       └──cancel──▶ cancelled ──resume──┘

A run kind (`RunKind`) supplies only what differs: how a started run prepares its
work, how its open work is cut into chunk tasks, when its work is done (`end_state`)
and what follows its end (`on_end`). Everything
else is here, written once: starting under the run's row lock, queuing chunk tasks
after commit, the heartbeat that workers write while calls are in flight, cancel,
resume, the sweep that re-queues the open work of runs whose worker died, and the
webhook event of a run that ended (`announce_end`).

Chunk tasks are queued by their Celery task name (`assay.celery.enqueue`), so a domain's
`tasks` module imports its pipeline and never the reverse. Every step is
idempotent: a chunk asks only for what has no result yet and the gateway serves
calls already paid for, so a chunk queued twice costs a few queries, not calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from assay.celery import enqueue
from judging.runs.models import Run, RunStatus


@dataclass(frozen=True)
class RunKind:
    name: str
    model: type[Run]
    start_task: str
    chunk_task: str
    # Under the run's row lock, before it is marked running: count or create work.
    # A kind that lists its open work to count it may return that work's chunks
    # (what `open_chunks` would), so that a start lists it once.
    prepare: Callable[[Run], Sequence[tuple] | None]
    # The arguments of one chunk task per slice of the run's open work.
    open_chunks: Callable[[Run], Sequence[tuple]]
    # Under the running run's row lock: None while some of its work is open, else
    # the state it ends in (complete, or needs attention while work has no result).
    # It may write the kind's final counters on the run; `finish` saves the state.
    end_state: Callable[[Run], str | None]
    # The run page's URL name (it takes the run's pk) and the counts an ended run's
    # webhook event carries.
    page: str
    counts: Callable[[Run], dict]
    # May `start` act on this locked run? A redelivered start must queue nothing.
    may_start: Callable[[Run], bool] = field(
        default=lambda run: run.status == RunStatus.PENDING
    )
    # Runs the stalled-run sweep may touch (e.g. only runs made in Assay).
    sweepable: Q = field(default_factory=Q)
    # Has the run's page nothing more to show? Past its end, work that follows it
    # (consensus, a review campaign) may still be under way; its page polls until
    # then.
    settled: Callable[[Run], bool] = field(default=lambda run: not run.is_active)
    # In the transaction that ended the run: what follows its end (consensus over
    # its labels, a review campaign of what it flagged, a leaderboard warm-up).
    on_end: Callable[[Run], None] = field(default=lambda run: None)


KINDS: list[RunKind] = []


def register(*kinds: RunKind) -> None:
    """Called from each app's ready() (judging's, construction's): the kinds the
    sweep looks after. A kind registered again is not added twice."""
    for kind in kinds:
        if all(known.name != kind.name for known in KINDS):
            KINDS.append(kind)


def kind_of(model: type[Run]) -> RunKind:
    for kind in KINDS:
        if kind.model is model:
            return kind
    raise KeyError(model)


def kind_named(name: str) -> RunKind:
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise KeyError(name)


def start(kind: RunKind, run_id: int) -> int:
    """Prepare a pending run, mark it running and queue its chunks; returns how
    many chunks were queued."""
    with transaction.atomic():
        run = kind.model.objects.select_for_update().filter(pk=run_id).first()
        if run is None or not kind.may_start(run):
            return 0
        chunks = kind.prepare(run)
        mark_running(run)
        return dispatch(kind, run, chunks)


def mark_running(run: Run) -> None:
    run.status = RunStatus.RUNNING
    run.started_at = run.started_at or timezone.now()
    run.finished_at = None
    run.heartbeat_at = timezone.now()
    run.save(update_fields=["status", "started_at", "finished_at", "heartbeat_at"])


def dispatch(kind: RunKind, run: Run, chunks: Sequence[tuple] | None = None) -> int:
    """Queue a chunk task for each slice of the run's open work (after commit),
    given or listed by the kind; with nothing open the run is finished instead.
    Returns the number of chunks."""
    if chunks is None:
        chunks = kind.open_chunks(run)
    for chunk in chunks:
        enqueue(kind.chunk_task, *chunk)
    if not chunks:
        transaction.on_commit(partial(finish, kind, run.pk))
    return len(chunks)


def finish(kind: RunKind, run_id: int) -> bool:
    """End a running run once its work is all done: the one way every run kind
    ends. Under the run's row lock the kind says the end state (and writes its
    final counters); the state, the end time, what follows the end and the webhook
    event are written here, in one transaction. True when it ended the run; a
    second call, or a call while work is open, changes nothing."""
    with transaction.atomic():
        run = kind.model.objects.select_for_update().get(pk=run_id)
        if run.status != RunStatus.RUNNING:
            return False
        state = kind.end_state(run)
        if state is None:
            return False
        end(kind, run, state)
    return True


def end(kind: RunKind, run: Run, state: str) -> None:
    """Write the end state of a run locked in the current transaction, what follows
    its end and its webhook event. `finish` calls it; so does a person's action
    that resolves a run's last open item (a run needing attention then completes)."""
    run.status = state
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])
    kind.on_end(run)
    announce_end(kind, run)


def keep_alive(model: type[Run], run_id: int) -> bool:
    """Record that a worker still works on the run; False once it no longer runs
    (cancelled). The gateway calls this about once a second while calls are in
    flight, so the heartbeat stays fresh even when no result comes back for a long
    time (slow replies, backoff after 429s) and the sweep leaves a live run alone.
    One UPDATE does both jobs."""
    return bool(
        model.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    )


def is_running(model: type[Run], run_id: int) -> bool:
    return model.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists()


def cancel(run: Run) -> Run:
    """Stop a run: queued chunks do nothing and running ones stop within a second."""
    with transaction.atomic():
        run = type(run).objects.select_for_update().get(pk=run.pk)
        if not run.is_active:
            raise ValidationError(
                _("Run %(pk)s is %(value)s.")
                % {"pk": run.pk, "value": run.get_status_display().lower()}
            )
        run.status = RunStatus.CANCELLED
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])
        announce_end(kind_of(type(run)), run)
    return run


END_EVENTS = {
    RunStatus.COMPLETE: "run.complete",
    RunStatus.ATTENTION: "run.needs_attention",
    RunStatus.CANCELLED: "run.cancelled",
}


def announce_end(kind: RunKind, run: Run) -> None:
    """Queue the webhook event of a run that has just ended. Call in the transaction
    that wrote the end state, under the run's row lock: the event goes only if that
    commits, and once per end. The api app sends it; judging sits below api, so it
    is reached by task name. A resumed run that ends again is a new event."""
    ended_at = timezone.now()
    payload = {
        "kind": kind.name,
        "run": run.pk,
        "benchmark": run.benchmark.slug,
        "status": run.status,
        "counts": kind.counts(run),
        "path": reverse(kind.page, args=[run.pk]),
        "ended_at": ended_at.isoformat(),
    }
    event_id = f"{kind.name}-run:{run.pk}:{run.status}:{ended_at.isoformat()}"
    enqueue("api.tasks.emit_event", END_EVENTS[run.status], payload, event_id)


def check_resumable(run: Run) -> None:
    if run.status == RunStatus.RUNNING:
        raise ValidationError(_("Run %(pk)s is already running.") % {"pk": run.pk})
    if run.status == RunStatus.PENDING:
        raise ValidationError(_("Run %(pk)s has not started yet.") % {"pk": run.pk})


def resume(kind: RunKind, run: Run) -> int:
    """Run a locked, ended run again: its open work is queued; what has a result
    is kept. Call inside a transaction, after `check_resumable`."""
    mark_running(run)
    return dispatch(kind, run)


def resume_stalled(kind: RunKind) -> list[int]:
    """Re-queue the work of runs whose workers stopped writing (killed mid-run).

    A pending run whose start task was lost is started; a running one with a
    stale heartbeat gets its open chunks queued again (chunks are idempotent, so a
    slow-but-alive worker costs nothing but a skipped chunk)."""
    cutoff = timezone.now() - timedelta(seconds=settings.LABELLING_STALE_SECONDS)
    model = kind.model
    silent = Q(heartbeat_at__lt=cutoff) | Q(
        heartbeat_at__isnull=True, created_at__lt=cutoff
    )
    stalled = model.objects.filter(
        Q(status=RunStatus.RUNNING) & silent
        | Q(status=RunStatus.PENDING, created_at__lt=cutoff),
        kind.sweepable,
    ).values_list("pk", flat=True)
    resumed = []
    for run_id in stalled:
        with transaction.atomic():
            run = model.objects.select_for_update().get(pk=run_id)
            if run.status == RunStatus.PENDING:
                transaction.on_commit(partial(start, kind, run.pk))
            elif run.status == RunStatus.RUNNING and (
                (run.heartbeat_at or run.created_at) < cutoff
            ):
                run.heartbeat_at = timezone.now()
                run.save(update_fields=["heartbeat_at"])
                dispatch(kind, run)
            else:
                continue
            resumed.append(run_id)
    return resumed
