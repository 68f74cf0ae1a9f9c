"""POST one webhook delivery (worker side only; a web request never calls this).

`deliver` claims the delivery, commits, POSTs, then records the outcome: no row lock
or transaction is held across the network. The claim (`sending_until`, the POST's
deadline plus a margin) makes a second copy of the task (a redelivered message, a
re-send clicked twice) that comes while the first is sending send nothing; a claim
left by a killed worker lapses, and a later copy sends again. The POST, its answer
included, is bounded whole by WEBHOOK_TIMEOUT_SECONDS (assay/outbound.py: a receiver
that trickles is cut off), and only the first READ_BYTES of an answer are read. A
2xx answer delivers; anything else — another status, a refused connection, a
time-out — is an attempt that failed, retried after an exponential back-off until
WEBHOOK_MAX_ATTEMPTS, then the delivery fails with the last reason on the log.
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
from assay import outbound
from assay.celery import enqueue
from assay.targets import connectable, is_internal_address

ERROR_CHARS = 1000
# Of an answer only its start is read, for the log; the rest is never fetched.
READ_BYTES = 2048
CLAIM_MARGIN_SECONDS = 30


def deliver(delivery_id: int) -> str | None:
    """Make one attempt at a pending delivery; returns its status afterwards, or
    None when there was nothing to send."""
    delivery = _claim(delivery_id)
    if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
        return delivery and delivery.status
    code, error = _post(delivery)
    return _record(delivery.pk, code, error)


def _claim(delivery_id: int) -> WebhookDelivery | None:
    """The pending delivery, claimed for one POST (committed on return); None when
    there is nothing to send or another copy is sending it now."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("webhook")
            .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
            .first()
        )
        if delivery is None:
            return None
        if not delivery.webhook.is_active:
            _fail(delivery, "The webhook was deactivated; nothing was sent.")
            return delivery
        now = timezone.now()
        if delivery.sending_until is not None and delivery.sending_until > now:
            return None
        delivery.sending_until = now + timedelta(
            seconds=settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS
        )
        delivery.save(update_fields=["sending_until"])
    return delivery


def _record(delivery_id: int, code: int | None, error: str) -> str | None:
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update()
            .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
            .first()
        )
        if delivery is None:
            return None
        delivery.attempts += 1
        delivery.last_status_code = code
        delivery.last_error = error[:ERROR_CHARS]
        delivery.next_attempt_at = None
        delivery.sending_until = None
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
                "sending_until",
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
    seconds = settings.WEBHOOK_TIMEOUT_SECONDS
    # The POST goes to an address checked as check_webhook_url checks the URL's
    # host, resolved once for the connection (assay/targets.py: DNS rebinding).
    addresses = connectable(settings.WEBHOOK_HOSTS, "WEBHOOK_HOSTS", "webhook URL")
    try:
        with (
            outbound.client(
                seconds=seconds,
                max_bytes=READ_BYTES,
                addresses=addresses,
                follow_redirects=False,
            ) as client,
            client.stream("POST", url, content=body, headers=sent_headers) as answer,
        ):
            if 200 <= answer.status_code < 300:
                return answer.status_code, ""
            internal = is_internal_address(outbound.peer_address(answer))
            start = _start_of(answer)
            if internal:
                return answer.status_code, (
                    f"HTTP {answer.status_code} (the answer is not shown: the "
                    "receiver is at an internal address)."
                )
    except outbound.TargetRefused as error:
        return None, str(error)
    except httpx2.TimeoutException:
        return None, f"No answer within WEBHOOK_TIMEOUT_SECONDS ({seconds} s)."
    except httpx2.HTTPError as error:
        return None, f"{type(error).__name__}: {error}"
    return answer.status_code, f"HTTP {answer.status_code}: {start[:200]}"


def _start_of(answer: httpx2.Response) -> str:
    """The first READ_BYTES of an answer's body (undecoded: a compressed body is
    not shown), the rest left unread."""
    if answer.headers.get("content-encoding", "identity") != "identity":
        return f"(a {answer.headers['content-encoding']} body)"
    start = b""
    try:
        for chunk in answer.iter_raw(READ_BYTES):
            start += chunk
            if len(start) >= READ_BYTES:
                break
    except outbound.BodyTooLarge:
        pass
    return start[:READ_BYTES].decode("utf-8", "replace")


def _fail(delivery: WebhookDelivery, reason: str) -> None:
    delivery.status = WebhookDelivery.Status.FAILED
    delivery.last_error = reason
    delivery.next_attempt_at = None
    delivery.save(update_fields=["status", "last_error", "next_attempt_at"])
