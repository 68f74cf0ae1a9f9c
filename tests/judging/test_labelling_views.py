"""Endpoint and labelling pages: roles, validation, the queued connection test, run
progress polling (a refresh once settled), cancel/resume, the consensus report and
CSV."""

import pytest
from django.urls import reverse
from django.utils import timezone

from assay.celery import app
from judging.labelling.models import LabellingRun
from judging.llm import tasks
from judging.llm.models import Endpoint
from tests.judging.labelling_fixtures import PLAN, add_items, annotate
from tests.openai_stub import OpenAIStub


@pytest.fixture(autouse=True)
def stub_key(monkeypatch, settings):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_PARSE_RETRIES = 1
    monkeypatch.setenv("STUB_API_KEY", "k")


@pytest.fixture
def stub():
    with OpenAIStub(responder=annotate) as running:
        yield running


def endpoint_post(stub, name, **overrides):
    data = {
        "name": name,
        "base_url": stub.base_url,
        "model": f"{name}-model",
        "api_key_env": "STUB_API_KEY",
        "max_concurrency": 4,
        "extra_body": "{}",
        "thinking_switch": "never",
        "is_active": "on",
    }
    data.update(overrides)
    return data


@pytest.mark.parametrize(
    "url",
    [
        reverse("judging:endpoints"),
        reverse("judging:labelling_runs"),
    ],
)
@pytest.mark.parametrize("persona", ["expert", "adjudicator", "reviewer", "outsider"])
def test_only_managers(client_for, url, persona):
    assert client_for(persona).get(url).status_code == 403


def test_manager_adds_an_endpoint(client_for, stub):
    response = client_for("manager").post(
        reverse("judging:endpoints"), endpoint_post(stub, "ann-a")
    )
    endpoint = Endpoint.objects.get(name="ann-a")
    assert response.url == reverse("judging:endpoint", args=[endpoint.pk])
    assert endpoint.api_key_env == "STUB_API_KEY"
    page = client_for("manager").get(response.url).content.decode()
    assert "STUB_API_KEY" in page
    assert "k" not in page.split("STUB_API_KEY")[0][-3:]  # the key itself never shows


def test_an_api_key_instead_of_a_variable_name_is_refused(client_for, stub):
    response = client_for("manager").post(
        reverse("judging:endpoints"),
        endpoint_post(stub, "leaky", api_key_env="sk-live-123456"),
    )
    assert response.status_code == 200
    assert "not an environment variable name" in response.content.decode()
    assert not Endpoint.objects.exists()


def test_connection_test_is_queued_never_run_in_the_request(
    client_for, stub, django_capture_on_commit_callbacks
):
    client = client_for("manager")
    client.post(reverse("judging:endpoints"), endpoint_post(stub, "ann-a"))
    endpoint = Endpoint.objects.get(name="ann-a")
    url = reverse("judging:endpoint_test", args=[endpoint.pk])
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(url, headers={"HX-Request": "true"})
    assert len(queued) == 1
    assert stub.request_count == 0
    assert "testing" in response.content.decode()
    polling = client.get(
        reverse("judging:endpoint", args=[endpoint.pk]), headers={"HX-Request": "true"}
    )
    assert polling.status_code == 200 and 'hx-trigger="every 1s"' in (
        polling.content.decode()
    )
    tasks.test_endpoint(endpoint.pk)  # what the worker does
    done = client.get(
        reverse("judging:endpoint", args=[endpoint.pk]), headers={"HX-Request": "true"}
    )
    assert done.status_code == 286
    assert "ann-a-model replied &#x27;OK&#x27;" in done.content.decode()


def test_connection_test_shows_the_provider_error(client_for, stub, monkeypatch):
    monkeypatch.setenv("WRONG_API_KEY", "nope")
    stub.api_key = "k"
    endpoint = Endpoint.objects.create(
        name="wrong", base_url=stub.base_url, model="m", api_key_env="WRONG_API_KEY"
    )
    tasks.test_endpoint(endpoint.pk)
    endpoint.refresh_from_db()
    assert endpoint.test_status == Endpoint.TestStatus.ERROR
    assert endpoint.test_message == "HTTP 401: Incorrect API key provided."
    page = client_for("manager").get(reverse("judging:endpoint", args=[endpoint.pk]))
    assert "Incorrect API key provided." in page.content.decode()


@pytest.fixture
def annotators(stub, db):
    return [
        Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=4,
        )
        for name in ("ann-a", "ann-b", "ann-c")
    ]


@pytest.fixture
def finished_run(client_for, benchmark, annotators, django_capture_on_commit_callbacks):
    add_items(benchmark, PLAN)
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for("manager").post(
                reverse("judging:labelling_runs"),
                {
                    "benchmark": benchmark.pk,
                    "annotators": [a.pk for a in annotators],
                    "external_ids": "",
                },
            )
    finally:
        app.conf.task_always_eager = False
    run = LabellingRun.objects.get()
    assert response.url == reverse("judging:labelling_run", args=[run.pk])
    return run


def test_start_form_refuses_one_annotator(client_for, benchmark, annotators):
    response = client_for("manager").post(
        reverse("judging:labelling_runs"),
        {"benchmark": benchmark.pk, "annotators": [annotators[0].pk]},
    )
    assert "at least two annotator endpoints" in response.content.decode()
    assert not LabellingRun.objects.exists()


def test_run_page_shows_progress_failures_and_stops_polling(client_for, finished_run):
    client = client_for("manager")
    url = reverse("judging:labelling_run", args=[finished_run.pk])
    page = client.get(url).content.decode()
    assert 'data-count="done">11<' in page
    assert 'data-count="unparseable">1<' in page
    assert "I would rather not say." in page  # the raw output of the failure
    # Before consensus is computed, the ended run's page keeps polling for it.
    LabellingRun.objects.filter(pk=finished_run.pk).update(consensus_at=None)
    partial = client.get(url, headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert "computing consensus" in partial.content.decode()
    assert "<h2>Failures" not in partial.content.decode()
    # Once it is, one refresh shows the whole ended page, which no longer polls.
    LabellingRun.objects.filter(pk=finished_run.pk).update(consensus_at=timezone.now())
    settled = client.get(url, headers={"HX-Request": "true"})
    assert settled.headers["HX-Refresh"] == "true"
    assert "hx-trigger" not in client.get(url).content.decode()


def test_running_run_keeps_polling_and_can_be_cancelled(client_for, finished_run):
    finished_run.status = LabellingRun.Status.RUNNING
    finished_run.save(update_fields=["status"])
    client = client_for("manager")
    url = reverse("judging:labelling_run", args=[finished_run.pk])
    partial = client.get(url, headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert 'hx-trigger="every 1s"' in partial.content.decode()
    client.post(
        reverse("judging:run_control", args=["labelling", finished_run.pk, "cancel"])
    )
    finished_run.refresh_from_db()
    assert finished_run.status == LabellingRun.Status.CANCELLED
    again = client.post(
        reverse("judging:run_control", args=["labelling", finished_run.pk, "cancel"])
    )
    assert again.status_code == 302
    messages = [str(m) for m in again.wsgi_request._messages]
    assert messages[-1] == f"Run {finished_run.pk} is cancelled."


def test_consensus_report_page_csv_and_confusion(client_for, finished_run):
    client = client_for("manager")
    url = reverse("judging:consensus_report", args=[finished_run.pk])
    page = client.get(url).content.decode()
    assert '25.0% <span class="muted">(1)</span>' in page  # full agreement
    assert "Fleiss" in page and "Krippendorff" in page
    any_row = page.split('data-dimension="any"')[1].split("</tr>")[0]
    assert "No majority in at least one dimension" in any_row
    csv = client.get(url + "?format=csv")
    assert csv["Content-Type"] == "text/csv; charset=utf-8"
    assert csv.content.decode("utf-8-sig").startswith("dimension,units,full")
    confusion = client.get(
        url + "?dimension=capability&a=ann-a&b=ann-b", headers={"HX-Request": "true"}
    ).content.decode()
    assert "ann-a (rows) × ann-b (columns)" in confusion
    assert 'class="num diagonal">' in confusion
    missing = client.get(
        url + "?dimension=capability&a=ann-a&b=nobody", headers={"HX-Request": "true"}
    )
    assert missing.status_code == 404


def test_consensus_report_covers_the_items_the_run_labelled(client_for, finished_run):
    url = reverse("judging:consensus_report", args=[finished_run.pk])
    client = client_for("manager")
    before = client.get(url + "?format=csv").content.decode("utf-8-sig")
    add_items(finished_run.benchmark, ["added-later-1", "added-later-2"])
    after = client.get(url + "?format=csv").content.decode("utf-8-sig")
    assert after == before
    page = client.get(url).content.decode()
    assert '<td class="num">4</td>' in page  # the run's four items, not six
    assert "items added to the benchmark later are not part of its report" in page
