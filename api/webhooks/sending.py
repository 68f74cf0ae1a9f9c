"""POST one webhook delivery (worker side only; a web request never calls this).

`deliver` locks the delivery row and keeps it locked across the POST: a second copy
of the task (a redelivered message, a re-send clicked twice) waits, then finds the
delivery no longer pending and sends nothing. The POST is bounded by
WEBHOOK_TIMEOUT_SECONDS, so the lock is too. A 2xx answer delivers; anything else —
another status, a refused connection, a timeout — is an attempt that failed, retried
after an exponential back-off until WEBHOOK_MAX_ATTEMPTS, then the delivery fails
with the last reason on the log.
"""

import time
from datetime import timedelta

import httpx2
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from api.models import WebhookDelivery
from api.webhooks.actions import DELIVER_TASK, check_webhook_url
from api.webhooks.signing import backoff_seconds, body_of, headers
from assay.celery import enqueue

ERROR_CHARS = 1000


def deliver(delivery_id: int) -> str | None:
    """Make one attempt at a pending delivery; returns its status afterwards, or
    None when there was nothing to send."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("webhook")
            .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
            .first()
        )
        if delivery is None:
            return None
        webhook = delivery.webhook
        if not webhook.is_active:
            _fail(delivery, "The webhook was deactivated; nothing was sent.")
            return delivery.status
        code, error = _post(delivery)
        delivery.attempts += 1
        delivery.last_status_code = code
        delivery.last_error = error[:ERROR_CHARS]
        delivery.next_attempt_at = None
        if error == "":
            delivery.status = WebhookDelivery.Status.DELIVERED
            delivery.delivered_at = timezone.now()
        elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
            delivery.status = WebhookDelivery.Status.FAILED
        else:
            wait = backoff_seconds(
                delivery.attempts,
                settings.WEBHOOK_BACKOFF_BASE_SECONDS,
                settings.WEBHOOK_BACKOFF_MAX_SECONDS,
            )
            delivery.next_attempt_at = timezone.now() + timedelta(seconds=wait)
            enqueue(DELIVER_TASK, delivery.pk, countdown=wait)
        delivery.save(
            update_fields=[
                "attempts",
                "status",
                "last_status_code",
                "last_error",
                "next_attempt_at",
                "delivered_at",
            ]
        )
    return delivery.status


def _post(delivery: WebhookDelivery) -> tuple[int | None, str]:
    """(status code, "" when delivered, else the reason it was not)."""
    webhook = delivery.webhook
    try:
        url = check_webhook_url(webhook.url)
    except ValidationError as error:
        return None, error.messages[0]
    body = body_of(
        delivery.event_type, delivery.event_id, delivery.pk, delivery.payload
    )
    sent_headers = headers(
        webhook.secret, delivery.event_type, delivery.pk, int(time.time()), body
    )
    try:
        response = httpx2.post(
            url,
            content=body,
            headers=sent_headers,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            follow_redirects=False,
        )
    except httpx2.TimeoutException:
        return None, (
            f"No answer within WEBHOOK_TIMEOUT_SECONDS "
            f"({settings.WEBHOOK_TIMEOUT_SECONDS} s)."
        )
    except httpx2.HTTPError as error:
        return None, f"{type(error).__name__}: {error}"
    if 200 <= response.status_code < 300:
        return response.status_code, ""
    return response.status_code, f"HTTP {response.status_code}: {response.text[:200]}"


def _fail(delivery: WebhookDelivery, reason: str) -> None:
    delivery.status = WebhookDelivery.Status.FAILED
    delivery.last_error = reason
    delivery.next_attempt_at = None
    delivery.save(update_fields=["status", "last_error", "next_attempt_at"])
