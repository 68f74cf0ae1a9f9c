"""A run's end is a webhook event: the lifecycle queues `api.tasks.emit_event` by
name and the api app delivers it (Celery eager here; the worker test is
tests/api/test_webhooks_worker.py)."""

import json

import pytest

from api.models import WebhookDelivery
from api.webhooks.actions import do_create_webhook
from assay.celery import app
from judging.labelling.actions import do_cancel_run, do_start_labelling
from judging.llm.actions import do_save_endpoint
from judging.llm.prompts import default_template
from tests.api.webhook_receiver import Receiver
from tests.judging.labelling_fixtures import PLAN, add_items, annotate
from tests.openai_stub import OpenAIStub

EVENTS = ["run.complete", "run.needs_attention", "run.cancelled"]


@pytest.fixture(autouse=True)
def receiver_allowed(settings):
    # The receiver listens on loopback, which a webhook reaches only when named.
    settings.WEBHOOK_HOSTS = ["127.0.0.1"]


@pytest.fixture(autouse=True)
def eager_celery(monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "k")
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture
def annotators(db):
    with OpenAIStub(responder=annotate) as stub:
        yield [
            do_save_endpoint(
                name,
                base_url=stub.base_url,
                model=f"{name}-model",
                api_key_env="STUB_API_KEY",
                max_concurrency=4,
            )
            for name in ("ann-a", "ann-b", "ann-c")
        ]


@pytest.fixture
def receiver(personas):
    with Receiver() as running:
        do_create_webhook(personas["manager"], running.url, EVENTS)
        yield running


def test_a_finished_run_is_delivered(
    benchmark, annotators, receiver, django_capture_on_commit_callbacks
):
    add_items(benchmark, PLAN)
    with django_capture_on_commit_callbacks(execute=True):
        run = do_start_labelling(benchmark, annotators, default_template("labelling"))
    run.refresh_from_db()
    delivery = WebhookDelivery.objects.get()
    assert delivery.event_type == f"run.{run.status}"
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert delivery.payload | {"ended_at": None} == {
        "kind": "labelling",
        "run": run.pk,
        "benchmark": benchmark.slug,
        "status": run.status,
        "counts": {
            "total_calls": 12,
            "done_calls": 11,
            "failed_calls": 0,
            "unparseable_calls": 1,
        },
        "path": f"/judging/labelling/{run.pk}/",
        "ended_at": None,
    }
    (sent,) = receiver.received
    assert json.loads(sent.body)["data"] == delivery.payload


def test_a_cancelled_run_is_delivered(
    benchmark, annotators, receiver, django_capture_on_commit_callbacks
):
    add_items(benchmark, PLAN)
    with django_capture_on_commit_callbacks(execute=False):
        run = do_start_labelling(benchmark, annotators, default_template("labelling"))
    with django_capture_on_commit_callbacks(execute=True):
        do_cancel_run(run)
    delivery = WebhookDelivery.objects.get()
    assert (delivery.event_type, delivery.payload["status"]) == (
        "run.cancelled",
        "cancelled",
    )
    assert len(receiver.received) == 1
