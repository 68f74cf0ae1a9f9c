"""A real Celery worker runs an evaluation queued by start_evaluation (no --wait)."""

import io
import time

import pytest
from django.core.management import call_command

from judging.evaluation.models import EvaluationRun, Judgment
from judging.llm.models import Endpoint
from tests.judging.evaluation_stub import clean_responder
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub


@pytest.mark.worker
def test_worker_runs_a_queued_evaluation(killable_worker, benchmark):
    make_items(benchmark, 12)
    with OpenAIStub(api_key="k", latency=0.05, responder=clean_responder) as stub:
        for name in ("tested", "judge", "sv"):
            Endpoint.objects.create(
                name=name,
                base_url=stub.base_url,
                model=f"{name}-model",
                api_key_env="STUB_API_KEY",
                max_concurrency=4,
            )
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
