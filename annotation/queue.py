"""The queue engine: who gets which task next. The flow is written down in QUEUE.md.

Every change to a task's holders happens while that task's row is locked
(`SELECT … FOR UPDATE`), so the count of live leases plus labels can be checked and
changed atomically; `SKIP LOCKED` lets concurrent claimers pass over rows another
claimer is deciding on instead of waiting for them.

The claim and the first-label write are the measured hot path of every annotator's
Enter key (bench/queue_bench.py), so they are plain SQL sent through
`connection.cursor()`: two statements each, no per-request ORM query compilation.
"""

import time
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from annotation import queue_portable
from annotation.models import Assignment, Campaign, Task
from annotation.queue_portable import LabelSlot
from benchmark.models import Benchmark
from reviewqueue import engine

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
    FROM annotation_assignment
    WHERE campaign_id = %(campaign)s AND user_id = %(user)s AND status = 'active'
    ORDER BY claimed_at
    LIMIT 1
), renewed AS (
    UPDATE annotation_assignment SET expires_at = %(until)s
    WHERE id = (SELECT id FROM held WHERE expires_at <= %(now)s)
    RETURNING id
), reserved AS (
    SELECT t.id FROM annotation_task t
    WHERE t.assigned_to_id = %(user)s AND t.campaign_id = %(campaign)s
      AND %(open)s AND NOT EXISTS (SELECT FROM held)
      AND {claimable}
    ORDER BY t.position
    LIMIT 1
    {lock}
), pool AS (
    SELECT t.id FROM annotation_task t
    WHERE t.assigned_to_id IS NULL AND t.campaign_id = %(campaign)s
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
      AND (SELECT count(*) FROM annotation_assignment a
           WHERE a.task_id = t.id AND a.status = 'active'
             AND a.expires_at > %(now)s) < %(overlap)s - t.label_count
      AND NOT EXISTS (
          SELECT FROM annotation_assignment a
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
    UPDATE annotation_assignment SET status = 'expired', finished_at = %(now)s
    WHERE task_id = %(task)s AND status = 'active' AND expires_at <= %(now)s
      AND user_id <> %(user)s
)
INSERT INTO annotation_assignment
    (task_id, user_id, campaign_id, status, claimed_at, expires_at, skip_reason)
SELECT t.id, %(user)s, t.campaign_id, 'active', %(now)s, %(until)s, ''
FROM annotation_task t
WHERE t.id = %(task)s
  AND t.label_count + (
      SELECT count(*) FROM annotation_assignment a
      WHERE a.task_id = t.id AND a.status = 'active' AND a.expires_at > %(now)s
        AND a.user_id <> %(user)s) < %(overlap)s
ON CONFLICT DO NOTHING
RETURNING id
"""

# Submitting, step 1: lock the task row. Every claim and first label of the task
# happens under this lock, so what step 2 reads cannot change until commit.
LOCK_TASK_SQL = """
SELECT t.label_count, c.status = 'open', c.overlap
FROM annotation_task t JOIN annotation_campaign c ON c.id = t.campaign_id
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
        (SELECT count(*) FROM annotation_assignment
         WHERE task_id = %(task)s AND status = 'active' AND expires_at > %(now)s
           AND user_id <> %(user)s) AS others
    FROM (SELECT) one
    LEFT JOIN LATERAL (
        SELECT id, claimed_at FROM annotation_assignment
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
    UPDATE annotation_assignment SET status = 'submitted', finished_at = %(now)s
    WHERE id = (SELECT lease FROM first)
), lapsed AS (
    UPDATE annotation_assignment SET status = 'expired', finished_at = %(now)s
    WHERE task_id = %(task)s AND status = 'active' AND expires_at <= %(now)s
      AND user_id <> %(user)s AND EXISTS (SELECT FROM first)
), counted AS (
    UPDATE annotation_task SET label_count = label_count + 1
    WHERE id = %(task)s AND EXISTS (SELECT FROM first)
)
SELECT previous, lease, claimed_at, EXISTS (SELECT FROM first) FROM state
"""


def plain_sql() -> bool:
    """Whether claim and first-label write take the plain SQL path (PostgreSQL)
    or the ORM one (queue_portable); bench/queue_bench.py --orm measures both."""
    return connection.vendor == "postgresql"


def _claim_params(campaign: Campaign, user, now) -> dict:
    return {
        "campaign": campaign.pk,
        "user": user.pk,
        "overlap": campaign.overlap,
        "open": campaign.is_open,
        "now": now,
        "until": now + timedelta(minutes=campaign.lease_minutes),
    }


@transaction.atomic
def do_claim_next(campaign: Campaign, user) -> Assignment | None:
    """Return the user's current lease, or lease them the next task; None when the
    queue holds nothing more for them."""
    params = _claim_params(campaign, user, timezone.now())
    if not plain_sql():
        return queue_portable.claim_next(campaign, user, params["now"], params["until"])
    pick = CLAIM_PICK_SQL.format(claimable=CLAIMABLE_SQL, lock=PICK_SKIPPING_LOCKED)
    peek = CLAIM_PICK_SQL.format(claimable=CLAIMABLE_SQL, lock="")
    passed_over: list[int] = []
    retries = LOCKED_RETRIES
    with connection.cursor() as cursor:
        while True:
            cursor.execute(pick, {**params, "passed_over": passed_over})
            row = cursor.fetchone()
            if row is None:
                cursor.execute(peek, {**params, "passed_over": passed_over})
                if cursor.fetchone() is None or not retries:
                    return None
                retries -= 1
                time.sleep(LOCKED_RETRY_SECONDS)
                continue
            lease_id, task_id, claimed_at, expires_at = row
            if lease_id is None:
                cursor.execute(CLAIM_LEASE_SQL, {**params, "task": task_id})
                leased = cursor.fetchone()
                if leased is None:
                    # Full now, or the person's other tab leased a task: the next
                    # pick finds that lease or the next candidate.
                    passed_over.append(task_id)
                    continue
                lease_id, claimed_at, expires_at = (
                    leased[0],
                    params["now"],
                    params["until"],
                )
            return Assignment(
                pk=lease_id,
                task_id=task_id,
                user_id=user.pk,
                campaign_id=campaign.pk,
                status=Assignment.Status.ACTIVE,
                claimed_at=claimed_at,
                expires_at=expires_at,
            )


def held_task_id(campaign: Campaign, user) -> int | None:
    """The task of the person's lease in the campaign, without claiming or renewing
    anything: what a GET of a work screen shows."""
    return (
        Assignment.objects.filter(
            campaign=campaign, user=user, status=Assignment.Status.ACTIVE
        )
        .order_by("claimed_at")
        .values_list("task_id", flat=True)
        .first()
    )


def take_label_slot(label_model, task_id: int, user, now) -> LabelSlot:
    """Inside a transaction: lock the task and, when this is a fitting first label,
    consume the person's lease and count the label (see SUBMIT_SQL)."""
    if not plain_sql():
        return queue_portable.take_label_slot(label_model, task_id, user, now)
    with connection.cursor() as cursor:
        cursor.execute(LOCK_TASK_SQL, [task_id])
        row = cursor.fetchone()
        if row is None:
            raise Task.DoesNotExist(f"No task {task_id}.")
        label_count, is_open, overlap = row
        if not is_open:
            return LabelSlot(False, None, None, None, False)
        cursor.execute(
            SUBMIT_SQL.format(labels=label_model._meta.db_table),
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


def _columns(model, alias: str, names=None) -> tuple[list[str], str]:
    fields = [
        field
        for field in model._meta.concrete_fields
        if names is None or field.name in names
    ]
    sql = ", ".join(f'{alias}."{field.column}"' for field in fields)
    return [field.attname for field in fields], sql


CAMPAIGN_FIELDS, CAMPAIGN_COLUMNS = _columns(Campaign, "c")
# What the screens read of the benchmark; other fields load on first access.
BENCHMARK_FIELDS, BENCHMARK_COLUMNS = _columns(
    Benchmark, "b", {"id", "name", "slug", "source_language", "is_demo"}
)
CAMPAIGN_SQL = f"""
SELECT {CAMPAIGN_COLUMNS}, {BENCHMARK_COLUMNS},
    EXISTS (SELECT 1 FROM annotation_campaign_assignees m
            WHERE m.campaign_id = c.id AND m.user_id = %(user)s),
    EXISTS (SELECT 1 FROM annotation_campaign_assignees m WHERE m.campaign_id = c.id)
FROM annotation_campaign c JOIN benchmark_benchmark b ON b.id = c.benchmark_id
WHERE c.id = %(campaign)s
"""
TASK_FIELDS, TASK_COLUMNS = _columns(Task, "t")
TASK_SQL = f"""
SELECT {TASK_COLUMNS} FROM annotation_task t
WHERE t.id = %(task)s AND t.campaign_id = %(campaign)s
"""


# The expert screen's content, blind by construction: the item's knowledge text, the
# response text and the rendering its question came from (else the item's current
# source-language rendering) — never the run, judgments or other people's labels.
GRADING_VIEW_SQL = f"""
SELECT {TASK_COLUMNS}, i.knowledge_text, r.text, shown.question, shown.answer,
       shown.language
FROM annotation_task t
JOIN benchmark_item i ON i.id = t.item_id
JOIN judging_response r ON r.id = t.response_id
LEFT JOIN benchmark_rendering shown ON shown.id = COALESCE(
    r.rendering_id,
    (SELECT s.id FROM benchmark_rendering s
     WHERE s.item_id = t.item_id AND s.is_current AND s.language = %(source)s
     LIMIT 1)
)
WHERE t.id = %(task)s
"""


def grading_view(campaign: Campaign, task_id: int) -> tuple[Task, dict]:
    """The task and what the expert screen shows of it, in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            GRADING_VIEW_SQL,
            {"task": task_id, "source": campaign.benchmark.source_language},
        )
        row = cursor.fetchone()
    split = len(TASK_FIELDS)
    task = Task.from_db(connection.alias, TASK_FIELDS, row[:split])
    task.campaign = campaign
    knowledge, response, question, answer, language = row[split:]
    return task, {
        "question": question or "",
        "reference_answer": answer or "",
        "language": language or "",
        "response_text": response,
        "knowledge_text": knowledge,
    }


def campaign_with_membership(campaign_id: int, user, kinds) -> Campaign | None:
    """The campaign (with its benchmark) if it is of one of `kinds`, annotated with
    `user_assigned` and `has_assignees` for the role check; every queue request
    starts here."""
    with connection.cursor() as cursor:
        cursor.execute(CAMPAIGN_SQL, {"campaign": campaign_id, "user": user.pk})
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(CAMPAIGN_FIELDS)
    campaign = Campaign.from_db(connection.alias, CAMPAIGN_FIELDS, row[:split])
    if campaign.kind not in kinds:
        return None
    campaign.benchmark = Benchmark.from_db(
        connection.alias, BENCHMARK_FIELDS, row[split:-2]
    )
    campaign.user_assigned, campaign.has_assignees = (bool(v) for v in row[-2:])
    return campaign


def task_in(campaign: Campaign, task_id: int | None) -> Task | None:
    """The campaign's task `task_id`, or None."""
    if task_id is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(TASK_SQL, {"task": task_id, "campaign": campaign.pk})
        row = cursor.fetchone()
    if row is None:
        return None
    task = Task.from_db(connection.alias, TASK_FIELDS, row)
    task.campaign = campaign
    return task


def submitted_count(campaign: Campaign, user) -> int:
    """How many tasks of the campaign this person has labelled."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM annotation_assignment "
            "WHERE campaign_id = %s AND user_id = %s AND status = 'submitted'",
            [campaign.pk, user.pk],
        )
        return cursor.fetchone()[0]


def lock_task(task_id: int) -> Task:
    """Lock a task row for a change to its holders or labels (inside a transaction)."""
    return (
        Task.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .get(pk=task_id)
    )


def _submitted(campaign: Campaign, user):
    return Assignment.objects.filter(
        campaign=campaign, user=user, status=Assignment.Status.SUBMITTED
    )


def previous_task_id(campaign: Campaign, user, before_task_id: int | None):
    """The task this user submitted just before `before_task_id`; with no task (or
    one not yet submitted), their most recent submission (the engine's back)."""
    return engine.previous(_submitted(campaign, user), before_task_id, "task_id")


def following_task_id(campaign: Campaign, user, after_task_id: int):
    """The task submitted just after `after_task_id`, or None (then: the queue)."""
    return engine.following(_submitted(campaign, user), after_task_id, "task_id")
