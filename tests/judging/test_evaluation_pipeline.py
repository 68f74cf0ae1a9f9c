"""The evaluation pipeline against the OpenAI-protocol stub through the real openai
client: stages, failure rules, re-judging without re-asking, resume, the command."""

import io

import pytest
from django.core.management import CommandError, call_command

from judging.evaluation import run_evaluation
from judging.evaluation_actions import (
    EvaluationActionError,
    do_rejudge,
    do_start_evaluation,
    do_waive_pending,
    pending_responses,
)
from judging.models import Endpoint, EvaluationRun, Judgment, Response
from judging.reports import load_scores
from tests.openai_stub import OpenAIStub

from .evaluation_stub import evaluation_responder
from .factories import make_items


@pytest.fixture(autouse=True)
def fast_llm_settings(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 50
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    settings.LLM_REQUEST_TIMEOUT = 5
    monkeypatch.setenv("STUB_API_KEY", "test-key")


@pytest.fixture
def stub():
    with OpenAIStub(api_key="test-key", responder=evaluation_responder) as running:
        yield running


@pytest.fixture
def endpoints(db, stub):
    def make(name):
        return Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=8,
        )

    return {name: make(name) for name in ("tested", "judge-1", "judge-2", "sv")}


@pytest.fixture
def items(benchmark):
    return make_items(benchmark, 20)


def start(benchmark, endpoints, **kwargs):
    return do_start_evaluation(
        benchmark,
        tested=endpoints["tested"],
        judge=endpoints["judge-1"],
        sv_judge=endpoints["sv"],
        language="zh",
        enqueue=False,
        **kwargs,
    )


def by_item(run, kind):
    return {
        j.response.item.external_id: j
        for j in Judgment.objects.filter(response__run=run, kind=kind).select_related(
            "response__item"
        )
    }


def test_stages_and_failure_rules(benchmark, items, endpoints, stub):
    run = start(benchmark, endpoints)
    assert run.status == "pending" and run.responses.count() == 20
    run_evaluation(run.pk)
    run.refresh_from_db()

    responses = {r.item.external_id: r for r in run.responses.select_related("item")}
    # Empty answer: stored as empty, raw 0 without a judge call, no SV call.
    assert responses["item-001"].status == Response.Status.EMPTY
    rubric = by_item(run, "rubric")
    safety = by_item(run, "safety")
    assert rubric["item-001"].score == 0 and rubric["item-001"].call is None
    assert "item-001" not in safety
    # Unsafe answer: flagged; final 0.
    assert safety["item-002"].safety_violation is True
    # Judge replied prose twice: unparseable, no score, pending.
    assert rubric["item-003"].status == Judgment.Status.UNPARSEABLE
    assert (
        rubric["item-003"].score is None and "Unparseable" in rubric["item-003"].error
    )
    # SV call failed: never "no violation".
    assert safety["item-004"].status == Judgment.Status.FAILED
    assert safety["item-004"].safety_violation is None
    # Every verdict records judge endpoint and prompt version.
    assert rubric["item-000"].endpoint == endpoints["judge-1"]
    assert rubric["item-000"].prompt_version == run.judge_prompt_version != ""
    assert safety["item-000"].template == run.sv_template

    pending = {r.item.external_id for r in pending_responses(run)}
    assert pending == {"item-003", "item-013", "item-004", "item-014"}
    assert run.status == EvaluationRun.Status.RUNNING  # not complete while pending
    assert (run.answered_count, run.failed_count) == (20, 4)
    metrics = load_scores([run]).metrics(0)
    assert (metrics.n_pending, metrics.n_empty, metrics.n_scored) == (4, 2, 16)
    # Scored: 2 empty (0), 2 unsafe (final 0, raw 3), 2 partly (2), 10 good (3).
    assert metrics.raw_mean == pytest.approx((2 * 3 + 2 * 2 + 10 * 3) / 16)
    assert metrics.final_mean == pytest.approx((2 * 2 + 10 * 3) / 16)
    assert stub.duplicate_answers() == {}

    # A manager waives the pending items (recorded); the run completes.
    with pytest.raises(EvaluationActionError):
        do_waive_pending(
            run, [r.pk for r in pending_responses(run)], user=None, note=""
        )
    do_waive_pending(
        run, [r.pk for r in pending_responses(run)], user=None, note="judge down"
    )
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE


def test_rejudge_rescores_stored_answers_without_asking_the_model(
    benchmark, items, endpoints, stub
):
    run = start(benchmark, endpoints)
    run_evaluation(run.pk)
    answers_asked = sum(1 for r in stub.requests if r.model == "tested-model")
    first_judge = by_item(run, "rubric")

    do_rejudge(run, judge=endpoints["judge-2"], enqueue=False)
    run_evaluation(run.pk)
    run.refresh_from_db()
    assert sum(1 for r in stub.requests if r.model == "tested-model") == answers_asked
    assert run.judge_name == "judge-2"
    assert (
        Judgment.objects.filter(response__run=run, judge_name="judge-1").count() == 20
    )
    second = {
        j.response.item.external_id: j.score
        for j in Judgment.objects.filter(
            response__run=run, judge_name="judge-2"
        ).select_related("response__item")
    }
    assert second["item-000"] == first_judge["item-000"].score - 1 == 2
    # judge-2 parses item-003 fine: only the two SV failures stay pending.
    assert run.failed_count == 2
    assert stub.duplicate_answers() == {}


def test_resume_asks_only_for_what_failed(benchmark, items, endpoints, stub):
    run = start(benchmark, endpoints, limit=10)
    run_evaluation(run.pk)
    before = len(stub.requests)
    run_evaluation(run.pk)  # resume: only the failed/unparseable verdicts again
    again = stub.requests[before:]
    # SV for item-004 failed and is re-made; the unparseable judge reply for item-003
    # is served from the record, the tested model is not asked again.
    assert {r.model for r in again} == {"sv-model"}
    assert all("Question 4?" in str(r.body) for r in again)


def test_thinking_run_keeps_reasoning_apart(benchmark, items, endpoints, stub):
    run = start(benchmark, endpoints, thinking=True, limit=1)
    run_evaluation(run.pk)
    response = run.responses.get()
    assert response.text == "Answer 0: exactly the reference."
    assert response.reasoning_text == "thinking…"
    assert run.thinking


def test_start_evaluation_command(benchmark, items, endpoints, stub):
    out = io.StringIO()
    call_command(
        "start_evaluation",
        "--benchmark",
        benchmark.slug,
        "--model",
        "tested",
        "--judge",
        "judge-1",
        "--sv-judge",
        "sv",
        "--language",
        "zh",
        "--limit",
        "5",
        "--wait",
        stdout=out,
    )
    text = out.getvalue()
    assert "answer: 5 requested, 5 made" in text
    assert "Run" in text and "2 pending" in text
    with pytest.raises(CommandError, match="no endpoint named 'nope'"):
        call_command(
            "start_evaluation", "--benchmark", benchmark.slug, "--judge", "nope"
        )
    with pytest.raises(CommandError, match="A new run needs --model"):
        call_command("start_evaluation", "--benchmark", benchmark.slug)
