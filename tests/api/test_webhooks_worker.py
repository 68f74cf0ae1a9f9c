"""A real Celery worker: a labelling run finishes and the local receiver gets the
signed POST — emitted by task name from the lifecycle, sent by the worker."""

import hashlib
import hmac
import json

import pytest

from api.models import WebhookDelivery
from api.webhooks.actions import do_create_webhook
from judging.labelling.actions import do_start_labelling
from judging.labelling.models import LabellingRun
from judging.llm.actions import do_save_endpoint
from judging.llm.prompts import default_template
from tests.api.webhook_receiver import Receiver
from tests.judging.labelling_fixtures import PLAN, add_items, annotate, wait_until
from tests.openai_stub import OpenAIStub


@pytest.mark.worker
def test_worker_sends_the_signed_run_event(
    killable_worker, benchmark, personas, settings
):
    # The receiver listens on loopback, which a webhook reaches only when named,
    # at the save (here) and before the POST (on the worker).
    settings.WEBHOOK_HOSTS = ["127.0.0.1"]
    killable_worker.env["WEBHOOK_HOSTS"] = "127.0.0.1"
    killable_worker.start()
    add_items(benchmark, PLAN)
    with Receiver() as receiver, OpenAIStub(responder=annotate) as stub:
        webhook, secret = do_create_webhook(
            personas["manager"], receiver.url, ["run.complete", "run.needs_attention"]
        )
        annotators = [
            do_save_endpoint(
                name,
                base_url=stub.base_url,
                model=f"{name}-model",
                api_key_env="STUB_API_KEY",
                max_concurrency=4,
            )
            for name in ("ann-a", "ann-b", "ann-c")
        ]
        run = do_start_labelling(benchmark, annotators, default_template("labelling"))
        wait_until(lambda: receiver.received, 60, "no webhook POST arrived")
    (sent,) = receiver.received
    signed = sent.headers["X-Assay-Timestamp"].encode() + b"." + sent.body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    assert sent.headers["X-Assay-Signature"] == f"sha256={expected}"
    body = json.loads(sent.body)
    run.refresh_from_db()
    assert run.status == LabellingRun.Status.COMPLETE
    assert body["event"] == sent.headers["X-Assay-Event"] == "run.complete"
    assert body["data"]["run"] == run.pk and body["data"]["kind"] == "labelling"
    delivery = WebhookDelivery.objects.get(pk=int(sent.headers["X-Assay-Delivery"]))
    wait_until(
        lambda: WebhookDelivery.objects.filter(
            pk=delivery.pk, status=WebhookDelivery.Status.DELIVERED
        ).exists(),
        10,
        "the delivery was not recorded as delivered",
    )
