"""Annotation campaigns: their progress as the queue list and the campaign page show
it (annotation.progress, annotation.dashboard), and their labels as the page's
export gives them, in keyset pages. Managers only, as the campaign pages."""

from datetime import datetime
from typing import Any

from django.db.models import Count, F, Q
from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema

from annotation.dashboard import campaign_dashboard, export_labels, export_rows
from annotation.models import Campaign
from annotation.progress import campaigns_progress
from api.cursor import BadCursor, decode_cursor, encode_cursor
from api.schemas import answers, invalid
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required

router = Router(tags=["annotation campaigns"])


class CampaignProgressOut(Schema):
    done: int = Field(description="Labels submitted (a correction not counted again)")
    needed: int = Field(description="Tasks × overlap")
    people: int = Field(description="Assignees")


class CampaignOut(Schema):
    id: int
    benchmark: str
    name: str
    kind: str
    scale: str
    status: str
    overlap: int
    ask_safety: bool
    created_at: datetime
    closed_at: datetime | None
    tasks_total: int
    tasks_done: int = Field(description="Tasks with `overlap` labels")
    progress: CampaignProgressOut


class PersonOut(Schema):
    username: str
    submitted: int
    skipped: int
    holding: int = Field(description="Tasks leased now")
    corrections: int
    median_seconds: float | None
    last_hour: int
    per_hour: float | None


class CampaignDetailOut(CampaignOut):
    median_seconds: float | None
    people: list[PersonOut]
    active_leases: int
    majority: dict[str, Any] | None = Field(
        description="Binary grading: the decisions by majority vote (null otherwise)"
    )


class LabelPage(Schema):
    labels: list[dict[str, Any]] = Field(
        description="The rows of the campaign page's label export (labels.jsonl), "
        "corrections included"
    )
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page"
    )


@router.get(
    "/benchmarks/{slug}/campaigns", response=answers({200: list[CampaignOut]}, 404)
)
@role_required(Role.MANAGER)
def list_campaigns(request, slug: str):
    """Every campaign of the benchmark, newest first, open and closed."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    campaigns = list(_with_task_counts(benchmark.campaigns.all()))
    progress = campaigns_progress(campaigns)
    return [
        _campaign(c, benchmark, progress[c.pk], c.tasks_total, c.tasks_done)
        for c in campaigns
    ]


@router.get("/campaigns/{campaign_id}", response=answers({200: CampaignDetailOut}, 404))
@role_required(Role.MANAGER)
def get_campaign(request, campaign_id: int):
    """The campaign with what its page shows of its progress: per person, the
    median time per label, leases held and, for binary grading, the majority."""
    campaign = get_object_or_404(
        Campaign.objects.select_related("benchmark"), pk=campaign_id
    )
    page = campaign_dashboard(campaign)
    majority = page["majority"]
    return {
        **_campaign(
            campaign,
            campaign.benchmark,
            page["progress"],
            page["task_count"],
            page["complete_tasks"],
        ),
        "median_seconds": page["median_seconds"],
        "people": [
            {**person, "username": person["user"].get_username()}
            for person in page["people"]
        ],
        "active_leases": len(page["leases"]),
        "majority": None
        if majority is None
        else {"overall": majority["overall"], "ties": majority["tie_count"]},
    }


@router.get(
    "/campaigns/{campaign_id}/labels", response=answers({200: LabelPage}, 404, 422)
)
@role_required(Role.MANAGER)
def campaign_labels(
    request,
    campaign_id: int,
    cursor: str | None = None,
    limit: int = Query(500, ge=1, le=2000),
):
    """Every label submitted in the campaign, `limit` per page in the order they
    were stored: the same rows as the campaign page's export."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        after = decode_cursor(cursor) if cursor else 0
    except BadCursor as error:
        raise invalid("cursor", str(error)) from None
    # Keyset order (api.cursor) rather than the export's creation time: labels are
    # stored as they are made, so the two differ only within a moment.
    labels = list(
        export_labels(campaign).filter(pk__gt=after).order_by("pk")[: limit + 1]
    )
    more, labels = len(labels) > limit, labels[:limit]
    return {
        "labels": list(export_rows(campaign, labels)),
        "next_cursor": encode_cursor(labels[-1].pk) if more else None,
    }


def _with_task_counts(campaigns):
    # The campaign page counts a task complete at `overlap` labels; here for many
    # campaigns in one query.
    return campaigns.annotate(
        tasks_total=Count("tasks"),
        tasks_done=Count("tasks", filter=Q(tasks__label_count__gte=F("overlap"))),
    )


def _campaign(
    campaign: Campaign, benchmark: Benchmark, progress: dict, total: int, done: int
) -> dict:
    return {
        "id": campaign.pk,
        "benchmark": benchmark.slug,
        "name": campaign.name,
        "kind": campaign.kind,
        "scale": campaign.scale,
        "status": campaign.status,
        "overlap": campaign.overlap,
        "ask_safety": campaign.ask_safety,
        "created_at": campaign.created_at,
        "closed_at": campaign.closed_at,
        "tasks_total": total,
        "tasks_done": done,
        "progress": progress,
    }
