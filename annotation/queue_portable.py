"""The claim and the first-label write of `annotation.queue` through the ORM, for
databases other than PostgreSQL: the zero-config SQLite demo.

`annotation.queue` does both in PostgreSQL-only SQL (SKIP LOCKED, data-modifying
CTEs, arrays) and calls these functions on any other database. The rules are the
same (QUEUE.md); SQLite lets one writer in at a time, so no row locks are needed.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Assignment, Campaign, Task


@dataclass(frozen=True)
class LabelSlot:
    """Where a submission stands after `take_label_slot` (either back end)."""

    is_open: bool
    previous_id: int | None  # the person's latest label: this one corrects it
    lease_id: int | None
    lease_claimed_at: datetime | None
    is_first: bool  # the lease was consumed and label_count went up


LIVE = (
    Assignment.Status.ACTIVE,
    Assignment.Status.SUBMITTED,
    Assignment.Status.SKIPPED,
)


def claim_next(campaign: Campaign, user, now, until) -> Assignment | None:
    """The user's lease (renewed if it lapsed), or a new lease on the first task
    they may take: reserved for them first, then the open pool with partly labelled
    tasks first. None when there is nothing for them."""
    held = (
        Assignment.objects.filter(
            campaign=campaign, user=user, status=Assignment.Status.ACTIVE
        )
        .order_by("claimed_at")
        .first()
    )
    if held is not None:
        if held.expires_at <= now:
            held.expires_at = until
            held.save(update_fields=["expires_at"])
        return held
    if not campaign.is_open:
        return None
    candidates = _claimable(campaign, user, now)
    passed_over: list[int] = []
    while True:
        open_now = candidates.exclude(pk__in=passed_over)
        task = (
            open_now.filter(assigned_to=user).order_by("position").first()
            or open_now.filter(assigned_to__isnull=True)
            .order_by("-label_count", "position")
            .first()
        )
        if task is None:
            return None
        if _has_capacity_for(task, user, campaign.overlap, now):
            return Assignment.objects.create(
                task=task,
                user=user,
                campaign=campaign,
                status=Assignment.Status.ACTIVE,
                claimed_at=now,
                expires_at=until,
            )
        passed_over.append(task.pk)


def take_label_slot(label_model, task_id: int, user, now):
    """See `annotation.queue.take_label_slot`."""
    task = Task.objects.select_related("campaign").get(pk=task_id)
    if not task.campaign.is_open:
        return LabelSlot(False, None, None, None, False)
    previous_id = (
        label_model.objects.filter(task=task, user=user, is_latest=True)
        .values_list("pk", flat=True)
        .first()
    )
    lease = (
        Assignment.objects.filter(
            task=task,
            user=user,
            status__in=[Assignment.Status.ACTIVE, Assignment.Status.EXPIRED],
        )
        .order_by("-claimed_at")
        .first()
    )
    is_first = (
        previous_id is None
        and lease is not None
        and _has_capacity_for(task, user, task.campaign.overlap, now)
    )
    if is_first:
        Assignment.objects.filter(pk=lease.pk).update(
            status=Assignment.Status.SUBMITTED, finished_at=now
        )
        Task.objects.filter(pk=task.pk).update(label_count=F("label_count") + 1)
    return LabelSlot(
        True,
        previous_id,
        lease.pk if lease else None,
        lease.claimed_at if lease else None,
        is_first,
    )


def _claimable(campaign: Campaign, user, now):
    """Not full, not held to capacity by unexpired leases, never held, labelled or
    skipped by this user."""
    live_leases = Coalesce(
        Subquery(
            Assignment.objects.filter(
                task=OuterRef("pk"),
                status=Assignment.Status.ACTIVE,
                expires_at__gt=now,
            )
            .order_by()
            .values("task")
            .annotate(n=Count("id"))
            .values("n"),
            output_field=IntegerField(),
        ),
        0,
    )
    touched_by_user = Assignment.objects.filter(
        task=OuterRef("pk"), user=user, status__in=LIVE
    )
    return (
        Task.objects.filter(campaign=campaign, label_count__lt=campaign.overlap)
        .alias(leases=live_leases)
        .filter(leases__lt=campaign.overlap - F("label_count"))
        .exclude(Exists(touched_by_user))
    )


def _has_capacity_for(task: Task, user, overlap: int, now) -> bool:
    """May `user` hold or first-label `task` without exceeding the overlap? Other
    people's unexpired leases count; their lapsed ones are retired on the way."""
    Assignment.objects.filter(
        task=task, status=Assignment.Status.ACTIVE, expires_at__lte=now
    ).exclude(user=user).update(status=Assignment.Status.EXPIRED, finished_at=now)
    others = (
        Assignment.objects.filter(
            task=task, status=Assignment.Status.ACTIVE, expires_at__gt=now
        )
        .exclude(user=user)
        .count()
    )
    return task.label_count + others < overlap
