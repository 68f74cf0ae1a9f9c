"""What the campaign dashboard and the label export read (no writes)."""

import statistics
from collections import defaultdict
from datetime import timedelta

import numpy as np
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.utils import timezone

from annotation.majority import (
    DECISION_NAMES,
    TIE,
    combined_accuracy,
    decide,
    tally,
)
from annotation.models import (
    AdjudicationLabel,
    Assignment,
    Campaign,
    GradingLabel,
    Task,
)
from annotation.progress import campaign_progress
from benchmark.models import Item
from judging.evaluation.grades import FORMATS, load_binary
from judging.evaluation.models import EvaluationRun
from judging.reporting.consensus import MISSING
from judging.reporting.definitions import footnote

RECENT_LABELS = 50
TIES_SHOWN = 50
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

# The per-response export of a binary campaign: each response's votes and decision.
VOTE_COLUMNS = (
    "campaign_id",
    "campaign",
    "task_position",
    "item",
    "item_id",
    "response_id",
    "run_id",
    "model",
    "language",
    "panel",
    "votes_given",
    "correct_votes",
    "incorrect_votes",
    "votes",
    "decision",
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


def export_labels(campaign: Campaign):
    """labels_of with what export_rows reads of each label's task."""
    return labels_of(campaign).select_related("task__response__run", "task__rendering")


def export_rows(campaign: Campaign, labels=None):
    """Every label ever submitted in the campaign, corrections included, with what
    it was about: the item, and the model run and language of a graded response or
    the language of a reviewed translation. `labels`: some of export_labels, for a
    page of them (the REST API's); by default all, streamed."""
    if labels is None:
        labels = export_labels(campaign).iterator(chunk_size=2000)
    for label in labels:
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


def majority_votes(campaign: Campaign, latest) -> tuple[list, np.ndarray, list, list]:
    """A binary campaign's tasks in queue order (dicts of their item and response),
    their votes (tasks × overlap, -1 where a vote is missing), each task's
    (voter, vote) pairs and its decision by `majority.decide`. `latest` holds the
    (task id, voter, score) of every latest label; the voter is passed through."""
    tasks = list(
        Task.objects.filter(campaign=campaign)
        .order_by("position")
        .values(
            "id",
            "position",
            "item_id",
            "item__external_id",
            "response_id",
            "response__run_id",
        )
    )
    row_of = {task["id"]: row for row, task in enumerate(tasks)}
    votes = np.full((len(tasks), campaign.overlap), MISSING, dtype=np.int64)
    voters = [[] for _ in tasks]
    for task_id, voter, score in latest:
        row = row_of[task_id]
        votes[row, len(voters[row])] = score
        voters[row].append((voter, score))
    return tasks, votes, voters, decide(votes).tolist()


def _runs_of(tasks) -> dict[int, EvaluationRun]:
    run_ids = {task["response__run_id"] for task in tasks}
    return {run.pk: run for run in EvaluationRun.objects.filter(pk__in=run_ids)}


def majority_summary(campaign: Campaign, labels) -> dict | None:
    """What a binary campaign's page shows of its majority vote: the decisions
    overall and per tested model (a run), and the ties. `labels` are the rows the
    dashboard has read, with task id and score; None for other campaigns."""
    if not campaign.is_binary:
        return None
    latest = [
        (task_id, user_id, score)
        for user_id, _, is_latest, _, task_id, score in labels
        if is_latest
    ]
    tasks, votes, _, decisions = majority_votes(campaign, latest)
    decisions = np.array(decisions, dtype=np.int64)
    runs = _runs_of(tasks)
    run_of_task = np.array([task["response__run_id"] for task in tasks])
    models = []
    for run in sorted(runs.values(), key=str):
        counts = tally(decisions[run_of_task == run.pk])
        accuracy = counts["accuracy"]
        percent = None if accuracy is None else round(100 * accuracy, 1)
        parts = {
            **choice_counts(run),
            "open": (counts["correct"], counts["decided"]),
        }
        overall = combined_accuracy(parts)
        models.append(
            {
                "run": run,
                **counts,
                "percent": percent,
                "parts": parts,
                "overall": None if overall is None else round(100 * overall, 1),
            }
        )
    tied = np.flatnonzero(decisions == TIE)
    return {
        "combined_note": footnote("combined-accuracy"),
        "overall": tally(decisions),
        "models": models,
        "tie_count": len(tied),
        "ties": [
            {
                **tasks[row],
                "correct": int((votes[row] == 1).sum()),
                "incorrect": int((votes[row] == 0).sum()),
            }
            for row in tied[:TIES_SHOWN]
        ],
    }


def choice_counts(run: EvaluationRun) -> dict[str, tuple[int, int]]:
    """(correct, tested) of a binary run's multiple-choice and true/false answers
    over its trials, as study 002 §2.3 counts them: every tested answer, flagged
    and provider-refused ones as not correct. Empty for a 0–3 run."""
    if not run.binary:
        return {}
    matrix = load_binary([run])
    tested = matrix.tested_score()[0]
    counts = {}
    for name, item_format in (
        ("mc", Item.Format.MULTIPLE_CHOICE),
        ("tf", Item.Format.TRUE_FALSE),
    ):
        scores = tested[matrix.item_format == FORMATS.index(item_format)]
        counts[name] = (int(np.sum(scores == 1)), int(np.sum(~np.isnan(scores))))
    return counts


def vote_rows(campaign: Campaign):
    """One row per response of a binary campaign, in queue order: what it was (the
    item, the tested run), each expert's latest vote and the majority decision."""
    latest = (
        GradingLabel.objects.filter(task__campaign=campaign, is_latest=True)
        .order_by("created_at", "id")
        .values_list("task_id", "user__username", "score")
    )
    tasks, votes, voters, decisions = majority_votes(campaign, latest)
    runs = _runs_of(tasks)
    for task, row, given, decision in zip(tasks, votes, voters, decisions, strict=True):
        run = runs[task["response__run_id"]]
        yield {
            "campaign_id": campaign.pk,
            "campaign": campaign.name,
            "task_position": task["position"] + 1,
            "item": task["item__external_id"],
            "item_id": task["item_id"],
            "response_id": task["response_id"],
            "run_id": run.pk,
            "model": run.model_name,
            "language": run.language,
            "panel": campaign.overlap,
            "votes_given": len(given),
            "correct_votes": int((row == 1).sum()),
            "incorrect_votes": int((row == 0).sum()),
            "votes": "; ".join(f"{voter}={score}" for voter, score in given),
            "decision": DECISION_NAMES[decision],
        }


def per_person(campaign: Campaign, labels, now) -> list[dict]:
    """Labels, corrections, skips, median time and throughput per person, from the
    campaign's (user_id, seconds_spent, is_latest, created_at) label rows."""
    hour_ago = now - timedelta(hours=1)
    seconds = defaultdict(list)
    corrections = defaultdict(int)
    first_at, last_at = {}, {}
    for user_id, spent, latest, created, *_ in labels:
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
    columns = ["user_id", "seconds_spent", "is_latest", "created_at"]
    if campaign.is_binary:
        # The majority vote reads the same rows: still one pass over the labels.
        columns += ["task_id", "score"]
    labels = list(
        campaign.label_model.objects.filter(task__campaign=campaign).values_list(
            *columns
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
        "majority": majority_summary(campaign, labels),
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
