"""The annotation campaigns' queue: who gets which task next (through the
review-queue engine, reviewqueue/overlap.py) and what the work screens read on the
hot path. The flow is written down in QUEUE.md.

The campaign with the person's membership, the posted task and the done count
are the engine's plain statements (`OverlapQueue`); the expert screen's content and
the item's other languages are two more, here, the only ones a screen writes
itself: they run on every annotator's Enter key, and their ORM twins cost 5-10x
the CPU (bench/queue_bench.py, docs/BENCHMARKS.md).
"""

from annotation.models import Assignment, Campaign, Task
from benchmark.models import Rendering
from reviewqueue import engine
from reviewqueue.overlap import LabelSlot, OverlapQueue
from reviewqueue.sql import queue_cursor

# The campaigns' claim and first-label write: the review-queue engine's overlap-N
# half (reviewqueue/overlap.py), over this app's three models.
CAMPAIGN_TASKS = OverlapQueue(
    Campaign,
    Task,
    Assignment,
    "campaign",
    members_field="assignees",
    parent_field="benchmark",
    parent_fields={"id", "name", "slug", "source_language", "is_demo"},
)


def do_claim_next(campaign: Campaign, user) -> Assignment | None:
    """Return the user's current lease, or lease them the next task; None when the
    queue holds nothing more for them."""
    return CAMPAIGN_TASKS.claim(campaign, user)


def take_label_slot(label_model, task_id: int, user, now) -> LabelSlot:
    """Inside a transaction: lock the task and, when this is a fitting first label,
    consume the person's lease and count the label."""
    return CAMPAIGN_TASKS.take_label_slot(label_model, task_id, user, now)


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


# The expert screen's content, blind by construction: the item's knowledge text, the
# response text and the rendering its question came from (else the item's current
# source-language rendering) — never the run, judgments or other people's labels.
GRADING_VIEW_SQL = f"""
SELECT {CAMPAIGN_TASKS.task_columns}, i.knowledge_text, r.text,
       shown.question, shown.answer, shown.language
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
    with queue_cursor() as cursor:
        cursor.execute(
            GRADING_VIEW_SQL,
            {"task": task_id, "source": campaign.benchmark.source_language},
        )
        row = cursor.fetchone()
    split = len(CAMPAIGN_TASKS.task_fields)
    task = CAMPAIGN_TASKS.task_from_row(row[:split])
    task.campaign = campaign
    knowledge, response, question, answer, language = row[split:]
    return task, {
        "question": question or "",
        "reference_answer": answer or "",
        "language": language or "",
        "response_text": response,
        "knowledge_text": knowledge,
    }


# The item's other current renderings that were not rejected, for the expert to
# switch to.
OTHER_RENDERINGS_SQL = f"""
SELECT language, question, answer FROM benchmark_rendering
WHERE item_id = %(item)s AND is_current AND language <> %(language)s
  AND review_status <> '{Rendering.ReviewStatus.REJECTED}'
ORDER BY language
"""


def other_renderings(item_id: int, language: str) -> list[tuple[str, str, str]]:
    """(language, question, answer) of the item's other current renderings that
    were not rejected, by language."""
    with queue_cursor() as cursor:
        cursor.execute(OTHER_RENDERINGS_SQL, {"item": item_id, "language": language})
        return cursor.fetchall()


def campaign_with_membership(campaign_id: int, user, kinds) -> Campaign | None:
    """The campaign (with its benchmark) if it is of one of `kinds`, annotated with
    `user_assigned` and `has_assignees` for the role check; every queue request
    starts here."""
    campaign = CAMPAIGN_TASKS.group_with_membership(campaign_id, user)
    if campaign is None or campaign.kind not in kinds:
        return None
    return campaign


def task_in(campaign: Campaign, task_id: int | None) -> Task | None:
    """The campaign's task `task_id`, or None."""
    return CAMPAIGN_TASKS.task_in(campaign, task_id)


def submitted_count(campaign: Campaign, user) -> int:
    """How many tasks of the campaign this person has labelled."""
    return CAMPAIGN_TASKS.done_count(campaign, user)


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
