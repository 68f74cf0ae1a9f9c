"""A webhook receiver that never answers in full holds no worker and no row lock:
deliveries on a real worker to a receiver that trickles its answer one byte a
second, or sends a 1 GiB error body. Each POST is bounded whole by
WEBHOOK_TIMEOUT_SECONDS (3 s here) and only its answer's start is read
(assay/outbound.py); the delivery is claimed and committed before the POST, so no
transaction is open while it waits; the next delivery (to a receiver that
answers) goes out on the same worker process.

The polling limit is a liveness bound (worker start-up, 2 attempts of 3 s and a
1 s back-off, a loaded machine), not a timing assertion.
"""

import time

import pytest
from django.db import transaction

from api import events
from api.models import WebhookDelivery
from api.webhooks.actions import do_create_webhook
from tests.api.webhook_receiver import Receiver
from tests.judging.labelling_fixtures import wait_until
from tests.worker_checks import IDLE_SECONDS, open_transactions, peak_rss_bytes

EVENT = "run.complete"
WEBHOOK_ENV = {
    "WEBHOOK_TIMEOUT_SECONDS": "3",
    "WEBHOOK_MAX_ATTEMPTS": "2",
    "WEBHOOK_BACKOFF_BASE_SECONDS": "1",
    "WEBHOOK_BACKOFF_MAX_SECONDS": "1",
    "WEBHOOK_HOSTS": "127.0.0.1",  # the receivers are local
}
LIVENESS_SECONDS = 90


def settled(*deliveries):
    def check():
        return not WebhookDelivery.objects.filter(
            pk__in=[d.pk for d in deliveries], status=WebhookDelivery.Status.PENDING
        ).exists()

    return check


@pytest.mark.worker
def test_a_trickling_receiver_holds_no_lock_and_no_worker(
    killable_worker, personas, settings
):
    settings.WEBHOOK_HOSTS = ["127.0.0.1"]
    manager = personas["manager"]
    with Receiver(*[500] * 4, fault="trickle") as slow, Receiver() as good:
        do_create_webhook(manager, slow.url, [EVENT])
        killable_worker.env.update(WEBHOOK_ENV)
        killable_worker.start()
        with transaction.atomic():
            events.emit(EVENT, {"run": 1}, "run-1")
        wait_until(lambda: slow.received, LIVENESS_SECONDS, "nothing was POSTed")
        # The receiver is trickling its answer now: nothing may sit locked.
        time.sleep(IDLE_SECONDS + 0.5)
        assert open_transactions() == []
        do_create_webhook(manager, good.url, [EVENT])
        with transaction.atomic():
            events.emit(EVENT, {"run": 2}, "run-2")
        deliveries = list(WebhookDelivery.objects.all())
        wait_until(settled(*deliveries), LIVENESS_SECONDS, "a delivery is pending")
    slow_ones = WebhookDelivery.objects.filter(webhook__url=slow.url)
    for delivery in slow_ones:
        assert delivery.status == WebhookDelivery.Status.FAILED
        assert delivery.attempts == 2
        assert "No answer within WEBHOOK_TIMEOUT_SECONDS (3 s)" in delivery.last_error
    delivered = WebhookDelivery.objects.get(webhook__url=good.url)
    assert delivered.status == WebhookDelivery.Status.DELIVERED
    assert open_transactions() == []


@pytest.mark.worker
def test_a_huge_error_body_is_never_read_whole(killable_worker, personas, settings):
    settings.WEBHOOK_HOSTS = ["127.0.0.1"]
    with Receiver(500, 500, fault="huge") as huge:
        do_create_webhook(personas["manager"], huge.url, [EVENT])
        killable_worker.env.update(WEBHOOK_ENV)
        killable_worker.start()
        with transaction.atomic():
            (delivery,) = events.emit(EVENT, {"run": 3}, "run-3")
        wait_until(settled(delivery), LIVENESS_SECONDS, "the delivery is pending")
        peak = peak_rss_bytes(killable_worker.process.pid)
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert delivery.attempts == 2 and delivery.last_status_code == 500
    # The receiver is local: the start of its answer is read but not shown.
    assert delivery.last_error.startswith("HTTP 500 (the answer is not shown")
    # A worker holds a few hundred MB at most; the body alone is 1 GiB.
    assert peak < 512 * 1024 * 1024, peak
