"""Claims where N people label each task (annotation campaigns: overlap N, tasks
reserved for a person, partly labelled tasks first), the other half of the review-
queue engine. The flow is in annotation/QUEUE.md; `engine.py` is the overlap-1
half every other review screen uses.

A queue of this kind is a group table (a campaign: `status`, `overlap`), a task
table (`label_count`, `position`, `assigned_to`) and a hold table (one person's
lease on one task: `status`, `claimed_at`, `expires_at`, `finished_at`); the app
names its three models once (`OverlapQueue`), so this module imports no app. The
reads every work-screen request starts with (the group with the person's
membership, the posted task, the person's done count) are here too.

Every change to a task's holders happens while that task's row is locked
(`SELECT … FOR UPDATE`), so the count of live leases plus labels can be checked and
changed atomically; `SKIP LOCKED` lets concurrent claimers pass over rows another
claimer is deciding on instead of waiting for them.

The claim and the first-label write are the measured hot path of every annotator's
Enter key (bench/queue_bench.py, `--orm` for the ORM path), so on PostgreSQL they
are plain SQL, prepared once per connection (`sql.queue_cursor`): two statements
each, no per-request ORM query compilation or planning. Elsewhere (the zero-config
SQLite demo) the same rules run through the ORM; SQLite admits one writer at a
time, so no row locks are needed there.
"""

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from reviewqueue.sql import queue_cursor

# Step 1 of a claim. The person's lease in the campaign, renewed if it lapsed
# (nobody took it over: then it would be `expired`), else the first task they may
# take — reserved for them by position, then the open pool with partly labelled
# tasks first — locked with SKIP LOCKED. Each candidate branch is its own CTE so
# PostgreSQL walks the partial indexes `task_reserved` and `task_open_pool` in
# order and stops at the first row; the pool is not scanned when a reserved task
# was found, nor either when a lease is held.
CLAIM_PICK_SQL = """
WITH held AS (
    SELECT id, task_id, claimed_at, expires_at
    FROM {holds}
    WHERE {group}_id = %(group)s AND user_id = %(user)s AND status = 'active'
    ORDER BY claimed_at
    LIMIT 1
), renewed AS (
    UPDATE {holds} SET expires_at = %(until)s
    WHERE id = (SELECT id FROM held WHERE expires_at <= %(now)s)
    RETURNING id
), reserved AS (
    SELECT t.id FROM {tasks} t
    WHERE t.assigned_to_id = %(user)s AND t.{group}_id = %(group)s
      AND %(open)s AND NOT EXISTS (SELECT FROM held)
      AND {claimable}
    ORDER BY t.position
    LIMIT 1
    {lock}
), pool AS (
    SELECT t.id FROM {tasks} t
    WHERE t.assigned_to_id IS NULL AND t.{group}_id = %(group)s
      AND %(open)s AND NOT EXISTS (SELECT FROM held)
      AND NOT EXISTS (SELECT FROM reserved)
      AND {claimable}
    ORDER BY t.label_count DESC, t.position
    LIMIT 1
    {lock}
)
SELECT id, task_id, claimed_at,
       CASE WHEN EXISTS (SELECT FROM renewed) THEN %(until)s ELSE expires_at END
FROM held
UNION ALL SELECT NULL, id, NULL, NULL FROM reserved
UNION ALL SELECT NULL, id, NULL, NULL FROM pool
"""
# SKIP LOCKED passes over tasks that other claimers or submitters hold locked for
# the few milliseconds of their transaction, so an empty pick is only "nothing left"
# once the same pick without locking finds nothing either; until then the claim
# waits a moment and picks again.
PICK_SKIPPING_LOCKED = "FOR UPDATE OF t SKIP LOCKED"
LOCKED_RETRY_SECONDS = 0.01
LOCKED_RETRIES = 200

# Not full, not held to capacity (unexpired leases), never held, labelled or
# skipped by this person (a live assignment), not passed over in this claim.
CLAIMABLE_SQL = """t.label_count < %(overlap)s
      AND t.id <> ALL(%(passed_over)s)
      AND (SELECT count(*) FROM {holds} a
           WHERE a.task_id = t.id AND a.status = 'active'
             AND a.expires_at > %(now)s) < %(overlap)s - t.label_count
      AND NOT EXISTS (
          SELECT FROM {holds} a
          WHERE a.task_id = t.id AND a.user_id = %(user)s
            AND a.status IN ('active', 'submitted', 'skipped'))"""

# Step 2 of a claim, a fresh statement while holding the task's row lock: the
# pick's snapshot predates the lock, so a lease another claimer committed in
# between is missing from its count; this one sees it. Lapsed leases of others
# on the task are retired on the way. No row comes back when the task is full
# now, or when the person's other tab leased a task meanwhile (the unique index
# `one_active_lease_per_user` makes the insert do nothing).
CLAIM_LEASE_SQL = """
WITH lapsed AS (
    UPDATE {holds} SET status = 'expired', finished_at = %(now)s
    WHERE task_id = %(task)s AND status = 'active' AND expires_at <= %(now)s
      AND user_id <> %(user)s
)
INSERT INTO {holds}
    (task_id, user_id, {group}_id, status, claimed_at, expires_at, skip_reason)
SELECT t.id, %(user)s, t.{group}_id, 'active', %(now)s, %(until)s, ''
FROM {tasks} t
WHERE t.id = %(task)s
  AND t.label_count + (
      SELECT count(*) FROM {holds} a
      WHERE a.task_id = t.id AND a.status = 'active' AND a.expires_at > %(now)s
        AND a.user_id <> %(user)s) < %(overlap)s
ON CONFLICT DO NOTHING
RETURNING id
"""

# Submitting, step 1: lock the task row. Every claim and first label of the task
# happens under this lock, so what step 2 reads cannot change until commit.
LOCK_TASK_SQL = """
SELECT t.label_count, c.status = 'open', c.overlap
FROM {tasks} t JOIN {groups} c ON c.id = t.{group}_id
WHERE t.id = %s
FOR UPDATE OF t
"""

# Submitting, step 2, a fresh statement under the lock: read the person's latest
# label and lease on the task and others' unexpired leases, and — when this is a
# first label that fits (no earlier label, a lease, room under the overlap) —
# consume the lease, count the label and retire others' lapsed leases. The label
# row itself is inserted next by the caller; `is_first` says which case it was.
SUBMIT_SQL = """
WITH state AS (
    SELECT
        (SELECT id FROM {labels}
         WHERE task_id = %(task)s AND user_id = %(user)s AND is_latest) AS previous,
        lease.id AS lease, lease.claimed_at,
        (SELECT count(*) FROM {holds}
         WHERE task_id = %(task)s AND status = 'active' AND expires_at > %(now)s
           AND user_id <> %(user)s) AS others
    FROM (SELECT) one
    LEFT JOIN LATERAL (
        SELECT id, claimed_at FROM {holds}
        WHERE task_id = %(task)s AND user_id = %(user)s
          AND status IN ('active', 'expired')
        ORDER BY claimed_at DESC
        LIMIT 1
    ) lease ON true
), first AS (
    SELECT lease FROM state
    WHERE previous IS NULL AND lease IS NOT NULL
      AND %(label_count)s + others < %(overlap)s
), consumed AS (
    UPDATE {holds} SET status = 'submitted', finished_at = %(now)s
    WHERE id = (SELECT lease FROM first)
), lapsed AS (
    UPDATE {holds} SET status = 'expired', finished_at = %(now)s
    WHERE task_id = %(task)s AND status = 'active' AND expires_at <= %(now)s
      AND user_id <> %(user)s AND EXISTS (SELECT FROM first)
), counted AS (
    UPDATE {tasks} SET label_count = label_count + 1
    WHERE id = %(task)s AND EXISTS (SELECT FROM first)
)
SELECT previous, lease, claimed_at, EXISTS (SELECT FROM first) FROM state
"""


# What every request of a work screen reads before anything else: the group with
# its parent (a campaign's benchmark; the fields the screens read) and whether the
# person is one of its named members, and whether it names any.
GROUP_SQL = """
SELECT {group_columns}, {parent_columns},
    EXISTS (SELECT 1 FROM {members} m
            WHERE m.{group}_id = c.id AND m.user_id = %(user)s),
    EXISTS (SELECT 1 FROM {members} m WHERE m.{group}_id = c.id)
FROM {groups} c JOIN {parents} b ON b.id = c.{parent}_id
WHERE c.id = %(group)s
"""
# The posted task, if it is the group's.
TASK_SQL = """
SELECT {task_columns} FROM {tasks} t
WHERE t.id = %(task)s AND t.{group}_id = %(group)s
"""
# How many of the group's tasks the person has labelled.
DONE_SQL = """
SELECT count(*) FROM {holds}
WHERE {group}_id = %(group)s AND user_id = %(user)s AND status = 'submitted'
"""


def columns(model, alias: str, names=None) -> tuple[list[str], str]:
    """A model's concrete fields (or those named) as attribute names for
    `Model.from_db` and as the select list of a plain statement."""
    fields = [
        field
        for field in model._meta.concrete_fields
        if names is None or field.name in names
    ]
    sql = ", ".join(f'{alias}."{field.column}"' for field in fields)
    return [field.attname for field in fields], sql


@dataclass(frozen=True)
class LabelSlot:
    """Where a submission stands after `take_label_slot` (either back end)."""

    is_open: bool
    previous_id: int | None  # the person's latest label: this one corrects it
    lease_id: int | None
    lease_claimed_at: datetime | None
    is_first: bool  # the lease was consumed and label_count went up


def plain_sql() -> bool:
    """Whether claim and first-label write take the plain SQL path (PostgreSQL)
    or the ORM one; bench/queue_bench.py --orm measures both."""
    return connection.vendor == "postgresql"


class OverlapQueue:
    """The claim and first-label write over one app's group, task and hold
    models (see the module's docstring)."""

    def __init__(
        self,
        group_model,
        task_model,
        hold_model,
        group_field: str,
        *,
        members_field: str,
        parent_field: str,
        parent_fields: set[str],
    ):
        """`members_field`: the group's many-to-many of the people named to it;
        `parent_field`: its foreign key read with it, `parent_fields` the
        parent's fields the screens read (others load on first access)."""
        self.groups, self.tasks, self.holds = group_model, task_model, hold_model
        self.group_field = group_field
        self.parent_field = parent_field
        self.parents = group_model._meta.get_field(parent_field).related_model
        self.group_fields, group_columns = columns(group_model, "c")
        self.parent_fields, parent_columns = columns(self.parents, "b", parent_fields)
        self.task_fields, self.task_columns = columns(task_model, "t")
        members = group_model._meta.get_field(members_field).remote_field.through
        self.group_sql = GROUP_SQL.format(
            group_columns=group_columns,
            parent_columns=parent_columns,
            members=members._meta.db_table,
            groups=group_model._meta.db_table,
            parents=self.parents._meta.db_table,
            parent=parent_field,
            group=group_field,
        )
        self.task_sql = TASK_SQL.format(
            task_columns=self.task_columns,
            tasks=task_model._meta.db_table,
            group=group_field,
        )
        self.done_sql = DONE_SQL.format(
            holds=hold_model._meta.db_table, group=group_field
        )
        tables = {
            "groups": group_model._meta.db_table,
            "tasks": task_model._meta.db_table,
            "holds": hold_model._meta.db_table,
            "group": group_field,
            "claimable": "{claimable}",
            "lock": "{lock}",
            "labels": "{labels}",
        }
        claimable = CLAIMABLE_SQL.format(**tables)
        pick = CLAIM_PICK_SQL.format(**tables)
        self.pick_sql = pick.format(claimable=claimable, lock=PICK_SKIPPING_LOCKED)
        self.peek_sql = pick.format(claimable=claimable, lock="")
        self.lease_sql = CLAIM_LEASE_SQL.format(**tables)
        self.lock_sql = LOCK_TASK_SQL.format(**tables)
        self.submit_sql = SUBMIT_SQL.format(**tables)
        self.live = [
            hold_model.Status.ACTIVE,
            hold_model.Status.SUBMITTED,
            hold_model.Status.SKIPPED,
        ]

    # -- the reads every request of a work screen makes (plain SQL on any back end:
    # the ORM twins cost 5-10x the CPU, docs/BENCHMARKS.md) --------------------------

    def group_with_membership(self, group_id: int, user):
        """The group with its parent, annotated with `user_assigned` and
        `has_assignees`; None if there is no such group."""
        with queue_cursor() as cursor:
            cursor.execute(self.group_sql, {"group": group_id, "user": user.pk})
            row = cursor.fetchone()
        if row is None:
            return None
        split = len(self.group_fields)
        group = self.groups.from_db(connection.alias, self.group_fields, row[:split])
        parent = self.parents.from_db(
            connection.alias, self.parent_fields, row[split:-2]
        )
        setattr(group, self.parent_field, parent)
        group.user_assigned, group.has_assignees = (bool(v) for v in row[-2:])
        return group

    def task_in(self, group, task_id: int | None):
        """The group's task `task_id`, or None."""
        if task_id is None:
            return None
        with queue_cursor() as cursor:
            cursor.execute(self.task_sql, {"task": task_id, "group": group.pk})
            row = cursor.fetchone()
        if row is None:
            return None
        task = self.task_from_row(row)
        setattr(task, self.group_field, group)
        return task

    def task_from_row(self, row):
        """A task from a row whose first columns are `task_columns` (alias t)."""
        return self.tasks.from_db(connection.alias, self.task_fields, row)

    def done_count(self, group, user) -> int:
        """How many of the group's tasks the person has labelled."""
        with queue_cursor() as cursor:
            cursor.execute(self.done_sql, {"group": group.pk, "user": user.pk})
            return cursor.fetchone()[0]

    @transaction.atomic
    def claim(self, group, user):
        """The user's current lease in the group, or a new one on the next task;
        None when the queue holds nothing more for them. `group` has `overlap`,
        `is_open` and `lease_minutes`."""
        now = timezone.now()
        until = now + timedelta(minutes=group.lease_minutes)
        if not plain_sql():
            return self._claim_orm(group, user, now, until)
        params = {
            "group": group.pk,
            "user": user.pk,
            "overlap": group.overlap,
            "open": group.is_open,
            "now": now,
            "until": until,
        }
        passed_over: list[int] = []
        retries = LOCKED_RETRIES
        with queue_cursor() as cursor:
            while True:
                cursor.execute(self.pick_sql, {**params, "passed_over": passed_over})
                row = cursor.fetchone()
                if row is None:
                    cursor.execute(
                        self.peek_sql, {**params, "passed_over": passed_over}
                    )
                    if cursor.fetchone() is None or not retries:
                        return None
                    retries -= 1
                    time.sleep(LOCKED_RETRY_SECONDS)
                    continue
                lease_id, task_id, claimed_at, expires_at = row
                if lease_id is None:
                    cursor.execute(self.lease_sql, {**params, "task": task_id})
                    leased = cursor.fetchone()
                    if leased is None:
                        # Full now, or the person's other tab leased a task: the
                        # next pick finds that lease or the next candidate.
                        passed_over.append(task_id)
                        continue
                    lease_id, claimed_at, expires_at = leased[0], now, until
                return self.holds(
                    pk=lease_id,
                    task_id=task_id,
                    user_id=user.pk,
                    status=self.holds.Status.ACTIVE,
                    claimed_at=claimed_at,
                    expires_at=expires_at,
                    **{f"{self.group_field}_id": group.pk},
                )

    def take_label_slot(self, label_model, task_id: int, user, now) -> LabelSlot:
        """Inside a transaction: lock the task and, when this is a fitting first
        label, consume the person's lease and count the label (see SUBMIT_SQL)."""
        if not plain_sql():
            return self._slot_orm(label_model, task_id, user, now)
        with queue_cursor() as cursor:
            cursor.execute(self.lock_sql, [task_id])
            row = cursor.fetchone()
            if row is None:
                raise self.tasks.DoesNotExist(f"No task {task_id}.")
            label_count, is_open, overlap = row
            if not is_open:
                return LabelSlot(False, None, None, None, False)
            cursor.execute(
                self.submit_sql.format(labels=label_model._meta.db_table),
                {
                    "task": task_id,
                    "user": user.pk,
                    "now": now,
                    "label_count": label_count,
                    "overlap": overlap,
                },
            )
            previous, lease, claimed_at, is_first = cursor.fetchone()
        return LabelSlot(True, previous, lease, claimed_at, is_first)

    # -- the same rules through the ORM (any database but PostgreSQL) ---------------

    def _claim_orm(self, group, user, now, until):
        Status = self.holds.Status
        held = (
            self.holds.objects.filter(
                user=user, status=Status.ACTIVE, **{self.group_field: group}
            )
            .order_by("claimed_at")
            .first()
        )
        if held is not None:
            if held.expires_at <= now:
                held.expires_at = until
                held.save(update_fields=["expires_at"])
            return held
        if not group.is_open:
            return None
        candidates = self._claimable(group, user, now)
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
            if self._has_capacity_for(task, user, group.overlap, now):
                return self.holds.objects.create(
                    task=task,
                    user=user,
                    status=Status.ACTIVE,
                    claimed_at=now,
                    expires_at=until,
                    **{self.group_field: group},
                )
            passed_over.append(task.pk)

    def _slot_orm(self, label_model, task_id: int, user, now) -> LabelSlot:
        Status = self.holds.Status
        task = self.tasks.objects.select_related(self.group_field).get(pk=task_id)
        group = getattr(task, self.group_field)
        if not group.is_open:
            return LabelSlot(False, None, None, None, False)
        previous_id = (
            label_model.objects.filter(task=task, user=user, is_latest=True)
            .values_list("pk", flat=True)
            .first()
        )
        lease = (
            self.holds.objects.filter(
                task=task, user=user, status__in=[Status.ACTIVE, Status.EXPIRED]
            )
            .order_by("-claimed_at")
            .first()
        )
        is_first = (
            previous_id is None
            and lease is not None
            and self._has_capacity_for(task, user, group.overlap, now)
        )
        if is_first:
            self.holds.objects.filter(pk=lease.pk).update(
                status=Status.SUBMITTED, finished_at=now
            )
            self.tasks.objects.filter(pk=task.pk).update(
                label_count=F("label_count") + 1
            )
        return LabelSlot(
            True,
            previous_id,
            lease.pk if lease else None,
            lease.claimed_at if lease else None,
            is_first,
        )

    def _claimable(self, group, user, now):
        """Not full, not held to capacity by unexpired leases, never held,
        labelled or skipped by this user."""
        Status = self.holds.Status
        live_leases = Coalesce(
            Subquery(
                self.holds.objects.filter(
                    task=OuterRef("pk"), status=Status.ACTIVE, expires_at__gt=now
                )
                .order_by()
                .values("task")
                .annotate(n=Count("id"))
                .values("n"),
                output_field=IntegerField(),
            ),
            0,
        )
        touched_by_user = self.holds.objects.filter(
            task=OuterRef("pk"), user=user, status__in=self.live
        )
        return (
            self.tasks.objects.filter(
                label_count__lt=group.overlap, **{self.group_field: group}
            )
            .alias(leases=live_leases)
            .filter(leases__lt=group.overlap - F("label_count"))
            .exclude(Exists(touched_by_user))
        )

    def _has_capacity_for(self, task, user, overlap: int, now) -> bool:
        """May `user` hold or first-label `task` without exceeding the overlap?
        Other people's unexpired leases count; their lapsed ones are retired on
        the way."""
        Status = self.holds.Status
        on_task = self.holds.objects.filter(task=task, status=Status.ACTIVE)
        on_task.filter(expires_at__lte=now).exclude(user=user).update(
            status=Status.EXPIRED, finished_at=now
        )
        others = on_task.filter(expires_at__gt=now).exclude(user=user).count()
        return task.label_count + others < overlap
