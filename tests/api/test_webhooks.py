"""Webhooks: the signature, emitting, idempotence, sending to a real local server
with retries and timeouts, a run's end emitting, and the pages."""

import hashlib
import hmac
import json
import time

import pytest
from django.core.exceptions import ValidationError

from api import events
from api.models import Webhook, WebhookDelivery
from api.webhooks.actions import (
    check_webhook_url,
    do_create_webhook,
    do_deactivate_webhook,
)
from api.webhooks.sending import deliver
from api.webhooks.signing import signature
from tests.api.webhook_receiver import Receiver

EVENT = "run.complete"


def independent_signature(secret: str, headers: dict, body: bytes) -> str:
    signed = headers["X-Assay-Timestamp"].encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


@pytest.fixture(autouse=True)
def receiver_allowed(settings):
    # The receiver listens on loopback, which a webhook reaches only when named.
    settings.WEBHOOK_HOSTS = ["127.0.0.1", ".example.org"]


@pytest.fixture
def hook(personas):
    webhook, _ = do_create_webhook(
        personas["manager"], "http://127.0.0.1:9/hook", [EVENT]
    )
    return webhook


def aim(webhook, url):
    Webhook.objects.filter(pk=webhook.pk).update(url=url)


def test_signature_is_hmac_sha256_of_timestamp_dot_body():
    body = b'{"event":"run.complete"}'
    expected = hmac.new(b"whsec_x", b"1700000000." + body, hashlib.sha256)
    assert signature("whsec_x", 1700000000, body) == "sha256=" + expected.hexdigest()
    assert signature("whsec_y", 1700000000, body) != signature(
        "whsec_x", 1700000000, body
    )


@pytest.mark.parametrize(
    "url",
    ["ftp://example.org/x", "https://user:pw@example.org/x", "example.org", ""],
)
def test_bad_urls_are_refused(url):
    with pytest.raises(ValidationError):
        check_webhook_url(url)


def test_webhook_hosts_allow_list(settings):
    settings.WEBHOOK_HOSTS = [".example.org"]
    assert check_webhook_url("https://ci.example.org/h") == "https://ci.example.org/h"
    with pytest.raises(ValidationError, match="not an allowed webhook host"):
        check_webhook_url("http://10.0.0.5/h")


def test_emit_creates_one_delivery_per_subscribed_webhook(
    personas, hook, django_capture_on_commit_callbacks
):
    manager = personas["manager"]
    other, _ = do_create_webhook(manager, "https://a.example.org/", ["run.cancelled"])
    inactive, _ = do_create_webhook(manager, "https://b.example.org/", [EVENT])
    do_deactivate_webhook(inactive)
    with django_capture_on_commit_callbacks() as queued:
        created = events.emit(EVENT, {"run": 1}, "evaluation-run:1:complete:t")
    assert [d.webhook for d in created] == [hook]
    assert len(queued) == 1
    assert not other.deliveries.exists() and not inactive.deliveries.exists()


def test_webhooks_of_users_no_longer_managers_get_nothing(personas, hook):
    personas["manager"].groups.clear()
    assert events.emit(EVENT, {"run": 1}, "e1") == []


def test_emitting_the_same_event_twice_delivers_once(hook):
    assert len(events.emit(EVENT, {"run": 1}, "same")) == 1
    assert events.emit(EVENT, {"run": 1}, "same") == []
    assert WebhookDelivery.objects.filter(webhook=hook).count() == 1


def test_delivery_is_signed_retried_after_500_and_never_sent_twice(hook, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    (delivery,) = events.emit(EVENT, {"run": 7, "benchmark": "b"}, "run-7")
    with Receiver(500, 200) as receiver:
        aim(hook, receiver.url)
        before = int(time.time())
        assert deliver(delivery.pk) == WebhookDelivery.Status.PENDING
        delivery.refresh_from_db()
        assert (delivery.attempts, delivery.last_status_code) == (1, 500)
        assert delivery.next_attempt_at is not None and "HTTP 500" in (
            delivery.last_error
        )
        assert deliver(delivery.pk) == WebhookDelivery.Status.DELIVERED
        assert deliver(delivery.pk) is None  # delivered: never sent again
        after = int(time.time())
    assert len(receiver.received) == 2
    sent = receiver.received[-1]
    assert sent.headers["X-Assay-Event"] == EVENT
    assert sent.headers["X-Assay-Delivery"] == str(delivery.pk)
    assert before <= int(sent.headers["X-Assay-Timestamp"]) <= after
    assert sent.headers["X-Assay-Signature"] == independent_signature(
        hook.secret, sent.headers, sent.body
    )
    assert json.loads(sent.body) == {
        "event": EVENT,
        "id": "run-7",
        "delivery": delivery.pk,
        "data": {"run": 7, "benchmark": "b"},
    }
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert (delivery.attempts, delivery.last_error) == (2, "")
    assert delivery.delivered_at is not None


def test_a_receiver_that_never_answers_ends_failed_with_the_reason(hook, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    (delivery,) = events.emit(EVENT, {"run": 8}, "run-8")
    with Receiver(delay=3) as receiver:
        aim(hook, receiver.url)
        deliver(delivery.pk)
        assert deliver(delivery.pk) == WebhookDelivery.Status.FAILED
        assert len(receiver.received) == 2
    delivery.refresh_from_db()
    assert delivery.attempts == 2 and delivery.last_status_code is None
    assert "No answer within WEBHOOK_TIMEOUT_SECONDS" in delivery.last_error


def test_a_refused_connection_is_a_failed_attempt(hook, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    (delivery,) = events.emit(EVENT, {"run": 9}, "run-9")
    assert deliver(delivery.pk) == WebhookDelivery.Status.FAILED
    delivery.refresh_from_db()
    assert "ConnectError" in delivery.last_error
