"""Campaign progress and each person's pace, as the work screens, the queue list and
the dashboard show them.

Both are cached, because every screen refresh shows them and progress sums over all
of a campaign's tasks. A cache that only expired would show "0 / 4 labels" beside
"You: 1 done" right after a submit, so `note_label` (run when a label commits) keeps
them current: it counts a first label into the campaign's total and adds the label's
time to the person's pace window. Expiry remains as a safety net.
"""

import statistics

from django.core.cache import cache
from django.db.models import Count, Sum

from annotation.models import Campaign, Task

PACE_WINDOW = 50
PROGRESS_CACHE_SECONDS = 60


def _shape_key(campaign_id: int) -> str:
    return f"annotation:progress:{campaign_id}"


def _done_key(campaign_id: int) -> str:
    return f"annotation:progress-done:{campaign_id}"


def _pace_key(campaign_id: int, user_id: int) -> str:
    return f"annotation:pace:{campaign_id}:{user_id}"


def campaigns_progress(campaigns, found: dict | None = None) -> dict[int, dict]:
    """Labels done / needed and the number of assignees per campaign. The campaigns
    not in the cache are counted together, in two queries however many there are.
    `found`: what a caller has already read of their keys from the cache."""
    if found is None:
        keys = [key for c in campaigns for key in (_shape_key(c.pk), _done_key(c.pk))]
        found = cache.get_many(keys)
    missing = {
        campaign.pk: campaign
        for campaign in campaigns
        if _shape_key(campaign.pk) not in found or _done_key(campaign.pk) not in found
    }
    if missing:
        totals = {
            row["campaign_id"]: row
            for row in Task.objects.filter(campaign_id__in=list(missing))
            .values("campaign_id")
            .annotate(done=Sum("label_count"), tasks=Count("id"))
            .order_by()
        }
        people = dict(
            Campaign.assignees.through.objects.filter(campaign_id__in=list(missing))
            .values("campaign_id")
            .annotate(n=Count("id"))
            .order_by()
            .values_list("campaign_id", "n")
        )
        fresh = {}
        for pk, campaign in missing.items():
            fresh[_shape_key(pk)] = {
                "needed": totals.get(pk, {}).get("tasks", 0) * campaign.overlap,
                "people": people.get(pk, 0),
            }
            fresh[_done_key(pk)] = totals.get(pk, {}).get("done") or 0
        cache.set_many(fresh, PROGRESS_CACHE_SECONDS)
        found.update(fresh)
    return {
        c.pk: {**found[_shape_key(c.pk)], "done": found[_done_key(c.pk)]}
        for c in campaigns
    }


def campaign_progress(campaign: Campaign) -> dict:
    return campaigns_progress([campaign])[campaign.pk]


def progress_and_pace(campaign: Campaign, user, model) -> tuple[dict, float | None]:
    """The campaign's progress and my pace (`my_pace`), read from the cache in one
    round trip: a work screen shows both on every task."""
    pace_key = _pace_key(campaign.pk, user.pk)
    found = cache.get_many([_shape_key(campaign.pk), _done_key(campaign.pk), pace_key])
    window = found.pop(pace_key, None)
    progress = campaigns_progress([campaign], found)[campaign.pk]
    return progress, my_pace(campaign, user, model, window)


def my_pace(campaign: Campaign, user, model, window=None) -> float | None:
    """Median seconds over my latest PACE_WINDOW labels (None before my first);
    `window`: the cached window if the caller has read it."""
    key = _pace_key(campaign.pk, user.pk)
    if window is None:
        window = cache.get(key)
    if window is None:
        window = list(
            model.objects.filter(task__campaign=campaign, user=user)
            .order_by("-created_at")
            .values_list("seconds_spent", flat=True)[:PACE_WINDOW]
        )
        cache.set(key, window, PROGRESS_CACHE_SECONDS)
    return statistics.median(window) if window else None


def note_label(campaign_id: int, user_id: int, seconds: float, *, first: bool):
    """After a label commits: count a first label in its campaign's progress, and add
    its time to the person's pace. Values not in the cache are left to be counted
    on the next read."""
    if first:
        try:
            cache.incr(_done_key(campaign_id))
        except ValueError:
            pass
    key = _pace_key(campaign_id, user_id)
    window = cache.get(key)
    if window is not None:
        cache.set(key, [seconds, *window][:PACE_WINDOW], PROGRESS_CACHE_SECONDS)
