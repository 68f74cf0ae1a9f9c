"""Webhook events: `emit` turns one event into one delivery per subscribed webhook.

Other apps sit below api and never import it: they queue `api.tasks.emit_event` by
name (`assay.celery.enqueue`) inside the transaction that changed their state, so
the event exists only if that change commits. Each delivery is then sent by its own
task on a worker (api.webhooks.sending), never from a web request.
"""

from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Q

from api.models import Webhook, WebhookDelivery, WebhookEvent
from api.webhooks.actions import DELIVER_TASK
from assay.celery import enqueue
from benchmark.roles import Role


def subscribed(event_type: str) -> list[Webhook]:
    """Active webhooks of active managers (events carry benchmark data only they
    see) that want `event_type`. Few rows: the event list is read in Python, which
    every database can do."""
    managers = Q(user__is_superuser=True) | Q(
        user__groups__in=Group.objects.filter(name=Role.MANAGER)
    )
    hooks = Webhook.objects.filter(managers, is_active=True, user__is_active=True)
    return [hook for hook in hooks.distinct() if event_type in hook.events]


def emit(event_type: str, payload: dict, event_id: str) -> list[WebhookDelivery]:
    """Create the deliveries of one event and queue their sending after commit.

    `event_id` names the event (e.g. "labelling-run:7:complete:…"): emitting the same
    id again creates nothing, so a redelivered task sends nothing twice. Returns the
    deliveries created now."""
    if event_type not in WebhookEvent.values:
        raise ValueError(f"Unknown webhook event {event_type!r}.")
    created = []
    with transaction.atomic():
        for hook in subscribed(event_type):
            delivery, new = WebhookDelivery.objects.get_or_create(
                webhook=hook,
                event_id=event_id,
                defaults={"event_type": event_type, "payload": payload},
            )
            if new:
                enqueue(DELIVER_TASK, delivery.pk)
                created.append(delivery)
    return created
