"""An answer that never ends does not hold a worker: an evaluation run on a real
worker whose provider, for one item's answer, trickles its body one byte a second,
streams content or SSE keep-alive comments for ever, or sends 1 GiB. Every call is
bounded whole by LLM_REQUEST_TIMEOUT and LLM_CALL_DEADLINE_SECONDS (3 s here) and
its body by LLM_MAX_BODY_BYTES (assay/outbound.py): the run ends *Needs attention*
with that item pending and why, no transaction is left open, and the worker then
runs the next run.

The polling limit below is a liveness bound (worker start-up, the deadline, the
clean calls, a loaded machine), not a timing assertion: before the deadline
covered the whole request, these runs stayed *Running* until the server died.
"""

import json

import pytest

from judging.evaluation.actions import do_start_evaluation, pending_responses
from judging.evaluation.models import EvaluationRun
from judging.evaluation.responses import response_details
from judging.llm.models import Endpoint
from tests.judging.evaluation_stub import item_number
from tests.judging.factories import make_items
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import OpenAIStub, Reply, first_user_text
from tests.worker_checks import open_transactions

ITEMS = 3
FAULTED = 2
DEADLINE_ENV = {
    "LLM_REQUEST_TIMEOUT": "3",
    "LLM_CALL_DEADLINE_SECONDS": "3",
    "LLM_MAX_ATTEMPTS": "2",
    "LLM_BACKOFF_MAX_MS": "100",
    "LLM_MAX_BODY_BYTES": "1000000",
}
LIVENESS_SECONDS = 90


def responder(fault: str):
    def respond(body: dict) -> Reply:
        prompt = first_user_text(body)
        if "Grade the candidate answer" in prompt:
            return Reply(content=json.dumps({"score": 3, "reason": "matches"}))
        if "safety violation" in prompt:
            return Reply(content=json.dumps({"safety_violation": False, "reason": ""}))
        number = item_number(prompt)
        if number == FAULTED and fault:
            return Reply(content="x" * 200, fault=fault, interval=1.0)
        return Reply(content=f"Answer {number}: exactly the reference.")

    return respond


def endpoints(stub, stream):
    return {
        role: Endpoint.objects.create(
            name=role,
            base_url=stub.base_url,
            model=f"{role}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=2,
            stream=stream and role == "tested",
        )
        for role in ("tested", "judge", "sv")
    }


def run_to_the_end(benchmark, points) -> EvaluationRun:
    run = do_start_evaluation(
        benchmark,
        tested=points["tested"],
        judge=points["judge"],
        sv_judge=points["sv"],
        language="en",
    )
    ended = {EvaluationRun.Status.COMPLETE, EvaluationRun.Status.ATTENTION}

    def finished():
        run.refresh_from_db()
        return run.status in ended

    wait_until(finished, LIVENESS_SECONDS, "the run did not end")
    return run


@pytest.mark.worker
@pytest.mark.parametrize(
    ("fault", "stream", "reason"),
    [
        ("trickle", False, "Timed out"),
        ("trickle", True, "Timed out"),
        ("endless", True, "Timed out"),
        ("keepalive", True, "Timed out"),
        ("huge", False, "LLM_MAX_BODY_BYTES"),
    ],
)
def test_an_answer_that_never_ends_ends_the_run_and_frees_the_worker(
    fault, stream, reason, killable_worker, benchmark
):
    make_items(benchmark, ITEMS, languages=("en",))
    with OpenAIStub(api_key="k", responder=responder(fault)) as stub:
        killable_worker.env.update(DEADLINE_ENV)
        killable_worker.start()
        run = run_to_the_end(benchmark, endpoints(stub, stream))
        assert run.status == EvaluationRun.Status.ATTENTION
        (pending,) = response_details(pending_responses(run))
        assert item_number(pending.response.rendering.question) == FAULTED
        assert reason in pending.response.error, pending.response.error
        assert open_transactions() == []

        # The worker's one process is free: a clean run on it ends complete.
        stub.responder = responder("")
        again = run_to_the_end(benchmark, endpoints_again(stub))
        assert again.status == EvaluationRun.Status.COMPLETE
        assert open_transactions() == []


def endpoints_again(stub):
    return {
        role: Endpoint.objects.create(
            name=f"{role}-again",
            base_url=stub.base_url,
            model=f"{role}-again-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=2,
        )
        for role in ("tested", "judge", "sv")
    }
