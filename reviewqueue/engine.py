"""The review-queue engine: who gets which review item next, and what a person's
submit, skip and back do to their hold on it. The flow is in QUEUE.md.

A screen describes its work as a queryset of the items still needing a person
(`candidates`, in the order they are handed out) and names its queue; the engine
leases the first candidate nobody else holds. The partial unique index
`one_active_lease_per_review_item` decides who wins a race, so the same code is
correct on PostgreSQL and on SQLite without row locks: the losing insert fails
inside its savepoint and the claimer moves on to the next candidate.

`previous` / `following` ("back to my previous task" and forward again) and
`StaleRefusal` are shared with the annotation queue, whose holds are its own
`Assignment` rows (annotation/queue.py).
"""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from reviewqueue.models import Lease

LEASE_MINUTES = 30
# How many candidates one claim tries before it reads the queue again: a race
# lost on every one of them is rare, and the next read sees the winners' leases.
BATCH = 20


class StaleRefusal(ValidationError):
    """A submit refused because what is stored changed after the page was opened
    (another tab, another person). The screen then shows what is saved now, never
    the refused choice."""


class HeldByAnother(ValidationError):
    """A submit refused because another person holds the item now (their lease
    has not run out): they are deciding it."""


def _mine(queue: str, user):
    return Lease.objects.filter(queue=queue, user=user)


def held(queue: str, user) -> int | None:
    """The item the person holds in the queue, without claiming or renewing
    anything: what a GET of a review screen shows."""
    return (
        _mine(queue, user)
        .filter(status=Lease.Status.ACTIVE)
        .values_list("item_id", flat=True)
        .first()
    )


def decided(queue: str, user, requested: str) -> int | None:
    """The item a screen's `?item=`-like parameter names, when the person has
    finished it (going back to it); None for anything else."""
    if not requested.isdigit():
        return None
    return (
        done_by(queue, user)
        .filter(item_id=int(requested))
        .values_list("item_id", flat=True)
        .first()
    )


def shown(queue: str, user, requested: str) -> int | None:
    """What a GET of a review screen shows: the finished item `requested` names,
    else the item the person holds (nothing is claimed)."""
    return decided(queue, user, requested) or held(queue, user)


@transaction.atomic
def claim(
    queue: str, user, candidates: QuerySet, minutes: int = LEASE_MINUTES
) -> int | None:
    """The person's held item if it still needs a person (renewed), else a new
    lease on the first candidate that nobody else holds and that this person
    has not skipped; None when there is nothing for them."""
    now = timezone.now()
    until = now + timedelta(minutes=minutes)
    lease = _mine(queue, user).filter(status=Lease.Status.ACTIVE).first()
    if lease is not None:
        if candidates.filter(pk=lease.item_id).exists():
            if lease.expires_at <= now:
                lease.expires_at = until
                lease.save(update_fields=["expires_at"])
            return lease.item_id
        # Decided meanwhile (by someone else, or in another of the person's tabs).
        _end(lease, Lease.Status.RELEASED, now)
    held_by_others = Lease.objects.filter(
        queue=queue, status=Lease.Status.ACTIVE, expires_at__gt=now
    ).values("item_id")
    skipped = _mine(queue, user).filter(status=Lease.Status.SKIPPED).values("item_id")
    open_now = candidates.exclude(pk__in=held_by_others).exclude(pk__in=skipped)
    while True:
        batch = list(open_now.values_list("pk", flat=True)[:BATCH])
        if not batch:
            return None
        for item_id in batch:
            if _lease(queue, item_id, user, now, until):
                # The batch was read before the lease: a reviewer who held the
                # item then may have decided it since. This read comes after
                # the insert (which waited for their commit), so it sees that.
                if candidates.filter(pk=item_id).exists():
                    return item_id
                _mine(queue, user).filter(
                    item_id=item_id, status=Lease.Status.ACTIVE
                ).delete()
                continue
            mine = held(queue, user)
            if mine is not None:  # the person's other tab won a lease meanwhile
                return mine


def _lease(queue: str, item_id: int, user, now, until) -> bool:
    """Retire a lapsed lease on the item, then try to take it; False when another
    claimer's lease (or the person's other tab's) got there first."""
    Lease.objects.filter(
        queue=queue, item_id=item_id, status=Lease.Status.ACTIVE, expires_at__lte=now
    ).update(status=Lease.Status.EXPIRED, finished_at=now)
    try:
        with transaction.atomic():
            Lease.objects.create(
                queue=queue,
                item_id=item_id,
                user=user,
                claimed_at=now,
                expires_at=until,
            )
    except IntegrityError:
        return False
    return True


def _end(lease: Lease, status: str, now, reason: str = "") -> None:
    lease.status, lease.finished_at, lease.reason = status, now, reason
    lease.save(update_fields=["status", "finished_at", "reason"])


def check_free_for(queue: str, item_id: int, user) -> None:
    """Refuse a submit on an item another person holds now (their lease has not
    run out): they are deciding it."""
    other = (
        Lease.objects.filter(
            queue=queue,
            item_id=item_id,
            status=Lease.Status.ACTIVE,
            expires_at__gt=timezone.now(),
        )
        .exclude(user=user)
        .select_related("user")
        .first()
    )
    if other is not None:
        raise HeldByAnother(
            _(
                "%(user)s is working on this one now; nothing was saved. The next "
                "one for you is shown."
            )
            % {"user": other.user}
        )


def finish(queue: str, item_id: int, user) -> None:
    """Inside the screen's submit transaction: the person's decision on the item
    is stored, so their lease on it is done (one is recorded when they decided
    without holding it: back finds it). Lapsed leases of others retire. A
    decision without a person (the demo's simulated reviewer) holds nothing."""
    if user is None:
        return
    check_free_for(queue, item_id, user)
    now = timezone.now()
    on_item = Lease.objects.filter(
        queue=queue, item_id=item_id, status=Lease.Status.ACTIVE
    )
    done = on_item.filter(user=user).update(status=Lease.Status.DONE, finished_at=now)
    on_item.update(status=Lease.Status.EXPIRED, finished_at=now)
    # A correction (answering again from the history) keeps the item's place.
    if not done and not done_by(queue, user).filter(item_id=item_id).exists():
        Lease.objects.create(
            queue=queue,
            item_id=item_id,
            user=user,
            status=Lease.Status.DONE,
            claimed_at=now,
            expires_at=now,
            finished_at=now,
        )


@transaction.atomic
def skip(queue: str, item_id: int, user, reason: str = "") -> None:
    """Pass over the item: it goes back to others and is never offered to this
    person again."""
    now = timezone.now()
    lease = (
        _mine(queue, user).filter(item_id=item_id, status=Lease.Status.ACTIVE).first()
    )
    if lease is None:
        lease = Lease(queue=queue, item_id=item_id, user=user, claimed_at=now)
        lease.expires_at = now
    lease.status, lease.finished_at, lease.reason = Lease.Status.SKIPPED, now, reason
    lease.save()


def done_by(queue: str, user) -> QuerySet:
    """The person's finished leases in the queue: their history for back."""
    return _mine(queue, user).filter(status=Lease.Status.DONE)


def previous(done: QuerySet, before_item_id: int | None, item: str = "item_id"):
    """Back: in `done` (rows with `finished_at` and the item in field `item`),
    the item finished just before `before_item_id`; with no anchor (or one not
    finished yet), the last one finished."""
    anchor = (
        done.filter(**{item: before_item_id}).order_by("-finished_at", "-id").first()
        if before_item_id
        else None
    )
    if anchor is not None:
        done = done.filter(
            Q(finished_at__lt=anchor.finished_at)
            | Q(finished_at=anchor.finished_at, id__lt=anchor.id)
        ).exclude(**{item: before_item_id})
    return done.order_by("-finished_at", "-id").values_list(item, flat=True).first()


def following(done: QuerySet, after_item_id: int, item: str = "item_id"):
    """Forward from a past item: the one finished just after it, or None (then:
    the queue)."""
    anchor = done.filter(**{item: after_item_id}).order_by("finished_at", "id").last()
    if anchor is None:
        return None
    return (
        done.filter(
            Q(finished_at__gt=anchor.finished_at)
            | Q(finished_at=anchor.finished_at, id__gt=anchor.id)
        )
        .exclude(**{item: after_item_id})
        .order_by("finished_at", "id")
        .values_list(item, flat=True)
        .first()
    )
