"""The webhooks page and a webhook's delivery log: managers only; the secret is
shown once; a re-send queues a task and makes no network call in the request."""

import pytest
from django.urls import reverse

from api import events
from api.models import Webhook, WebhookDelivery
from api.webhooks.actions import do_create_webhook

URL = "https://ci.example.org/assay-hook"


@pytest.mark.parametrize(
    ("persona", "status"),
    [("manager", 200), ("expert", 403), ("adjudicator", 403), ("reviewer", 403)],
)
def test_only_managers_open_the_page(client_for, persona, status):
    assert client_for(persona).get(reverse("api:webhooks")).status_code == status


def test_create_shows_the_secret_once(client_for):
    client = client_for("manager")
    response = client.post(
        reverse("api:webhooks"), {"url": URL, "events": ["run.complete"]}
    )
    webhook = Webhook.objects.get()
    assert webhook.events == ["run.complete"]
    assert webhook.secret in response.content.decode()
    assert response["Cache-Control"].startswith("max-age=0")
    assert webhook.secret not in client.get(reverse("api:webhooks")).content.decode()
    log = client.get(reverse("api:webhook_log", args=[webhook.pk]))
    assert webhook.secret not in log.content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"url": "https://u:p@x.org/", "events": ["run.complete"]}, "user name"),
        ({"url": "file:///etc/passwd", "events": ["run.complete"]}, "http"),
        ({"url": URL}, "at least one event"),
    ],
)
def test_bad_input_is_refused(client_for, data, message):
    response = client_for("manager").post(reverse("api:webhooks"), data)
    assert response.status_code == 400 and message in response.content.decode()
    assert not Webhook.objects.exists()


def test_log_lists_deliveries_latest_first_and_resend_queues(
    client_for, personas, django_capture_on_commit_callbacks
):
    webhook, _ = do_create_webhook(personas["manager"], URL, ["run.complete"])
    first = events.emit("run.complete", {"run": 1}, "e-first")[0]
    second = events.emit("run.complete", {"run": 2}, "e-second")[0]
    WebhookDelivery.objects.filter(pk=first.pk).update(
        status=WebhookDelivery.Status.FAILED, attempts=6, last_error="HTTP 502: bad"
    )
    client = client_for("manager")
    page = client.get(reverse("api:webhook_log", args=[webhook.pk])).content.decode()
    assert page.index("e-second") < page.index("e-first")
    assert "HTTP 502: bad" in page
    assert reverse("api:resend_delivery", args=[first.pk]) in page
    assert reverse("api:resend_delivery", args=[second.pk]) not in page

    with django_capture_on_commit_callbacks() as queued:
        client.post(reverse("api:resend_delivery", args=[first.pk]))
    assert len(queued) == 1  # the delivery task, run on a worker after commit
    first.refresh_from_db()
    assert (first.status, first.attempts) == (WebhookDelivery.Status.PENDING, 0)


def test_others_cannot_see_or_resend_a_managers_deliveries(client_for, personas):
    webhook, _ = do_create_webhook(personas["manager"], URL, ["run.complete"])
    (delivery,) = events.emit("run.complete", {"run": 1}, "e")
    other = client_for("expert")
    assert other.get(reverse("api:webhook_log", args=[webhook.pk])).status_code == 403
    resend = reverse("api:resend_delivery", args=[delivery.pk])
    assert other.post(resend).status_code == 403


def test_a_delivered_delivery_is_not_resent(client_for, personas):
    webhook, _ = do_create_webhook(personas["manager"], URL, ["run.complete"])
    (delivery,) = events.emit("run.complete", {"run": 1}, "e")
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=WebhookDelivery.Status.DELIVERED
    )
    client_for("manager").post(reverse("api:resend_delivery", args=[delivery.pk]))
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED


def test_deactivate(client_for, personas):
    webhook, _ = do_create_webhook(personas["manager"], URL, ["run.complete"])
    client_for("manager").post(reverse("api:deactivate_webhook", args=[webhook.pk]))
    webhook.refresh_from_db()
    assert not webhook.is_active
    assert events.emit("run.complete", {"run": 1}, "e") == []
