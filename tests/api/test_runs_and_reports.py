"""Runs, reports and endpoints through the API: the same numbers as the pages and
commands, a cancel through the run's own action, and no secret of an endpoint."""

import json

import pytest

from annotation.agreement.loading import build_report
from judging.evaluation.models import EvaluationRun
from judging.leaderboard.building import cached_report
from judging.llm.models import Endpoint
from tests.annotation.report_factories import bulk_items, judged_runs
from tests.api.helpers import BASE, token_client
from tests.judging.factories import make_items, make_run


@pytest.fixture
def manager_api(personas):
    return token_client(personas["manager"])


@pytest.fixture
def runs(benchmark):
    items = make_items(benchmark, 12)
    return [
        make_run(benchmark, items, [3] * 12, [False] * 12, model="alpha"),
        make_run(benchmark, items, [2] * 12, [True] + [False] * 11, model="beta"),
    ]


def test_runs_with_status_and_counts(benchmark, runs, manager_api):
    EvaluationRun.objects.filter(pk=runs[1].pk).update(
        status=EvaluationRun.Status.CANCELLED
    )
    listed = manager_api.get(f"{BASE}/benchmarks/{benchmark.slug}/runs").json()
    assert [(r["model_name"], r["status"]) for r in listed] == [
        ("alpha", "complete"),
        ("beta", "cancelled"),
    ]
    run = manager_api.get(f"{BASE}/runs/{runs[0].pk}").json()
    assert run["benchmark"] == benchmark.slug
    assert run["progress"]["total"] == 12
    assert run["progress"]["eta_seconds"] is None


def test_cancel_stops_an_active_run_and_refuses_an_ended_one(
    benchmark, runs, manager_api
):
    active = runs[0]
    EvaluationRun.objects.filter(pk=active.pk).update(
        status=EvaluationRun.Status.RUNNING
    )
    response = manager_api.post(f"{BASE}/runs/{active.pk}/cancel")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    active.refresh_from_db()
    assert active.status == EvaluationRun.Status.CANCELLED and active.finished_at

    again = manager_api.post(f"{BASE}/runs/{active.pk}/cancel")
    assert again.status_code == 409
    assert again.json()["detail"] == f"Run {active.pk} is cancelled."


def test_an_unknown_run_is_a_404(manager_api, db):
    assert manager_api.get(f"{BASE}/runs/999999").status_code == 404
    assert manager_api.get(f"{BASE}/runs/abc").status_code == 422


def test_the_leaderboard_is_the_reports_tables(benchmark, runs, manager_api):
    response = manager_api.get(f"{BASE}/benchmarks/{benchmark.slug}/leaderboard")
    assert response.status_code == 200
    expected = json.loads(json.dumps(cached_report(benchmark).as_dict()))
    assert response.json() == expected
    board = response.json()["tables"]["leaderboard"]
    assert board["rows"][0][board["columns"].index("Model")] == "alpha"
    missing = manager_api.get(
        f"{BASE}/benchmarks/{benchmark.slug}/leaderboard", {"language": "xx"}
    )
    assert missing.status_code == 404


def test_an_agreement_report_is_its_json_download(benchmark, manager_api):
    judged_runs(benchmark, bulk_items(benchmark, 40))
    url = f"{BASE}/benchmarks/{benchmark.slug}/reports/cross-judge"
    response = manager_api.get(url)
    assert response.status_code == 200
    assert response.json() == json.loads(
        build_report(benchmark, "cross-judge").to_json()
    )
    assert manager_api.get(url.replace("cross-judge", "nope")).status_code == 404


def test_endpoints_hide_every_secret(manager_api, monkeypatch):
    monkeypatch.setenv("QWEN_API_KEY", "sk-live-0123456789abcdef")
    Endpoint.objects.create(
        name="qwen",
        base_url="https://user:hunter2@api.example.com:8443/v1?key=sk-in-query#frag",
        model="qwen3-max",
        api_key_env="QWEN_API_KEY",
        extra_body={"api_key": "sk-in-body"},
        thinking_on={"token": "sk-thinking"},
        test_status=Endpoint.TestStatus.ERROR,
        test_message="401: Incorrect API key provided: sk-live-0123…",
    )
    response = manager_api.get(f"{BASE}/endpoints")
    assert response.status_code == 200
    (endpoint,) = response.json()
    assert endpoint["name"] == "qwen" and endpoint["model"] == "qwen3-max"
    assert endpoint["base_url"] == "https://api.example.com:8443/v1"
    text = response.content.decode()
    for secret in ("QWEN_API_KEY", "sk-", "hunter2", "user", "Incorrect API key"):
        assert secret not in text


def test_the_leaderboard_on_a_saved_subset(benchmark, runs, manager_api):
    from benchmark.actions import do_save_item_subset

    first_items = list(benchmark.items.order_by("pk").values_list("pk", flat=True))
    subset = do_save_item_subset(
        benchmark,
        name="half",
        rule="manual",
        description="the first half",
        item_ids=first_items[: len(first_items) // 2],
        derived_from={},
    )
    url = f"{BASE}/benchmarks/{benchmark.slug}/leaderboard"
    board = manager_api.get(url, {"subset": subset.pk}).json()
    assert board["subset"] == {
        "name": "half",
        "rule": "manual",
        "items": len(first_items) // 2,
    }
    assert board == json.loads(
        json.dumps(cached_report(benchmark, subset=subset).as_dict())
    )
    assert manager_api.get(url, {"subset": 999999}).status_code == 404


def test_the_translation_report_is_its_rows(manager_api):
    from judging.translation import demo as demo_translation
    from judging.translation.report import as_rows, translation_report
    from tests.judging.test_demo_translation import load_demo_items

    demo = load_demo_items()
    demo_translation.seed(demo)
    response = manager_api.get(f"{BASE}/benchmarks/{demo.slug}/translation-report")
    assert response.status_code == 200
    rows = response.json()
    assert [row["language"] for row in rows] == ["en", "ru", "vi"]
    assert all(row["translated"] > 0 for row in rows)
    assert rows == as_rows(translation_report(demo))


def test_a_binary_leaderboard_gives_accuracy_trials_and_flags(db, manager_api):
    from judging.demo import lpfqa as lpfqa_demo

    demo = lpfqa_demo.seed()
    response = manager_api.get(f"{BASE}/benchmarks/{demo.slug}/leaderboard")
    assert response.status_code == 200
    data = response.json()
    assert data["scale"] == "binary"
    assert set(data["tables"]) == {
        "leaderboard",
        "formats",
        "fields",
        "field_extremes",
    }
    metrics = data["runs"][0]["metrics"]
    assert metrics["trials"] == 3
    assert metrics["flagged"] == (
        metrics["multiple"] + metrics["refusal"] + metrics["no_answer"]
    )
    assert 0 <= metrics["accuracy"] <= 100
    # Study 002 §2.3: correct over all tested answers, the flagged ones included.
    assert metrics["tested"] == (
        metrics["correct"]
        + metrics["wrong"]
        + metrics["flagged"]
        + metrics["provider_refused"]
    )
