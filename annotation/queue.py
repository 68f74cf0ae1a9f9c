"""The queue engine: who gets which task next. The flow is written down in QUEUE.md.

Every change to a task's holders happens while that task's row is locked
(`SELECT … FOR UPDATE`), so the count of live leases plus labels can be checked and
changed atomically; `SKIP LOCKED` lets concurrent claimers pass over rows another
claimer is deciding on instead of waiting for them.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from .models import Assignment, Campaign, Task

LIVE = (
    Assignment.Status.ACTIVE,
    Assignment.Status.SUBMITTED,
    Assignment.Status.SKIPPED,
)


def live_lease_count(now):
    """Subquery: unexpired leases on the outer task."""
    return Coalesce(
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


def current_assignment(campaign: Campaign, user) -> Assignment | None:
    """The user's lease in this campaign, if they hold one. A lapsed lease nobody
    else has taken over is still theirs: it is renewed."""
    held = (
        Assignment.objects.select_related("task")
        .filter(campaign=campaign, user=user, status=Assignment.Status.ACTIVE)
        .order_by("claimed_at")
        .first()
    )
    now = timezone.now()
    if held is not None and held.expires_at <= now:
        held.expires_at = now + timedelta(minutes=campaign.lease_minutes)
        held.save(update_fields=["expires_at"])
    return held


def claimable_tasks(campaign: Campaign, user, now):
    """Tasks this user may be handed now: not full, not held to capacity, never
    labelled, skipped or held by this user."""
    touched_by_user = Assignment.objects.filter(
        task=OuterRef("pk"), user=user, status__in=LIVE
    )
    return (
        Task.objects.filter(campaign=campaign, label_count__lt=campaign.overlap)
        .alias(leases=live_lease_count(now))
        .filter(leases__lt=campaign.overlap - F("label_count"))
        .exclude(Exists(touched_by_user))
    )


def _next_candidate(candidates, user) -> Task | None:
    """Lock the first task reserved for `user`, else the first of the open pool."""
    task = _lock_first(candidates.filter(assigned_to=user).order_by("position"))
    if task is None:
        task = _lock_first(
            candidates.filter(assigned_to__isnull=True).order_by(
                "-label_count", "position"
            )
        )
    return task


def _lock_first(queryset):
    return (
        queryset.select_for_update(skip_locked=True, of=("self",))
        .only("id", "campaign_id", "item_id", "label_count")
        .first()
    )


@transaction.atomic
def do_claim_next(campaign: Campaign, user) -> Assignment | None:
    """Return the user's current lease, or lease them the next task; None when the
    queue holds nothing more for them."""
    # Locking the user's row serialises one person's concurrent claims (two tabs),
    # so nobody ends up holding two leases in a campaign.
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    held = current_assignment(campaign, user)
    if held is not None:
        return held
    if not campaign.is_open:
        return None
    now = timezone.now()
    candidates = claimable_tasks(campaign, user, now)
    passed_over: list[int] = []
    while True:
        task = _next_candidate(candidates.exclude(pk__in=passed_over), user)
        if task is None:
            return None
        # The candidate query's snapshot predates the lock, so a lease another
        # claimer committed just before it may be missing from its count; this
        # fresh count, taken while holding the row lock, is the one that decides.
        if has_capacity_for(task, user, campaign.overlap, now):
            break
        passed_over.append(task.pk)
    return Assignment.objects.create(
        task=task,
        user=user,
        campaign=campaign,
        status=Assignment.Status.ACTIVE,
        claimed_at=now,
        expires_at=now + timedelta(minutes=campaign.lease_minutes),
    )


def lock_task(task_id: int) -> Task:
    """Lock a task row for a change to its holders or labels (inside a transaction)."""
    return (
        Task.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .get(pk=task_id)
    )


def has_capacity_for(task: Task, user, overlap: int, now) -> bool:
    """With the task row locked (so `task.label_count` is the committed value): may
    `user` hold or first-label it without exceeding the overlap? Other people's live
    leases are counted afresh; lapsed ones are retired on the way."""
    leases = Assignment.objects.filter(
        task=task, status=Assignment.Status.ACTIVE
    ).aggregate(
        live=Count("id", filter=Q(expires_at__gt=now) & ~Q(user=user)),
        lapsed=Count("id", filter=Q(expires_at__lte=now)),
    )
    if leases["lapsed"]:
        Assignment.objects.filter(
            task=task, status=Assignment.Status.ACTIVE, expires_at__lte=now
        ).exclude(user=user).update(status=Assignment.Status.EXPIRED, finished_at=now)
    return task.label_count + leases["live"] < overlap


def _submitted(campaign: Campaign, user):
    return Assignment.objects.filter(
        campaign=campaign, user=user, status=Assignment.Status.SUBMITTED
    )


def previous_task_id(campaign: Campaign, user, before_task_id: int | None):
    """The task this user submitted just before `before_task_id`; with no task (or
    one not yet submitted), their most recent submission."""
    done = _submitted(campaign, user)
    anchor = done.filter(task_id=before_task_id).first() if before_task_id else None
    if anchor is not None:
        done = done.filter(
            Q(finished_at__lt=anchor.finished_at)
            | Q(finished_at=anchor.finished_at, id__lt=anchor.id)
        )
    return (
        done.order_by("-finished_at", "-id").values_list("task_id", flat=True).first()
    )


def following_task_id(campaign: Campaign, user, after_task_id: int):
    """The task submitted just after `after_task_id`, or None (then: the queue)."""
    done = _submitted(campaign, user)
    anchor = done.filter(task_id=after_task_id).first()
    if anchor is None:
        return None
    return (
        done.filter(
            Q(finished_at__gt=anchor.finished_at)
            | Q(finished_at=anchor.finished_at, id__gt=anchor.id)
        )
        .order_by("finished_at", "id")
        .values_list("task_id", flat=True)
        .first()
    )
