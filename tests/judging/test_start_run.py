"""The start-a-run form: managers only; a valid form creates the run and queues it
on commit, then redirects to the run page; bad input shows errors, creates nothing."""

from unittest import mock

import pytest
from django.urls import reverse

from judging.evaluation.models import EvaluationRun
from judging.llm.models import Endpoint, PromptTemplate
from tests.judging.factories import make_items


@pytest.fixture
def endpoints(db):
    return {
        name: Endpoint.objects.create(
            name=name,
            base_url="http://127.0.0.1:9/v1",
            model=f"{name}-model",
            thinking_switch=Endpoint.ThinkingSwitch.PARAMETER,
            thinking_on={"enable_thinking": True},
        )
        for name in ("tested", "judge", "sv")
    }


@pytest.fixture
def url(benchmark):
    return reverse("judging:start_evaluation", args=[benchmark.slug])


def form_data(endpoints, **changes):
    data = {
        "tested": endpoints["tested"].pk,
        "language": "zh",
        "judge": endpoints["judge"].pk,
        "sv_judge": endpoints["sv"].pk,
        "category": "open MoE",
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def test_only_managers_start_runs(client_for, benchmark, url):
    assert client_for("manager").get(url).status_code == 200
    for persona in ("expert", "adjudicator", "reviewer", "outsider"):
        assert client_for(persona).get(url).status_code == 403


def test_valid_form_creates_queues_and_redirects(
    client_for, benchmark, endpoints, url, django_capture_on_commit_callbacks
):
    make_items(benchmark, 12)
    client = client_for("manager")
    with (
        mock.patch("judging.evaluation.tasks.evaluate_run.delay") as delay,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(
            url,
            form_data(
                endpoints,
                thinking="on",
                external_ids="item-001, item-002\nitem-003 item-004",
                limit=3,
            ),
        )
    run = EvaluationRun.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("judging:evaluation_run", args=[run.pk])
    delay.assert_called_once_with(run.pk)
    assert (run.model_name, run.language, run.thinking) == ("tested", "zh", True)
    assert run.model_category == "open MoE" and run.origin == "pipeline"
    assert run.judge_name == "judge" and run.sv_judge_name == "sv"
    assert run.rubric_template.purpose == PromptTemplate.Purpose.RUBRIC_JUDGING
    assert run.item_filter == {
        "external_ids": ["item-001", "item-002", "item-003", "item-004"],
        "limit": 3,
    }
    assert sorted(run.responses.values_list("item__external_id", flat=True)) == [
        "item-001",
        "item-002",
        "item-003",
    ]
    assert run.created_by.username == "manager"
    assert "started on 3 items" in client.get(response.url).text


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"tested": None}, "This field is required."),
        ({"language": "xx"}, "Select a valid choice."),
        ({"limit": 0}, "greater than or equal to 1"),
        ({"external_ids": "item-001 nope-1"}, ": nope-1."),
        ({"difficulty": "hard"}, "No active item matching the filter"),
    ],
)
def test_bad_input_shows_errors_and_creates_nothing(
    client_for, benchmark, endpoints, url, changes, message
):
    make_items(benchmark, 5)
    with mock.patch("judging.evaluation.tasks.evaluate_run.delay") as delay:
        response = client_for("manager").post(url, form_data(endpoints, **changes))
    assert response.status_code == 200
    assert "The run was not started." in response.text
    assert message in response.text
    assert not EvaluationRun.objects.exists()
    delay.assert_not_called()


def test_inactive_endpoint_is_not_offered(client_for, benchmark, endpoints, url):
    endpoints["judge"].is_active = False
    endpoints["judge"].save(update_fields=["is_active"])
    make_items(benchmark, 2)
    response = client_for("manager").post(url, form_data(endpoints))
    assert "Select a valid choice" in response.text
    assert not EvaluationRun.objects.exists()


def test_runs_page_and_run_page_link_the_actions(client_for, benchmark, endpoints):
    client = client_for("manager")
    runs_page = client.get(reverse("judging:evaluation_runs", args=[benchmark.slug]))
    assert reverse("judging:start_evaluation", args=[benchmark.slug]) in runs_page.text
