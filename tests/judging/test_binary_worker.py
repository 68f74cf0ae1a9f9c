"""A real Celery worker runs a multiple-choice run of three trials on a binary
benchmark: answers read by rules, no judge call, every trial asked."""

import pytest

from judging.evaluation.actions import do_start_evaluation
from judging.evaluation.models import EvaluationRun, Response
from judging.leaderboard.building import cached_report
from judging.llm.models import Endpoint, LLMCall
from tests.judging.factories import make_format_items
from tests.judging.labelling_fixtures import wait_until
from tests.judging.test_binary_runs import binary_responder
from tests.openai_stub import OpenAIStub


@pytest.mark.worker
def test_worker_runs_a_multiple_choice_run(running_worker, benchmark):
    make_format_items(benchmark, mc=6)
    with OpenAIStub(api_key="k", latency=0.02, responder=binary_responder) as stub:
        tested = Endpoint.objects.create(
            name="tested",
            base_url=stub.base_url,
            model="tested-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=4,
        )
        run = do_start_evaluation(
            benchmark, tested=tested, judge=None, sv_judge=None, language="zh", trials=3
        )

        def finished():
            run.refresh_from_db()
            return run.status == EvaluationRun.Status.COMPLETE

        wait_until(finished, 90, "the worker did not finish the run")
        assert stub.request_count == 18  # 6 items × 3 trials, no judge
    assert LLMCall.objects.values("request_hash").distinct().count() == 18
    grades = list(
        Response.objects.filter(run=run).values_list("grade__grade", flat=True)
    )
    assert None not in grades
    assert (run.scored_count, run.failed_count) == (18, 0)
    (metrics,) = cached_report(benchmark).metrics
    # Per item and trial: right, wrong, two answers, refusal, none, empty.
    assert (metrics.correct, metrics.wrong, metrics.flagged) == (3, 3, 12)
    # Study 002 §2.3: correct over every tested answer; the old definition (over
    # the scored ones) is the secondary column.
    assert metrics.accuracy == pytest.approx(100 * 3 / 18)
    assert metrics.scored_accuracy == pytest.approx(50.0)
