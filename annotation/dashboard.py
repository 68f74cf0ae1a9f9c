"""What the campaign dashboard and the label export read (no writes)."""

import statistics
from collections import defaultdict
from datetime import timedelta

from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import AdjudicationLabel, Assignment, Campaign, Task
from annotation.progress import campaign_progress

RECENT_LABELS = 50
LABELS_PER_PAGE = 25
EXPORT_COLUMNS = (
    "campaign_id",
    "campaign",
    "kind",
    "task_position",
    "item",
    "item_id",
    "user",
    "created_at",
    "seconds_spent",
    "is_latest",
    "score",
    "safety_violation",
    "label",
    "note",
    "decision",
    "reason",
    "response_id",
    "run_id",
    "model",
    "language",
    "rendering_id",
)


def _label_fields(campaign: Campaign, label) -> dict:
    fields = dict.fromkeys(
        ("score", "safety_violation", "label", "note", "decision", "reason"), None
    )
    if campaign.kind in (Campaign.Kind.GRADING, Campaign.Kind.SAFETY):
        fields.update(score=label.score, safety_violation=label.safety_violation)
    elif campaign.kind == Campaign.Kind.ADJUDICATION:
        fields.update(label=label.label.code, note=label.note)
    else:
        fields.update(decision=label.decision, reason=label.reason)
    return fields


def labels_of(campaign: Campaign):
    related = ["task__item", "user"]
    if campaign.kind == Campaign.Kind.ADJUDICATION:
        related.append("label")
    return (
        campaign.label_model.objects.filter(task__campaign=campaign)
        .select_related(*related)
        .order_by("created_at", "id")
    )


def export_rows(campaign: Campaign):
    """Every label ever submitted in the campaign, corrections included, with what
    it was about: the item, and the model run and language of a graded response or
    the language of a reviewed translation."""
    labels = labels_of(campaign).select_related(
        "task__response__run", "task__rendering"
    )
    for label in labels.iterator(chunk_size=2000):
        task = label.task
        run = task.response.run if task.response_id else None
        yield {
            "campaign_id": campaign.pk,
            "campaign": campaign.name,
            "kind": campaign.kind,
            "task_position": task.position + 1,
            "item": task.item.external_id,
            "item_id": task.item_id,
            "user": label.user.get_username(),
            "created_at": label.created_at.isoformat(),
            "seconds_spent": round(label.seconds_spent, 3),
            "is_latest": label.is_latest,
            **_label_fields(campaign, label),
            "response_id": task.response_id,
            "run_id": run.pk if run else None,
            "model": run.model_name if run else None,
            "language": run.language
            if run
            else (task.rendering.language if task.rendering_id else None),
            "rendering_id": task.rendering_id,
        }


def per_person(campaign: Campaign, labels, now) -> list[dict]:
    """Labels, corrections, skips, median time and throughput per person, from the
    campaign's (user_id, seconds_spent, is_latest, created_at) label rows."""
    hour_ago = now - timedelta(hours=1)
    seconds = defaultdict(list)
    corrections = defaultdict(int)
    first_at, last_at = {}, {}
    for user_id, spent, latest, created in labels:
        seconds[user_id].append(spent)
        corrections[user_id] += 0 if latest else 1
        first_at[user_id] = min(first_at.get(user_id, created), created)
        last_at[user_id] = max(last_at.get(user_id, created), created)
    counts = {
        row["user_id"]: row
        for row in Assignment.objects.filter(campaign=campaign)
        .values("user_id")
        .annotate(
            submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
            skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
            holding=Count(
                "id",
                filter=Q(status=Assignment.Status.ACTIVE, expires_at__gt=now),
            ),
            last_hour=Count(
                "id",
                filter=Q(status=Assignment.Status.SUBMITTED, finished_at__gte=hour_ago),
            ),
        )
    }
    people = []
    for user in campaign.assignees.order_by("username"):
        row = counts.get(user.pk, {})
        spent = seconds.get(user.pk, [])
        span = (
            (last_at[user.pk] - first_at[user.pk]).total_seconds()
            if user.pk in first_at
            else 0
        )
        people.append(
            {
                "user": user,
                "submitted": row.get("submitted", 0),
                "skipped": row.get("skipped", 0),
                "holding": row.get("holding", 0),
                "corrections": corrections.get(user.pk, 0),
                "median_seconds": statistics.median(spent) if spent else None,
                "last_hour": row.get("last_hour", 0),
                "per_hour": round(len(spent) * 3600 / span, 1) if span > 60 else None,
            }
        )
    return people


def _label_log(campaign: Campaign, count: int, number):
    paginator = Paginator(
        labels_of(campaign).order_by("-created_at", "-id"), LABELS_PER_PAGE
    )
    # The dashboard has just read every label row; no second pass to count them.
    paginator.count = count
    return paginator.get_page(number)


def campaign_dashboard(campaign: Campaign, labels_page=None) -> dict:
    """Everything the dashboard shows; it polls, so each table is read once. The
    label log is paged, newest first (`labels_page`: a page number, any bad value
    shows the nearest page)."""
    now = timezone.now()
    labels = list(
        campaign.label_model.objects.filter(task__campaign=campaign).values_list(
            "user_id", "seconds_spent", "is_latest", "created_at"
        )
    )
    tasks = Task.objects.filter(campaign=campaign)
    counts = tasks.aggregate(
        total=Count("id"),
        complete=Count("id", filter=Q(label_count__gte=campaign.overlap)),
    )
    return {
        "campaign": campaign,
        "progress": campaign_progress(campaign),
        "task_count": counts["total"],
        "complete_tasks": counts["complete"],
        "median_seconds": statistics.median(row[1] for row in labels)
        if labels
        else None,
        "people": per_person(campaign, labels, now),
        "leases": Assignment.objects.filter(
            campaign=campaign, status=Assignment.Status.ACTIVE
        )
        .select_related("user", "task__item")
        .order_by("expires_at"),
        "now": now,
        "reserved": tasks.filter(assigned_to__isnull=False)
        .select_related("assigned_to", "item")
        .order_by("position")[:50],
        "labels_page": _label_log(campaign, len(labels), labels_page),
        "conflicts": adjudication_conflicts(campaign),
        "skips": Assignment.objects.filter(
            campaign=campaign, status=Assignment.Status.SKIPPED
        )
        .select_related("user", "task__item")
        .order_by("-finished_at")[:RECENT_LABELS],
    }


def adjudication_conflicts(campaign: Campaign) -> list[dict]:
    """Tasks whose adjudicators chose different labels: (task, item, dimension, each
    adjudicator's label), for a manager to settle. Empty for other kinds."""
    if campaign.kind != Campaign.Kind.ADJUDICATION:
        return []
    decisions = (
        AdjudicationLabel.objects.filter(task__campaign=campaign, is_latest=True)
        .select_related("user", "label", "task__item", "task__consensus__dimension")
        .order_by("task__position", "created_at")
    )
    by_task: dict[int, list] = {}
    for decision in decisions:
        by_task.setdefault(decision.task_id, []).append(decision)
    return [
        {
            "task": chosen[0].task,
            "item": chosen[0].task.item,
            "dimension": chosen[0].task.consensus.dimension,
            "decisions": chosen,
        }
        for chosen in by_task.values()
        if len({decision.label_id for decision in chosen}) > 1
    ]
