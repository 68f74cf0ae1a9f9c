"""The gateway against a real OpenAI-protocol server, through the real openai client:
every failure mode, the request-keyed cache, and the per-endpoint limits."""

import asyncio
import queue
import sys
import threading
import time
from decimal import Decimal

import pytest

from judging.llm.actions import do_save_endpoint
from judging.llm.engine import Engine
from judging.llm.gateway import LLMRequest, prepare, request_hash, run_requests
from judging.llm.limits import POLL_SECONDS, LocalLimiter
from judging.llm.models import LLMCall
from judging.llm.outputs import (
    OutputError,
    extract_json_object,
    labelling_validator,
    score_validator,
)
from judging.llm.prompts import default_template
from tests.openai_stub import OpenAIStub, Reply, last_user_text

GOOD = '{"score": 2, "reason": "right conclusion, missing units"}'


@pytest.fixture(autouse=True)
def fast_llm_settings(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 20
    settings.LLM_BACKOFF_MAX_MS = 100
    settings.LLM_MAX_ATTEMPTS = 3
    settings.LLM_PARSE_RETRIES = 2
    monkeypatch.setenv("STUB_API_KEY", "test-key")


@pytest.fixture
def short_deadline(settings):
    """A 1 s deadline, only where a test times a call out: elsewhere a slow
    answer on a loaded machine would be retried and counted twice."""
    settings.LLM_REQUEST_TIMEOUT = 1


@pytest.fixture
def stub():
    with OpenAIStub(api_key="test-key") as running:
        yield running


def make_endpoint(stub, name="judge", **fields):
    fields = {"max_concurrency": 8, **fields}
    return do_save_endpoint(
        name,
        base_url=stub.base_url,
        model=f"{name}-model",
        api_key_env="STUB_API_KEY",
        **fields,
    )


@pytest.fixture
def endpoint(db, stub):
    return make_endpoint(stub)


@pytest.fixture
def rubric(db):
    return default_template("rubric_judging")


def judge_requests(endpoint, template, names, **kwargs):
    return [
        LLMRequest(
            key=name,
            endpoint=endpoint,
            template=template,
            variables={"question": name, "reference_answer": "ref", "response": "x"},
            validate=score_validator(0, 3),
            **kwargs,
        )
        for name in names
    ]


@pytest.fixture
def waits(monkeypatch):
    """The pauses the gateway asks of asyncio.sleep (back-off, Retry-After),
    recorded as asked and then taken: tests assert on the pauses the code chose,
    never on how long the machine took. `waits.limiter` holds the limiters'."""
    asked = PausesAsked()
    real_sleep = asyncio.sleep

    def sleep(delay, *args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__")
        if caller == "judging.llm.engine":
            asked.append(delay)
        elif caller == "judging.llm.limits":
            asked.limiter.append(delay)
        return real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    return asked


class PausesAsked(list):
    def __init__(self):
        super().__init__()
        self.limiter = []


def run(requests, **kwargs):
    outcomes = {}

    def collect(batch):
        outcomes.update({outcome.key: outcome for outcome in batch})

    stats = run_requests(requests, on_results=collect, **kwargs)
    return stats, outcomes


def test_reply_in_code_fence_is_parsed_and_everything_is_recorded(
    stub, endpoint, rubric
):
    stub.script("q1", Reply(content=f"Here you go:\n```json\n{GOOD}\n```\nThanks."))
    stats, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    call = outcomes["q1"].call
    assert call.status == LLMCall.Status.OK
    assert call.parsed_output == {
        "score": 2,
        "reason": "right conclusion, missing units",
    }
    assert call.template == rubric
    assert call.model == "judge-model"
    assert call.attempts == 1
    assert call.input_tokens > 0 and call.output_tokens > 0
    assert call.messages[-1]["content"].startswith("Grade the candidate answer")
    assert call.request_hash == request_hash(
        endpoint, call.model, call.messages, call.params
    )
    assert stats.ok == 1 and stats.made == 1


def test_a_request_may_name_another_model_of_its_endpoint(stub, endpoint, rubric):
    # A separate thinking model on the same endpoint: sent, recorded and cached
    # under its own id, so the two modes never share a record.
    stub.responder = lambda body: GOOD
    _, plain = run(judge_requests(endpoint, rubric, ["q1"]))
    _, other = run(judge_requests(endpoint, rubric, ["q1"], model="judge-reasoner"))
    assert [r.model for r in stub.requests] == ["judge-model", "judge-reasoner"]
    assert (plain["q1"].call.model, other["q1"].call.model) == (
        "judge-model",
        "judge-reasoner",
    )
    assert plain["q1"].call.request_hash != other["q1"].call.request_hash
    assert not other["q1"].cached


def test_malformed_json_is_re_asked_with_the_error(stub, endpoint, rubric):
    stub.script("q1", Reply(content='{"score": 2, "reason": '), Reply(content=GOOD))
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    call = outcomes["q1"].call
    assert call.status == LLMCall.Status.OK
    assert call.parse_errors == [
        {
            "reply": '{"score": 2, "reason": ',
            "error": "The reply contains no JSON object.",
        }
    ]
    re_ask = stub.requests[-1].body["messages"]
    assert re_ask[-2] == {"role": "assistant", "content": '{"score": 2, "reason": '}
    assert "could not be used" in re_ask[-1]["content"]


def test_out_of_schema_output_becomes_unparseable_with_raw_text_never_a_default(
    stub, endpoint, rubric
):
    stub.script("q1", Reply(content='{"score": 7, "reason": "generous"}'))
    stats, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    call = outcomes["q1"].call
    assert call.status == LLMCall.Status.UNPARSEABLE
    assert call.parsed_output is None
    assert call.raw_response == '{"score": 7, "reason": "generous"}'
    assert len(call.parse_errors) == 3  # the first reply and two re-asks
    assert "between 0 and 3" in call.error
    assert stub.request_count == 3
    assert stats.unparseable == 1


def test_label_outside_the_dimension_is_rejected(stub, db):
    endpoint = make_endpoint(stub, "labeller")
    template = default_template("labelling")
    stub.script(
        "ITEM-9",
        '{"capability": "fault_diagnosis", "industry": "space_travel"}',
        '{"capability": "fault_diagnosis", "industry": "energy_storage", '
        '"rationale": "battery"}',
    )
    validate = labelling_validator(
        {"capability": ["fault_diagnosis"], "industry": ["energy_storage"]}
    )
    request = LLMRequest(
        key=1,
        endpoint=endpoint,
        template=template,
        variables={
            "taxonomy": "t",
            "question": "ITEM-9",
            "answer": "a",
            "output_keys": "k",
            "output_example": "{}",
        },
        validate=validate,
    )
    _, outcomes = run([request])
    call = outcomes[1].call
    assert call.parsed_output == {
        "capability": "fault_diagnosis",
        "industry": "energy_storage",
        "rationale": "battery",
    }
    assert "space_travel" in call.parse_errors[0]["error"]


def test_429_waits_for_retry_after_then_succeeds(stub, endpoint, rubric, waits):
    stub.script(
        "q1",
        Reply(status=429, headers={"Retry-After": "1"}, error_message="slow down"),
        Reply(content=GOOD),
    )
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    assert max(waits) >= 1.0
    call = outcomes["q1"].call
    assert call.status == LLMCall.Status.OK
    assert call.attempts == 2


def test_server_errors_and_timeouts_are_retried(stub, endpoint, rubric, short_deadline):
    stub.script("q-500", Reply(status=500, error_message="boom"), Reply(content=GOOD))
    stub.script("q-slow", Reply(content=GOOD, delay=1.5), Reply(content=GOOD))
    _, outcomes = run(judge_requests(endpoint, rubric, ["q-500", "q-slow"]))
    assert outcomes["q-500"].call.status == LLMCall.Status.OK
    assert outcomes["q-500"].call.attempts == 2
    assert outcomes["q-slow"].call.status == LLMCall.Status.OK
    assert outcomes["q-slow"].call.attempts == 2


def test_time_outs_and_dropped_connections_say_which_they_were(
    stub, endpoint, rubric, short_deadline
):
    # The SDK's aiohttp transport raises its time-out error for a reset too.
    stub.script("q-slow", Reply(content=GOOD, delay=1.5))
    stub.script("q-reset", Reply(reset=True))
    _, outcomes = run(judge_requests(endpoint, rubric, ["q-slow", "q-reset"]))
    slow, reset = outcomes["q-slow"].call, outcomes["q-reset"].call
    assert slow.status == reset.status == LLMCall.Status.FAILED
    assert slow.error.startswith("Timed out after 1 s")
    assert reset.error.startswith("Connection error: ConnectionResetError")
    assert slow.attempts == reset.attempts == 3


def test_persistent_server_errors_fail_after_max_attempts(stub, endpoint, rubric):
    stub.script("q1", Reply(status=503, error_message="overloaded"))
    stats, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    call = outcomes["q1"].call
    assert call.status == LLMCall.Status.FAILED
    assert call.attempts == 3
    assert "HTTP 503: overloaded" in call.error
    assert stats.failed == 1


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(status=400, error_message="max_tokens too large"), "max_tokens too"),
        (Reply(status=403, error_message="region not allowed"), "region not allowed"),
    ],
)
def test_permanent_errors_fail_fast_with_the_provider_message(
    stub, endpoint, rubric, reply, message
):
    stub.script("q1", reply)
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    call = outcomes["q1"].call
    assert call.status == LLMCall.Status.FAILED
    assert call.attempts == 1
    assert message in call.error
    assert stub.request_count == 1


def test_wrong_key_and_unknown_model_fail_fast(stub, db, rubric, monkeypatch):
    monkeypatch.setenv("WRONG_API_KEY", "nope")
    wrong_key = do_save_endpoint(
        "wrong-key", base_url=stub.base_url, model="m", api_key_env="WRONG_API_KEY"
    )
    stub.models = {"judge-model"}
    unknown = make_endpoint(stub, "unknown")
    _, outcomes = run(
        judge_requests(wrong_key, rubric, ["a"])
        + judge_requests(unknown, rubric, ["b"])
    )
    assert "HTTP 401: Incorrect API key provided." in outcomes["a"].call.error
    assert "HTTP 404: The model `unknown-model` does not exist." in (
        outcomes["b"].call.error
    )
    assert stub.request_count == 2


def test_missing_key_variable_fails_without_a_request(stub, db, rubric):
    endpoint = do_save_endpoint(
        "no-key", base_url=stub.base_url, model="m", api_key_env="ASSAY_UNSET_API_KEY"
    )
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    assert "ASSAY_UNSET_API_KEY" in outcomes["q1"].call.error
    assert stub.request_count == 0


def test_identical_requests_are_served_from_the_record(stub, endpoint, rubric):
    stub.responder = lambda body: GOOD
    first, _ = run(judge_requests(endpoint, rubric, ["a", "b"]))
    assert first.made == 2 and stub.request_count == 2
    again, outcomes = run(judge_requests(endpoint, rubric, ["a", "b", "c"]))
    assert (again.cached, again.made) == (2, 1)
    assert outcomes["a"].cached and not outcomes["c"].cached
    assert stub.request_count == 3
    refreshed, _ = run(judge_requests(endpoint, rubric, ["a"]), scope="refresh-1")
    assert refreshed.made == 1 and stub.request_count == 4
    assert (
        LLMCall.objects.filter(request_hash=outcomes["a"].call.request_hash).count()
        == 2
    )
    assert list(stub.duplicate_answers().values()) == [2]


def test_identical_requests_in_one_batch_make_one_call(stub, endpoint, rubric):
    stub.responder = lambda body: GOOD
    requests = judge_requests(endpoint, rubric, ["same"])
    twin = LLMRequest(
        key="twin",
        endpoint=endpoint,
        template=rubric,
        variables=requests[0].variables,
        validate=requests[0].validate,
    )
    _, outcomes = run([*requests, twin])
    assert outcomes["same"].call.pk == outcomes["twin"].call.pk
    assert stub.request_count == 1


def test_a_failed_call_is_made_again_next_time(stub, endpoint, rubric):
    stub.script("q1", Reply(status=400, error_message="bad"), Reply(content=GOOD))
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    failed = outcomes["q1"].call
    assert failed.status == LLMCall.Status.FAILED
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    assert outcomes["q1"].call.pk == failed.pk
    assert outcomes["q1"].call.status == LLMCall.Status.OK
    assert LLMCall.objects.count() == 1


def test_streaming_keeps_reasoning_apart(stub, db, rubric):
    endpoint = make_endpoint(stub, "thinker", stream=True)
    stub.script("q1", Reply(content=GOOD, reasoning="Compare units first."))
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    call = outcomes["q1"].call
    assert call.raw_response == GOOD
    assert call.reasoning_text == "Compare units first."
    assert call.output_tokens > 0
    assert stub.requests[0].stream


@pytest.mark.parametrize("stream", [False, True])
def test_a_content_filter_finish_is_recorded_as_the_providers_refusal(
    stub, db, rubric, stream
):
    endpoint = make_endpoint(stub, f"filtered-{stream}", stream=stream)
    stub.script("q1", Reply(content="", finish_reason="content_filter"))
    stub.script("q2", Reply(content=GOOD))
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1", "q2"]))
    assert outcomes["q1"].call.finish_reason == "content_filter"
    assert outcomes["q1"].provider_refused
    # An unusable reply the filter cut is not re-asked: the provider declined.
    assert outcomes["q1"].call.status == LLMCall.Status.UNPARSEABLE
    assert len(stub.requests) == 2
    assert outcomes["q2"].call.finish_reason == "stop"
    assert not outcomes["q2"].provider_refused


def test_non_streamed_reasoning_is_kept_too(stub, endpoint, rubric):
    stub.script("q1", Reply(content=GOOD, reasoning="Check the constraint."))
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    assert outcomes["q1"].call.reasoning_text == "Check the constraint."


def test_params_and_cost(stub, db, rubric):
    endpoint = make_endpoint(
        stub,
        "priced",
        temperature=0.0,
        max_tokens=64,
        extra_body={"enable_thinking": False},
        price_input_per_1k=Decimal("0.002"),
        price_output_per_1k=Decimal("0.01"),
    )
    stub.responder = lambda body: GOOD
    _, outcomes = run(judge_requests(endpoint, rubric, ["q1"]))
    body = stub.requests[0].body
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 64
    assert body["enable_thinking"] is False
    call = outcomes["q1"].call
    expected = (
        Decimal("0.002") * call.input_tokens + Decimal("0.01") * call.output_tokens
    ) / 1000
    assert call.cost == expected.quantize(Decimal("0.000001"))


def test_concurrency_never_exceeds_the_endpoint_limit(stub, db, rubric):
    stub.latency = 0.05
    stub.max_in_flight = 4
    stub.responder = lambda body: GOOD
    endpoint = make_endpoint(stub, "narrow", max_concurrency=4)
    stats, outcomes = run(
        judge_requests(endpoint, rubric, [f"q{n}" for n in range(40)])
    )
    assert stats.ok == 40
    assert stub.capped == 0
    assert stub.peak_in_flight == 4
    assert stub.duplicate_answers() == {}


def test_limit_holds_across_concurrent_gateways_sharing_redis(stub, db, rubric):
    stub.latency = 0.05
    stub.max_in_flight = 3
    stub.responder = lambda body: GOOD
    endpoint = make_endpoint(stub, "shared", max_concurrency=3)
    # A second caller with its own event loop, as another worker would have. It
    # writes nothing (the test database is visible on this thread only), so it
    # drives the gateway's HTTP engine directly.
    other_results: queue.Queue = queue.Queue()
    other_requests = judge_requests(endpoint, rubric, [f"o{n}" for n in range(20)])
    other = Engine(other_results)
    thread = threading.Thread(target=other.run)
    thread.start()
    other.submit(prepare(other_requests, None)[0])
    stats, _ = run(judge_requests(endpoint, rubric, [f"q{n}" for n in range(20)]))
    other_outcomes = [other_results.get(timeout=30) for _ in range(20)]
    other.stop()
    thread.join()
    assert stats.ok == 20
    assert [r.status for r in other_outcomes] == [LLMCall.Status.OK] * 20
    assert stub.capped == 0
    assert stub.peak_in_flight == 3


def test_adaptive_limit_backs_off_on_429_and_completes(stub, db, rubric):
    stub.max_in_flight = 3

    def answer_once_one_is_refused(body):
        # The first three wait until a fourth came while they were in flight and
        # was refused, however slowly a loaded machine sends them.
        deadline = time.monotonic() + 30
        while not stub.capped and time.monotonic() < deadline:
            time.sleep(0.01)
        return GOOD

    stub.responder = answer_once_one_is_refused
    endpoint = make_endpoint(stub, "eager", max_concurrency=12)
    stats, _ = run(judge_requests(endpoint, rubric, [f"q{n}" for n in range(60)]))
    assert stats.ok == 60
    assert stub.capped > 0
    assert stub.duplicate_answers() == {}
    successes = [r for r in stub.requests if r.status == 200]
    assert len(successes) == 60


def test_in_process_limits_without_redis(stub, db, rubric, settings):
    settings.REDIS_URL = ""
    stub.latency = 0.05
    stub.max_in_flight = 2
    stub.responder = lambda body: GOOD
    endpoint = make_endpoint(stub, "local", max_concurrency=2)
    stats, _ = run(judge_requests(endpoint, rubric, [f"q{n}" for n in range(12)]))
    assert stats.ok == 12
    assert stub.capped == 0
    assert any(key.startswith(f"{endpoint.pk}-") for key in LocalLimiter._states)


def test_requests_per_minute_limit_spaces_calls(stub, db, rubric, waits):
    stub.responder = lambda body: GOOD
    # A burst of 6 calls, then 2 per second.
    endpoint = make_endpoint(stub, "paced", rpm_limit=120)
    stats, _ = run(judge_requests(endpoint, rubric, [f"q{n}" for n in range(9)]))
    assert stats.ok == 9
    # The three calls past the burst were each told to wait for a refill (longer
    # than a poll of a full limiter), up to half a second at 2 per second.
    refills = [w for w in waits.limiter if POLL_SECONDS[1] < w <= 0.5]
    assert len(refills) >= 3


def test_should_stop_abandons_the_rest(stub, endpoint, rubric):
    stub.latency = 0.2
    stub.responder = lambda body: GOOD
    endpoint.max_concurrency = 1
    endpoint.save(update_fields=["max_concurrency"])
    stop_after = time.monotonic() + 0.5
    stats, outcomes = run(
        judge_requests(endpoint, rubric, [f"q{n}" for n in range(30)]),
        should_stop=lambda: time.monotonic() > stop_after,
    )
    assert stats.stopped
    assert 0 < len(outcomes) < 30
    assert stub.request_count < 30
    finished = LLMCall.objects.exclude(status=LLMCall.Status.SENT)
    assert finished.count() == len(outcomes)
    # The call in flight at the stop may have reached the provider: it stays on
    # record as sent (the next session sends it again with its key); the calls
    # never sent leave no record.
    assert LLMCall.objects.filter(status=LLMCall.Status.SENT).count() <= 1


def test_should_stop_is_asked_while_calls_are_in_flight(
    stub, endpoint, rubric, settings
):
    # Labelling's heartbeat rides on these checks: a slow reply must not leave the
    # run looking stalled.
    settings.LLM_REQUEST_TIMEOUT = 10
    stub.latency = 2.5
    stub.responder = lambda body: GOOD
    asked_before_results = []
    outcomes = []

    def should_stop():
        asked_before_results.append(not outcomes)
        return False

    stats = run_requests(
        judge_requests(endpoint, rubric, ["slow"]),
        on_results=outcomes.extend,
        should_stop=should_stop,
    )
    assert stats.ok == 1
    assert asked_before_results.count(True) >= 1


def test_prompt_with_a_missing_variable_is_refused(endpoint, rubric):
    request = LLMRequest(key=1, endpoint=endpoint, template=rubric, variables={})
    with pytest.raises(ValueError, match="question"):
        run_requests([request])


# -- provider faults: every call ends, ok or failed with its reason, within a stated
# bound, and what reaches the database is storable.

SCORE_0_TO_3 = score_validator(0, 3)


def ask(endpoint, *names, validate=SCORE_0_TO_3):
    template = default_template("rubric_judging")
    requests = [
        LLMRequest(
            key=name,
            endpoint=endpoint,
            template=template,
            variables={"question": name, "reference_answer": "ref", "response": "x"},
            validate=validate,
        )
        for name in names
    ]
    outcomes = {}
    run_requests(
        requests,
        on_results=lambda batch: outcomes.update({o.key: o.call for o in batch}),
    )
    return outcomes


def test_a_provider_that_always_answers_429_is_given_up_on(
    stub, endpoint, waits, settings
):
    stub.script("q", Reply(status=429, headers={"Retry-After": "0"}))
    call = ask(endpoint, "q")["q"]
    # LLM_MAX_ATTEMPTS (3) × 4 rate-limited tries, then the item is pending with why.
    assert call.status == LLMCall.Status.FAILED
    assert call.attempts == 12 and stub.request_count == 12
    assert "HTTP 429" in call.error and "gave up after 12 tries" in call.error
    # Retry-After: 0 means now; only the back-off's jitter was waited.
    assert sum(waits) <= 12 * settings.LLM_BACKOFF_MAX_MS / 1000


def test_the_call_deadline_bounds_any_mix_of_faults(stub, endpoint, settings, waits):
    settings.LLM_MAX_ATTEMPTS = 100
    settings.LLM_CALL_DEADLINE_SECONDS = 2
    stub.script(
        "q",
        Reply(status=429, headers={"Retry-After": "1"}),
        Reply(status=500, error_message="boom"),
        Reply(status=429, headers={"Retry-After": "1"}),
    )
    call = ask(endpoint, "q")["q"]
    assert call.status == LLMCall.Status.FAILED
    assert "gave up" in call.error
    # It stopped at the deadline, not at its 100 attempts: no pause was taken that
    # would have ended past it.
    assert call.attempts < 100
    assert sum(waits) <= settings.LLM_CALL_DEADLINE_SECONDS


def test_nul_bytes_and_lone_surrogates_are_taken_out_before_the_database(
    stub, endpoint
):
    stub.script("nul", Reply(content='{"score": 3, "reason": "a\\u0000b"}'))
    stub.script("surrogate", Reply(content='{"score": 1, "reason": "x\\ud800y"}'))
    stub.script("raw", Reply(content="no json here \x00 at all"))
    calls = ask(endpoint, "nul", "surrogate", "raw")
    nul = LLMCall.objects.get(pk=calls["nul"].pk)
    assert nul.status == LLMCall.Status.OK
    assert nul.parsed_output == {"score": 3, "reason": "ab"}
    surrogate = LLMCall.objects.get(pk=calls["surrogate"].pk)
    assert surrogate.parsed_output["score"] == 1
    assert surrogate.parsed_output["reason"] == "x?y"
    raw = LLMCall.objects.get(pk=calls["raw"].pk)
    assert raw.status == LLMCall.Status.UNPARSEABLE
    assert "\x00" not in raw.raw_response and "at all" in raw.raw_response


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ([], "the body is a list, not an object"),
        ({"choices": [{"message": "x"}]}, "the first choice has no message object"),
        ({"choices": []}, "no choices"),
        (
            {"choices": [{"message": {"content": ["not", "text"]}}]},
            "the content is a list, not text",
        ),
    ],
)
def test_a_malformed_completion_is_a_failed_call_with_its_reason(
    stub, endpoint, body, reason
):
    stub.script("q", Reply(body=body))
    call = ask(endpoint, "q")["q"]
    assert call.status == LLMCall.Status.FAILED
    assert call.error.startswith(f"Malformed response: {reason}")
    assert call.attempts == 3  # retried like any provider fault, then given up


def test_non_numeric_usage_counts_no_tokens_but_keeps_the_answer(stub, endpoint):
    body = {
        "choices": [{"message": {"role": "assistant", "content": GOOD}}],
        "usage": {"prompt_tokens": "many", "completion_tokens": [3]},
    }
    stub.script("q", Reply(body=body))
    call = ask(endpoint, "q")["q"]
    assert call.status == LLMCall.Status.OK
    assert (call.input_tokens, call.output_tokens) == (0, 0)


def test_two_different_verdicts_in_one_reply_are_unparseable(stub, endpoint):
    stub.script(
        "q",
        Reply(content='{"score": 3, "reason": "fine"} but really {"score": 0}'),
    )
    call = ask(endpoint, "q")["q"]
    assert call.status == LLMCall.Status.UNPARSEABLE
    assert "2 different JSON objects" in call.error
    with pytest.raises(OutputError, match="2 different JSON objects"):
        extract_json_object('{"score": 3} {"score": 0}')
    # The same object twice (in a fence and again) is one answer.
    assert extract_json_object('```json\n{"score": 1}\n```\n{"score": 1}') == {
        "score": 1
    }


def test_a_reply_over_the_size_cap_is_refused_and_only_its_start_kept(
    stub, endpoint, settings
):
    settings.LLM_MAX_REPLY_CHARS = 1000
    stub.script("q", Reply(content="x" * 20_000))
    call = ask(endpoint, "q", validate=None)["q"]
    assert call.status == LLMCall.Status.FAILED
    assert "20,000 characters, over LLM_MAX_REPLY_CHARS (1,000)" in call.error
    assert len(LLMCall.objects.get(pk=call.pk).raw_response) == 1000


def answers_and_verdicts(body):
    """The stub as a tested model (endpoint "answerer") and a judge ("judge")."""
    if body["model"] == "judge-model":
        return GOOD
    return f"answer to {last_user_text(body)}"


def answer_then_judge(answerer, judge, rubric, same_judge_request=False):
    """An `on_results` that asks the judge about every answer it receives."""
    outcomes = {}

    def on_results(batch):
        outcomes.update({outcome.key: outcome for outcome in batch})
        return [
            LLMRequest(
                key=("judge", outcome.key),
                endpoint=judge,
                template=rubric,
                variables={
                    "question": "q",
                    "reference_answer": "ref",
                    "response": "x"
                    if same_judge_request
                    else outcome.call.parsed_output,
                },
                validate=score_validator(0, 3),
            )
            for outcome in batch
            if outcome.key[0] == "answer"
        ]

    def answers(count):
        return [
            LLMRequest(
                key=("answer", n),
                endpoint=answerer,
                messages=[{"role": "user", "content": f"question {n}"}],
                purpose="answering",
            )
            for n in range(count)
        ]

    return outcomes, on_results, answers


def test_follow_up_requests_are_made_beside_the_calls_in_flight(stub, db, rubric):
    # The last answer is held until the judge has been asked about an earlier one:
    # a gateway that waited for every answer before judging would keep it held for
    # the whole minute. Order of events, not clock readings, decides the test.
    judge_asked = threading.Event()
    held_answer_saw_the_judge = []

    def answers_and_verdicts_holding_the_last(body):
        if body["model"] == "judge-model":
            judge_asked.set()
        elif last_user_text(body) == "question 19":
            held_answer_saw_the_judge.append(judge_asked.wait(timeout=60))
        return answers_and_verdicts(body)

    stub.responder = answers_and_verdicts_holding_the_last
    answerer = make_endpoint(stub, "answerer", max_concurrency=4)
    judge = make_endpoint(stub, "judge")
    outcomes, on_results, answers = answer_then_judge(answerer, judge, rubric)
    stats = run_requests(answers(20), on_results=on_results, scope="pipelined")
    assert stats.requested == 40 and stats.made == 40 and stats.ok == 40
    assert {key for key in outcomes if key[0] == "judge"} == {
        ("judge", ("answer", n)) for n in range(20)
    }
    # On a loaded machine the held answer may outlast the client's timeout and be
    # asked again: every time it was asked, the judge had been asked meanwhile.
    assert held_answer_saw_the_judge and all(held_answer_saw_the_judge)


def test_a_follow_up_identical_to_a_call_in_flight_is_not_paid_twice(stub, db, rubric):
    stub.latency = 0.05
    stub.responder = answers_and_verdicts
    answerer = make_endpoint(stub, "answerer", max_concurrency=2)
    judge = make_endpoint(stub, "judge")
    outcomes, on_results, answers = answer_then_judge(
        answerer, judge, rubric, same_judge_request=True
    )
    run_requests(answers(10), on_results=on_results, scope="merged")
    judged = [key for key in outcomes if key[0] == "judge"]
    assert len(judged) == 10
    assert len({outcomes[key].call.pk for key in judged}) == 1
    assert sum(r.model == "judge-model" for r in stub.requests) == 1


def test_follow_ups_of_recorded_calls_are_served_from_the_record(stub, db, rubric):
    stub.responder = answers_and_verdicts
    answerer = make_endpoint(stub, "answerer")
    judge = make_endpoint(stub, "judge")
    _, on_results, answers = answer_then_judge(answerer, judge, rubric)
    run_requests(answers(6), on_results=on_results, scope="resumed")
    asked = len(stub.requests)
    outcomes, on_results, answers = answer_then_judge(answerer, judge, rubric)
    stats = run_requests(answers(6), on_results=on_results, scope="resumed")
    assert len(stub.requests) == asked == 12
    assert stats.cached == 12 and stats.made == 0
    assert len(outcomes) == 12 and all(o.cached for o in outcomes.values())


def test_a_feed_brings_requests_ready_outside_the_gateway(stub, endpoint, rubric):
    # Say, verifier calls whose web searches finish one by one on other threads:
    # each is made as soon as it is ready, beside the calls in flight, and the run
    # ends only once the feed has nothing more and nothing is in flight.
    events = []
    fed0_asked = threading.Event()

    def respond(body):
        question = last_user_text(body)
        if "q-lead" in question:
            # Held until the first fed request arrives beside it (the bound only
            # keeps a broken gateway from hanging the test).
            fed0_asked.wait(30)
            events.append("q-lead answered")
        elif "fed0" in question:
            events.append("fed0 asked")
            fed0_asked.set()
        return GOOD

    stub.responder = respond
    ready: queue.Queue = queue.Queue()
    taken = {name: threading.Event() for name in (f"fed{n}" for n in range(6))}

    def searches():
        # Each result is ready only once the gateway has taken the one before.
        for n in range(6):
            ready.put(f"fed{n}")
            taken[f"fed{n}"].wait(30)

    searching = threading.Thread(target=searches)
    searching.start()
    feeds = []

    def feed():
        names = []
        while not ready.empty():
            names.append(ready.get())
        for name in names:
            taken[name].set()
        if names:
            feeds.append(names)
        if not names and not searching.is_alive():
            return None
        return judge_requests(endpoint, rubric, names)

    stats, outcomes = run(judge_requests(endpoint, rubric, ["q-lead"]), feed=feed)
    searching.join()
    assert set(outcomes) == {"q-lead"} | {f"fed{n}" for n in range(6)}
    assert stats.requested == stats.made == stats.ok == 7
    # Taken one by one as each became ready, and made while q-lead was in flight.
    assert feeds == [[f"fed{n}"] for n in range(6)]
    assert events.index("fed0 asked") < events.index("q-lead answered")


def test_stopping_ends_a_feed_that_never_finishes(stub, endpoint, rubric):
    stub.responder = lambda body: GOOD
    stop_after = time.monotonic() + 0.3
    stats, outcomes = run(
        judge_requests(endpoint, rubric, ["only"]),
        feed=lambda: [],
        should_stop=lambda: time.monotonic() > stop_after,
    )
    assert stats.stopped and set(outcomes) == {"only"}


def test_an_engine_that_cannot_start_fails_the_call_loudly(
    stub, endpoint, rubric, monkeypatch
):
    def broken():
        raise ConnectionError("no event loop for you")

    monkeypatch.setattr("judging.llm.engine.redis_client_for_loop", broken)
    with pytest.raises(RuntimeError, match="event loop failed"):
        run(judge_requests(endpoint, rubric, ["q1"]))
    assert stub.requests == []
