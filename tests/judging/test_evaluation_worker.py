"""A real Celery worker runs an evaluation queued by start_evaluation (no --wait), and
resumes one whose worker was killed."""

import io
import time

import pytest
from django.core.management import call_command

from judging.evaluation.actions import do_start_evaluation
from judging.evaluation.models import EvaluationRun, Judgment
from judging.llm.models import LLMCall
from tests.judging.evaluation_stub import clean_responder, role_endpoints
from tests.judging.factories import make_items
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import OpenAIStub, request_key


@pytest.mark.worker
def test_worker_runs_a_queued_evaluation(killable_worker, benchmark):
    make_items(benchmark, 12)
    with OpenAIStub(api_key="k", latency=0.05, responder=clean_responder) as stub:
        role_endpoints(stub, concurrency=4)
        killable_worker.start()
        out = io.StringIO()
        call_command(
            "start_evaluation",
            "--benchmark",
            benchmark.slug,
            "--model",
            "tested",
            "--judge",
            "judge",
            "--sv-judge",
            "sv",
            "--language",
            "en",
            stdout=out,
        )
        assert "Queued run" in out.getvalue()
        run = EvaluationRun.objects.get()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.status == EvaluationRun.Status.COMPLETE:
                break
            time.sleep(0.2)
        assert run.status == EvaluationRun.Status.COMPLETE, run.status
        assert stub.duplicate_answers() == {}
    assert (run.answered_count, run.judged_count, run.sv_checked_count) == (12, 12, 12)
    assert run.failed_count == 0
    assert Judgment.objects.filter(response__run=run, status="done").count() == 24
    assert run.responses.first().rendering.language == "en"


@pytest.mark.worker
def test_killed_worker_resumes_an_evaluation_without_paying_twice(
    killable_worker, benchmark
):
    """SIGKILL mid-evaluation, then a worker starts again: its stalled-run sweep
    (LABELLING_STALE_SECONDS=2 in the test worker) re-queues the open chunks, the run
    completes, and no call recorded before the kill is made again."""
    items = 40
    make_items(benchmark, items)
    with OpenAIStub(api_key="k", latency=0.1, responder=clean_responder) as stub:
        endpoints = role_endpoints(stub, concurrency=2)
        killable_worker.start()
        run = do_start_evaluation(
            benchmark,
            tested=endpoints["tested"],
            judge=endpoints["judge"],
            sv_judge=endpoints["sv"],
            language="en",
        )
        wait_until(
            lambda: LLMCall.objects.exclude(status="sent").count() >= items // 2,
            60,
            "the worker never started",
        )
        killable_worker.kill()
        killed_at = time.monotonic()
        recorded = {
            request_key({"model": call.model, "messages": call.messages})
            # answered: a "sent" record was claimed, maybe in flight, at the kill
            for call in LLMCall.objects.exclude(status="sent")
        }
        run.refresh_from_db()
        assert run.status == EvaluationRun.Status.RUNNING, "the kill was not mid-run"
        assert 0 < len(recorded) < 3 * items

        killable_worker.start()

        def finished():
            run.refresh_from_db()
            return run.status == EvaluationRun.Status.COMPLETE

        # Bound: the sweep waits LABELLING_STALE_SECONDS (2 s) after the start, then
        # 3 × 40 calls at 2 in flight and 0.1 s each take about 6 s.
        wait_until(finished, 60, "the run did not complete after the restart")
        paid_again = [
            r
            for r in stub.requests
            if r.status == 200 and r.at > killed_at and r.key in recorded
        ]
        assert paid_again == [], "a recorded call was paid for again"
    assert (run.answered_count, run.judged_count, run.sv_checked_count) == (
        items,
        items,
        items,
    )
    assert run.failed_count == 0
    assert LLMCall.objects.count() == 3 * items
