"""The evaluation run page's progress: items finished of all, calls per second, ETA,
elapsed and cost; and what counts as pending while a run is still asking (only
items a finished call left without a verdict) and once it has ended (every item
without a score)."""

from datetime import timedelta
from decimal import Decimal
from importlib import import_module

import pytest
from django.apps import apps as django_apps
from django.db.models import Sum
from django.urls import reverse
from django.utils import timezone

from judging.evaluation import pipeline
from judging.evaluation import progress as evaluation_progress
from judging.evaluation.actions import do_start_evaluation, pending_responses
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.llm.models import Endpoint, LLMCall
from judging.runs import lifecycle
from judging.runs.progress import run_timing
from tests.judging.evaluation_stub import evaluation_responder
from tests.judging.factories import (
    FAILED,
    IN_FLIGHT,
    UNASKED,
    make_asking_run,
    make_items,
)
from tests.openai_stub import OpenAIStub


def run_page(client, run, **headers):
    return client.get(reverse("judging:evaluation_run", args=[run.pk]), headers=headers)


def pending_ids(run) -> list[str]:
    return [response.item.external_id for response in pending_responses(run)]


def test_a_run_not_asked_yet_has_no_pending_items_and_no_retry(client_for, benchmark):
    run = make_asking_run(benchmark, status=EvaluationRun.Status.PENDING)
    Judgment.objects.filter(response__run=run).delete()
    Response.objects.filter(run=run).update(status=Response.Status.PENDING)
    assert pending_ids(run) == []
    page = run_page(client_for("manager"), run).text
    assert "None so far: no call of this run has failed." in page
    assert "Retry pending items" not in page


def test_an_active_run_lists_only_items_whose_calls_failed(client_for, benchmark):
    run = make_asking_run(benchmark)
    assert pending_ids(run) == FAILED
    page = run_page(client_for("manager"), run).text
    for key in FAILED:
        assert key in page
    for key in IN_FLIGHT + UNASKED:
        assert key not in page
    assert "Retry pending items" not in page
    assert "Retry these once it has finished." in page


def test_an_ended_run_lists_every_unscored_item_and_offers_retry(client_for, benchmark):
    run = make_asking_run(benchmark, status=EvaluationRun.Status.ATTENTION)
    assert pending_ids(run) == FAILED + IN_FLIGHT + UNASKED
    page = run_page(client_for("manager"), run).text
    assert "Retry pending items" in page
    assert "Retry these once it has finished." not in page


def test_pending_counter_counts_failed_items_while_running_and_all_at_the_end(
    benchmark,
):
    run = make_asking_run(benchmark)
    evaluation_progress.refresh_counts(run)
    run.refresh_from_db()
    assert (run.total_items, run.scored_count, run.failed_count) == (10, 4, 2)
    assert (run.finished_items, run.open_items) == (6, 4)

    # No chunk is open: the lifecycle ends the run with its final counts.
    assert lifecycle.finish(pipeline.EVALUATION, run.pk)
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.ATTENTION
    assert run.finished_at is not None
    assert (run.scored_count, run.failed_count, run.open_items) == (4, 6, 0)


def test_progress_figures_of_a_running_run(client_for, benchmark):
    run = make_asking_run(benchmark)
    now = timezone.now()
    EvaluationRun.objects.filter(pk=run.pk).update(
        total_items=50,
        scored_count=20,
        failed_count=5,
        made_calls=80,
        input_tokens=12_000,
        output_tokens=3_400,
        cost=Decimal("0.1234"),
        started_at=now - timedelta(seconds=100),
    )
    run.refresh_from_db()
    progress = evaluation_progress.run_progress(run, now=now)
    assert {
        key: progress[key]
        for key in ("total", "finished", "scored", "pending", "open", "calls")
    } == {
        "total": 50,
        "finished": 25,
        "scored": 20,
        "pending": 5,
        "open": 25,
        "calls": 80,
    }
    # 80 calls in 100 s; 25 items in 100 s leaves 25 items for another 100 s.
    assert progress["elapsed_seconds"] == 100.0
    assert progress["calls_per_second"] == 0.8
    assert progress["eta_seconds"] == 100
    assert progress["cost"] == Decimal("0.1234")

    partial = run_page(client_for("manager"), run, HX_Request="true")
    assert partial.status_code == 200
    html = partial.text
    assert 'hx-trigger="every 2s"' in html
    assert "25 of 50 items finished" in html
    assert '<progress max="50" value="25">' in html
    assert 'data-count="calls">80<' in html
    assert 'data-count="cost">0.1234<' in html
    assert "12000 / 3400" in html
    assert "In progress" in html and "Failed" in html and "Pending" not in html


def test_an_ended_run_has_no_eta_and_stops_its_clock(benchmark):
    run = make_asking_run(benchmark, status=EvaluationRun.Status.ATTENTION)
    started = timezone.now() - timedelta(hours=2)
    # Needs attention: no finish time yet; the workers last wrote 60 s in.
    run.started_at = started
    run.heartbeat_at = started + timedelta(seconds=60)
    run.made_calls = 30
    timing = run_timing(run, remaining=0, finished=10, calls_made=30)
    assert timing == {
        "elapsed_seconds": 60.0,
        "calls_per_second": 0.5,
        "eta_seconds": None,
    }
    run.started_at = None
    assert run_timing(run, remaining=4, finished=0, calls_made=0) == {
        "elapsed_seconds": 0.0,
        "calls_per_second": 0.0,
        "eta_seconds": None,
    }


@pytest.fixture
def priced_endpoints(db, monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    with OpenAIStub(api_key="test-key", responder=evaluation_responder) as stub:
        yield {
            name: Endpoint.objects.create(
                name=name,
                base_url=stub.base_url,
                model=f"{name}-model",
                api_key_env="STUB_API_KEY",
                max_concurrency=8,
                price_input_per_1k=Decimal("0.5"),
                price_output_per_1k=Decimal("2"),
            )
            for name in ("tested", "judge", "sv")
        }


def test_a_run_counts_its_calls_tokens_and_cost(benchmark, priced_endpoints, settings):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 50
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    make_items(benchmark, 10)
    run = do_start_evaluation(
        benchmark,
        tested=priced_endpoints["tested"],
        judge=priced_endpoints["judge"],
        sv_judge=priced_endpoints["sv"],
        language="zh",
        enqueue=False,
    )
    pipeline.run_evaluation(run.pk)
    run.refresh_from_db()
    calls = LLMCall.objects.filter(scope=pipeline.run_scope(run))
    recorded = calls.aggregate(
        input=Sum("input_tokens"), output=Sum("output_tokens"), cost=Sum("cost")
    )
    # 10 answers; judge and SV calls for the 9 non-empty ones.
    assert run.made_calls == calls.count() == 10 + 2 * 9
    assert (run.input_tokens, run.output_tokens) == (
        recorded["input"],
        recorded["output"],
    )
    assert run.cost == recorded["cost"] > 0
    assert (run.scored_count, run.failed_count) == (8, 2)
    assert evaluation_progress.run_progress(run)["finished"] == 10


def test_the_migration_fills_the_counts_of_earlier_runs(benchmark):
    migration = import_module("judging.migrations.0013_evaluation_run_progress")
    run = make_asking_run(benchmark, status=EvaluationRun.Status.ATTENTION)
    # Until then `failed_count` held every unscored item.
    EvaluationRun.objects.filter(pk=run.pk).update(failed_count=6)
    endpoint = Endpoint.objects.create(
        name="tested", base_url="http://127.0.0.1:9", model="m"
    )
    for number, scope in enumerate(
        [
            f"evaluation-run-{run.pk}",
            f"evaluation-run-{run.pk}",
            f"evaluation-run-{run.pk}-retry-1",
            f"evaluation-run-{run.pk}0",  # another run's calls
            "labelling",
        ]
    ):
        LLMCall.objects.create(
            endpoint=endpoint,
            purpose="answering",
            scope=scope,
            request_hash=str(number),
            model="m",
            status=LLMCall.Status.OK,
            input_tokens=100,
            output_tokens=10,
            cost=Decimal("0.01"),
        )
    migration.fill_counts(django_apps, None)
    run.refresh_from_db()
    assert (run.scored_count, run.failed_count) == (4, 6)
    assert (run.made_calls, run.input_tokens, run.output_tokens) == (3, 300, 30)
    assert run.cost == Decimal("0.03")
