"""Fault injection: evaluation runs on a real worker against a provider that
misbehaves, and a worker killed with SIGKILL at random points.

Each fault hits two of the run's items at one stage — for a few tries (transient: the
run completes) or for good (the run ends *Needs attention*, those items pending with
the reason the run page shows). For every fault: the run reaches its terminal state
within RUN_BOUND_SECONDS of being queued (worker start-up included), every item is
done or pending with its reason, and every reply the provider was paid for is
recorded as an LLMCall.
"""

import json
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass

import pytest

from judging.evaluation.actions import do_start_evaluation, pending_responses
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.evaluation.responses import response_details
from judging.llm.models import LLMCall
from tests.judging.evaluation_stub import item_number, role_endpoints
from tests.judging.factories import make_items
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import OpenAIStub, Reply, first_user_text, request_key

ITEMS = 8
FAULTED = {2, 5}
# The worker's gateway settings: 1 s request time-out, 3 attempts (12 for 429s),
# back-off of at most 0.1 s, 10 s per call whatever happens.
WORKER_LLM_ENV = {
    "LLM_REQUEST_TIMEOUT": "1",
    "LLM_MAX_ATTEMPTS": "3",
    "LLM_BACKOFF_MAX_MS": "100",
    "LLM_CALL_DEADLINE_SECONDS": "10",
    "LLM_PARSE_RETRIES": "1",
}
# Worker start-up (~5 s) + the slowest fault (3 time-outs of 1 s per faulted call)
# + the clean calls, with room for a loaded CI machine.
RUN_BOUND_SECONDS = 45
TWENTY_MB = "x" * 20_000_000


@dataclass(frozen=True)
class Fault:
    stage: str  # "answer", "judge" or "sv"
    reply: Reply
    tries: int | None  # faulted tries per item; None: every try
    reason: str = ""  # what the run page says of a faulted item left pending


FAULTS = {
    "429 storm, then served": Fault(
        "judge", Reply(status=429, headers={"Retry-After": "0"}), tries=4
    ),
    "429 for ever": Fault(
        "judge",
        Reply(status=429, headers={"Retry-After": "0"}),
        tries=None,
        reason=r"HTTP 429.*gave up after 12 tries",
    ),
    "5xx, then served": Fault("answer", Reply(status=503), tries=2),
    "5xx for ever": Fault(
        "answer", Reply(status=500), tries=None, reason=r"HTTP 500.*gave up"
    ),
    "time-outs": Fault(
        "sv", Reply(content="late", delay=3), tries=None, reason=r"Timed out after 1 s"
    ),
    "connection resets": Fault(
        "judge", Reply(reset=True), tries=None, reason=r"Connection error"
    ),
    "malformed body": Fault(
        "answer",
        Reply(body={"choices": [{"message": "x"}]}),
        tries=None,
        reason=r"Malformed response",
    ),
    "NUL byte in a verdict": Fault(
        "judge", Reply(content='{"score": 3, "reason": "a\\u0000b"}'), tries=None
    ),
    "20 MB reply": Fault(
        "answer", Reply(content=TWENTY_MB), tries=None, reason=r"LLM_MAX_REPLY_CHARS"
    ),
    "two JSON objects": Fault(
        "judge",
        Reply(content='{"score": 3} but really {"score": 0, "reason": "wrong"}'),
        tries=None,
        reason=r"Unparseable after .*2 different JSON objects",
    ),
}
NO_FAULT = Fault("answer", Reply(), tries=0)


def stage_of(body: dict) -> str:
    prompt = first_user_text(body)
    if "Grade the candidate answer" in prompt:
        return "judge"
    if "safety violation" in prompt:
        return "sv"
    return "answer"


def clean_reply(stage: str, number: int) -> Reply:
    if stage == "judge":
        return Reply(content=json.dumps({"score": 3, "reason": "matches"}))
    if stage == "sv":
        return Reply(content=json.dumps({"safety_violation": False, "reason": "ok"}))
    return Reply(content=f"Answer {number}: exactly the reference.")


def faulty_responder(fault: Fault):
    tries: Counter = Counter()
    lock = threading.Lock()

    def respond(body: dict) -> Reply:
        stage, number = stage_of(body), item_number(first_user_text(body))
        if stage == fault.stage and number in FAULTED:
            with lock:
                tries[number] += 1
                faulted = fault.tries is None or tries[number] <= fault.tries
            if faulted:
                return fault.reply
        return clean_reply(stage, number)

    return respond


def start(benchmark, endpoints) -> EvaluationRun:
    return do_start_evaluation(
        benchmark,
        tested=endpoints["tested"],
        judge=endpoints["judge"],
        sv_judge=endpoints["sv"],
        language="en",
    )


def wait_for_end(run: EvaluationRun, bound: float) -> None:
    ended = {EvaluationRun.Status.COMPLETE, EvaluationRun.Status.ATTENTION}

    def finished():
        run.refresh_from_db()
        return run.status in ended

    wait_until(finished, bound, f"the run did not end within {bound} s ({run.status})")


def call_identity(model: str, messages: list) -> tuple[str, str]:
    """A call is recognised by model and first prompt; a re-ask (the reply and a
    complaint appended) is the same paid-for call."""
    first = next(m["content"] for m in messages if m["role"] == "user")
    return model, first


def unrecorded_paid_replies(stub: OpenAIStub) -> list[tuple[str, str]]:
    recorded = {
        call_identity(call.model, call.messages)
        for call in LLMCall.objects.only("model", "messages")
    }
    paid = {
        call_identity(r.model, r.body["messages"])
        for r in stub.requests
        if r.status == 200
    }
    return sorted(paid - recorded)


@pytest.mark.worker
@pytest.mark.parametrize("name", list(FAULTS))
def test_every_run_ends_under_provider_faults(name, killable_worker, benchmark):
    fault = FAULTS[name]
    make_items(benchmark, ITEMS, languages=("en",))
    with OpenAIStub(api_key="k", responder=faulty_responder(fault)) as stub:
        endpoints = role_endpoints(stub, concurrency=4)
        killable_worker.env.update(WORKER_LLM_ENV)
        killable_worker.start()
        run = start(benchmark, endpoints)
        wait_for_end(run, RUN_BOUND_SECONDS)
        assert unrecorded_paid_replies(stub) == [], "a paid reply was not recorded"

    pending = response_details(pending_responses(run))
    pending_numbers = {item_number(d.response.rendering.question) for d in pending}
    if fault.reason:
        assert run.status == EvaluationRun.Status.ATTENTION
        assert pending_numbers == FAULTED
        assert run.failed_count == len(FAULTED)
        for detail in pending:
            reasons = " | ".join(
                text
                for text in (
                    detail.response.error,
                    detail.rubric.error if detail.rubric else "",
                    detail.safety.error if detail.safety else "",
                )
                if text
            )
            assert re.search(fault.reason, reasons), reasons
    else:
        assert run.status == EvaluationRun.Status.COMPLETE
        assert pending_numbers == set()
    done = Response.objects.filter(run=run).exclude(
        item_id__in=[d.response.item_id for d in pending]
    )
    assert done.count() == ITEMS - len(pending)
    for response in done:
        kinds = set(
            response.judgments.filter(status=Judgment.Status.DONE).values_list(
                "kind", flat=True
            )
        )
        assert kinds == {Judgment.Kind.RUBRIC, Judgment.Kind.SAFETY}
    if name == "NUL byte in a verdict":
        reasons = Judgment.objects.filter(
            response__run=run, kind=Judgment.Kind.RUBRIC
        ).values_list("reason", flat=True)
        assert "ab" in set(reasons)


@pytest.mark.worker
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_worker_killed_at_a_random_point_loses_nothing_paid_for(
    seed, killable_worker, benchmark
):
    """SIGKILL at a random moment of the run, then a new worker: the run completes
    within the bound, and the only calls paid for twice are calls that had no
    record at the kill — at most those in flight plus those answered but not yet
    written."""
    items = 60
    make_items(benchmark, items, languages=("en",))
    delay = random.Random(seed).uniform(0.1, 2.0)
    with OpenAIStub(
        api_key="k", latency=0.1, responder=faulty_responder(NO_FAULT)
    ) as stub:
        endpoints = role_endpoints(stub, concurrency=2)
        killable_worker.start()
        run = start(benchmark, endpoints)
        wait_until(lambda: LLMCall.objects.exists(), 60, "the worker never started")
        time.sleep(delay)
        killable_worker.kill()
        killed_at = time.monotonic()
        run.refresh_from_db()
        assert run.status == EvaluationRun.Status.RUNNING, "the kill was not mid-run"
        # Answered records; a "sent" one was in flight at the kill (without an
        # idempotency-honouring provider it may be paid again).
        recorded = {
            request_key({"model": call.model, "messages": call.messages})
            for call in LLMCall.objects.exclude(status=LLMCall.Status.SENT)
        }
        # The stub logs a request when it replies: one still in flight at the kill
        # shows up later, and may then be asked again by the next worker.
        paid_unrecorded = {
            r.key for r in stub.requests if r.at <= killed_at and r.status == 200
        } - recorded

        killable_worker.start()
        # Bound: the restarted worker's sweep waits LABELLING_STALE_SECONDS (2 s)
        # after start-up, then at most 3 × 60 calls at 6 in flight, 0.1 s each.
        wait_for_end(run, 60)
        assert run.status == EvaluationRun.Status.COMPLETE
        assert unrecorded_paid_replies(stub) == []
        twice = {key for key, count in stub.answered.items() if count > 1}
    assert twice.isdisjoint(recorded), "a call recorded before the kill was paid again"
    # The endpoints' limits allow 3 × 2 calls in flight at the kill.
    in_flight_at_most = sum(e.max_concurrency for e in endpoints.values())
    assert len(twice) <= in_flight_at_most + len(paid_unrecorded)
    assert run.failed_count == 0 and run.judged_count == items
