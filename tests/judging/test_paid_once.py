"""Paid once: requests counted at the provider against LLMCall records.

- Two gateway sessions (two chunks of a run on two workers, say) sending the same
  prompt at the same moment make one call: the second waits for the first's
  record (judging/llm/records.py).
- A reply is on record even when the caller's `on_results` then fails.
- A worker SIGKILLed with calls in flight, then a new worker: the calls in flight
  at the kill are sent again with their idempotency key, which the provider (the
  stub with `idempotency=True`) answers from its own record: no reply is made
  twice, and every reply made is recorded.
"""

import threading

import pytest
from django.db import connection

from judging.llm.actions import do_save_endpoint
from judging.llm.gateway import LLMRequest, run_requests
from judging.llm.models import LLMCall
from tests.judging.evaluation_stub import role_endpoints
from tests.judging.factories import make_items
from tests.judging.labelling_fixtures import wait_until
from tests.judging.test_run_faults import (
    NO_FAULT,
    faulty_responder,
    start,
    wait_for_end,
)
from tests.openai_stub import OpenAIStub, request_key


@pytest.fixture(autouse=True)
def stub_key(monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "k")


def same_prompt(endpoint, key):
    return LLMRequest(
        key=key,
        endpoint=endpoint,
        messages=[{"role": "user", "content": "The same question, asked twice."}],
        purpose="answering",
    )


def test_identical_prompts_sent_at_the_same_moment_are_paid_once(transactional_db):
    with OpenAIStub(latency=1.0, api_key="k") as stub:
        endpoint = do_save_endpoint(
            "tested", base_url=stub.base_url, model="m", api_key_env="STUB_API_KEY"
        )
        calls = {}

        def chunk(key):
            try:
                run_requests(
                    [same_prompt(endpoint, key)],
                    on_results=lambda o: calls.update({x.key: x.call.pk for x in o}),
                )
            finally:
                connection.close()

        sessions = [threading.Thread(target=chunk, args=(n,)) for n in range(3)]
        for session in sessions:
            session.start()
        for session in sessions:
            session.join()
        assert stub.paid_twice() == {} and stub.answered_count() == 1
    assert len(set(calls.values())) == 1 and set(calls) == {0, 1, 2}
    assert LLMCall.objects.get().status == LLMCall.Status.OK


def test_a_reply_is_recorded_even_when_the_caller_then_fails(db):
    with OpenAIStub(api_key="k") as stub:
        endpoint = do_save_endpoint(
            "tested", base_url=stub.base_url, model="m", api_key_env="STUB_API_KEY"
        )

        def broken(outcomes):
            raise RuntimeError("the caller's own write failed")

        with pytest.raises(RuntimeError):
            run_requests([same_prompt(endpoint, 1)], on_results=broken)
        assert LLMCall.objects.get().status == LLMCall.Status.OK
        served = []
        stats = run_requests(
            [same_prompt(endpoint, 1)], on_results=lambda o: served.extend(o)
        )
        assert stats.cached == 1 and served[0].cached
        assert stub.answered_count() == 1


@pytest.mark.worker
def test_a_worker_killed_mid_run_pays_for_nothing_twice(killable_worker, benchmark):
    items = 24
    make_items(benchmark, items, languages=("en",))
    with OpenAIStub(
        api_key="k", latency=1.0, idempotency=True, responder=faulty_responder(NO_FAULT)
    ) as stub:
        endpoints = role_endpoints(stub, concurrency=4)
        killable_worker.start()
        run = start(benchmark, endpoints)
        wait_until(
            lambda: (
                stub.in_flight >= 3 and LLMCall.objects.filter(status="ok").exists()
            ),
            90,
            "the run never had calls in flight",
        )
        in_flight_at_kill = stub.in_flight
        killable_worker.kill()
        killable_worker.start()
        wait_for_end(run, 120)
        run.refresh_from_db()
        assert run.status == run.Status.COMPLETE
        assert in_flight_at_kill >= 3
        # Counted at the provider: nothing made twice, each made reply recorded.
        assert stub.paid_twice() == {}
        recorded = {
            request_key({"model": call.model, "messages": call.messages})
            for call in LLMCall.objects.all()
        }
        assert set(stub.made) == recorded
        assert stub.replayed >= 1  # calls in flight at the kill, recognised
    assert not LLMCall.objects.filter(status="sent").exists()
    assert run.failed_count == 0 and run.judged_count == items
