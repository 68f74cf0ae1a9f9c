"""Where a webhook may point (assay/targets.py): no control characters, and no
internal address — loopback, private, link-local, in any spelling or behind a name —
unless WEBHOOK_HOSTS names the host; checked at the save and again before each POST."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from api import events
from api.models import Webhook, WebhookDelivery
from api.webhooks import sending
from api.webhooks.actions import check_webhook_url, do_create_webhook
from api.webhooks.sending import deliver
from assay import targets
from tests.api.webhook_receiver import Receiver

EVENT = "run.complete"


@pytest.mark.parametrize(
    "url",
    [
        "https://ci.example.org/hook\r\nX-Injected: 1",
        "https://ci.example.org/ho\nok",
        "https://ci.example.org/a b",
        "https://ci.example.org/\x00",
    ],
)
def test_a_url_with_a_line_break_is_refused_on_save(client_for, url):
    response = client_for("manager").post(
        reverse("api:webhooks"), {"url": url, "events": [EVENT]}
    )
    assert "control character" in response.content.decode() or (
        response.status_code == 400
    )
    assert not Webhook.objects.exists()
    with pytest.raises(ValidationError, match="control character"):
        check_webhook_url(url)


INTERNAL = [
    ("http://127.0.0.1:8000/h", "loopback"),
    ("http://[::1]/h", "loopback"),
    ("http://0x7f000001/h", "loopback"),
    ("http://2130706433/h", "loopback"),
    ("http://0177.0.0.1/h", "loopback"),
    ("http://127.1/h", "loopback"),
    ("http://[::ffff:127.0.0.1]/h", "loopback"),
    ("http://localhost:8000/h", "loopback"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fe80::1]/h", "link-local"),
    ("http://10.1.2.3/h", "private"),
    ("http://172.16.0.1/h", "private"),
    ("http://172.31.255.254/h", "private"),
    ("http://192.168.1.1/h", "private"),
    ("http://[fc00::1]/h", "private"),
    ("http://[fd12:3456::1]/h", "private"),
    ("http://100.64.0.1/h", "non-public"),
    ("http://0.0.0.0/h", "unspecified"),
    ("http://224.0.0.1/h", "non-public"),
]


@pytest.mark.parametrize(("url", "kind"), INTERNAL)
def test_internal_targets_are_refused_under_the_default_empty_allow_list(
    personas, settings, url, kind
):
    settings.WEBHOOK_HOSTS = []
    with pytest.raises(ValidationError, match=f"{kind} address") as refused:
        do_create_webhook(personas["manager"], url, [EVENT])
    assert "WEBHOOK_HOSTS names" in refused.value.messages[0]
    assert not Webhook.objects.exists()


def test_a_public_address_is_accepted(settings):
    settings.WEBHOOK_HOSTS = []
    assert check_webhook_url("https://93.184.215.14/h") == "https://93.184.215.14/h"
    assert check_webhook_url("https://ci.example.org/h") == "https://ci.example.org/h"


def test_only_a_host_the_allow_list_names_exactly_may_be_internal(settings):
    settings.WEBHOOK_HOSTS = ["127.0.0.1", ".localhost"]
    assert check_webhook_url("http://127.0.0.1:9/h") == "http://127.0.0.1:9/h"
    with pytest.raises(ValidationError, match="loopback"):
        check_webhook_url("http://localhost:9/h")  # matched by a pattern only
    with pytest.raises(ValidationError, match="not an allowed webhook host"):
        check_webhook_url("http://0x7f000001:9/h")


def test_a_target_allowed_when_saved_is_checked_again_before_the_post(
    personas, settings
):
    with Receiver() as receiver:
        url = receiver.url.replace("127.0.0.1", "localhost")
        settings.WEBHOOK_HOSTS = ["localhost"]
        webhook, _ = do_create_webhook(personas["manager"], url, [EVENT])
        (delivery,) = events.emit(EVENT, {"run": 1}, "run-1")
        settings.WEBHOOK_HOSTS = []
        settings.WEBHOOK_MAX_ATTEMPTS = 1
        assert deliver(delivery.pk) == WebhookDelivery.Status.FAILED
    assert receiver.received == []
    delivery.refresh_from_db()
    assert "localhost is a loopback address (127.0.0.1)" in delivery.last_error


def test_a_name_that_comes_to_resolve_inside_is_refused_at_delivery(
    personas, settings, monkeypatch
):
    """DNS rebinding: public when saved, loopback when sent."""
    settings.WEBHOOK_HOSTS = []
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    with Receiver() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        answers = {"hooks.rebind.test": ["93.184.215.14"]}
        monkeypatch.setattr(targets, "resolve", lambda host: answers.get(host, []))
        do_create_webhook(
            personas["manager"], f"http://hooks.rebind.test:{port}/hook", [EVENT]
        )
        (delivery,) = events.emit(EVENT, {"run": 2}, "run-2")
        answers["hooks.rebind.test"] = ["93.184.215.14", "127.0.0.1"]
        assert deliver(delivery.pk) == WebhookDelivery.Status.FAILED
    assert receiver.received == []
    delivery.refresh_from_db()
    assert delivery.last_status_code is None
    assert "loopback address (127.0.0.1)" in delivery.last_error


def test_an_internal_receivers_answer_is_not_shown(personas, settings, monkeypatch):
    """An allow-listed internal receiver's answer stays out of the delivery log: a
    webhook may not be used to read an internal service's pages."""
    settings.WEBHOOK_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    with Receiver(500, 500) as receiver:
        do_create_webhook(personas["manager"], receiver.url, [EVENT])
        (internal,) = events.emit(EVENT, {"run": 4}, "run-4")
        assert deliver(internal.pk) == WebhookDelivery.Status.FAILED
        # The same answer from a public receiver is shown, as a diagnosis.
        monkeypatch.setattr(sending, "is_internal_address", lambda address: False)
        (public,) = events.emit(EVENT, {"run": 5}, "run-5")
        assert deliver(public.pk) == WebhookDelivery.Status.FAILED
    internal.refresh_from_db()
    public.refresh_from_db()
    assert internal.last_status_code == public.last_status_code == 500
    assert internal.last_error == (
        "HTTP 500 (the answer is not shown: the receiver is at an internal address)."
    )
    assert public.last_error == "HTTP 500: ok"
