"""Starting a run through the API, checked and queued by the start page's action,
and a run's per-item results in keyset pages, as the run pages compute them."""

from unittest import mock

import pytest

from judging.evaluation.models import EvaluationRun
from judging.llm.models import Endpoint
from tests.api.helpers import BASE, token_client
from tests.judging.factories import make_items, make_run


@pytest.fixture
def manager_api(personas):
    return token_client(personas["manager"])


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


def call(**changes) -> dict:
    return {
        "tested": "tested",
        "judge": "judge",
        "sv_judge": "sv",
        "language": "zh",
        "category": "open MoE",
        **changes,
    }


def test_a_start_creates_the_run_and_queues_it_on_commit(
    benchmark, endpoints, manager_api, django_capture_on_commit_callbacks
):
    make_items(benchmark, 12)
    url = f"{BASE}/benchmarks/{benchmark.slug}/runs"
    body = call(thinking=True, external_ids=["item-001", "item-002", "item-003"])
    with (
        mock.patch("judging.evaluation.tasks.evaluate_run.delay") as delay,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = manager_api.post(url, body | {"limit": 2}, "application/json")
    assert response.status_code == 201, response.content
    run = EvaluationRun.objects.get()
    assert response.json()["id"] == run.pk
    assert response.json()["status"] == "pending"
    delay.assert_called_once_with(run.pk)
    assert (run.model_name, run.language, run.thinking) == ("tested", "zh", True)
    assert run.model_category == "open MoE" and run.total_items == 2
    assert run.item_filter == {
        "external_ids": ["item-001", "item-002", "item-003"],
        "limit": 2,
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"language": "xx"}, "is not one of this benchmark's languages"),
        ({"judge": "nobody"}, "No endpoint named 'nobody'"),
        ({"external_ids": ["missing"]}, "No such items"),
        ({"labels": ["capability:nonsense"]}, "No label 'capability:nonsense'"),
        (
            {"rubric_template": {"name": "nonsense", "version": 1}},
            "No prompt nonsense version 1",
        ),
    ],
)
def test_a_refusal_is_a_422_with_the_actions_message(
    benchmark, endpoints, manager_api, changes, message
):
    make_items(benchmark, 3)
    response = manager_api.post(
        f"{BASE}/benchmarks/{benchmark.slug}/runs",
        call(**changes),
        "application/json",
    )
    assert response.status_code == 422
    assert message in response.json()["detail"]
    assert not EvaluationRun.objects.exists()


def test_an_inactive_endpoint_is_refused_by_the_action(
    benchmark, endpoints, manager_api
):
    make_items(benchmark, 3)
    Endpoint.objects.filter(name="sv").update(is_active=False)
    response = manager_api.post(
        f"{BASE}/benchmarks/{benchmark.slug}/runs", call(), "application/json"
    )
    assert response.status_code == 422
    assert response.json()["detail"] == "Inactive endpoints: sv."


def test_results_page_through_every_response_with_its_verdicts(benchmark, manager_api):
    items = make_items(benchmark, 5)
    run = make_run(benchmark, items, [3, 2, 1, 0, 3], [False, True] + [False] * 3)
    url = f"{BASE}/runs/{run.pk}/results"
    first = manager_api.get(url, {"limit": 3}).json()
    rest = manager_api.get(url, {"limit": 3, "cursor": first["next_cursor"]}).json()
    assert rest["next_cursor"] is None
    results = first["results"] + rest["results"]
    assert [r["external_id"] for r in results] == [i.external_id for i in items]
    verdicts = [
        (r["raw_score"], r["safety_violation"], r["final_score"]) for r in results
    ]
    assert verdicts[:2] == [(3, False, 3), (2, True, 0)]
    assert all(r["judge_reason"] is not None for r in results)
