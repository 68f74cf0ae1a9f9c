"""Celery tasks of the api app: thin and idempotent (api.events, api.webhooks)."""

from celery import shared_task

from api import events
from api.webhooks import sending


@shared_task(name="api.tasks.emit_event")
def emit_event(event_type: str, payload: dict, event_id: str) -> None:
    """How the apps below api reach `events.emit`: queued by this name."""
    events.emit(event_type, payload, event_id)


@shared_task(name="api.tasks.deliver_webhook")
def deliver_webhook(delivery_id: int) -> None:
    sending.deliver(delivery_id)
