"""Provider faults the gateway must survive, against the OpenAI-protocol stub through
the real openai client: every call ends, ok or failed with its reason, within a
stated bound, and what reaches the database is storable."""

import time

import pytest

from judging.llm.gateway import LLMRequest, run_requests
from judging.llm.models import LLMCall
from judging.llm.outputs import OutputError, extract_json_object, score_validator
from judging.llm.prompts import default_template
from tests.judging.test_gateway import make_endpoint
from tests.openai_stub import OpenAIStub, Reply

GOOD = '{"score": 2, "reason": "right conclusion, missing units"}'
SCORE_0_TO_3 = score_validator(0, 3)


@pytest.fixture(autouse=True)
def fast_llm_settings(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 20
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    settings.LLM_REQUEST_TIMEOUT = 1
    monkeypatch.setenv("STUB_API_KEY", "test-key")


@pytest.fixture
def stub():
    with OpenAIStub(api_key="test-key") as running:
        yield running


@pytest.fixture
def endpoint(db, stub):
    return make_endpoint(stub)


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


def test_a_provider_that_always_answers_429_is_given_up_on(stub, endpoint):
    stub.script("q", Reply(status=429, headers={"Retry-After": "0"}))
    started = time.monotonic()
    call = ask(endpoint, "q")["q"]
    # LLM_MAX_ATTEMPTS × 4 rate-limited tries, then the item is pending with why.
    assert call.status == LLMCall.Status.FAILED
    assert call.attempts == 8 and stub.request_count == 8
    assert "HTTP 429" in call.error and "gave up after 8 tries" in call.error
    assert time.monotonic() - started < 5


def test_the_call_deadline_bounds_any_mix_of_faults(stub, endpoint, settings):
    settings.LLM_MAX_ATTEMPTS = 100
    settings.LLM_CALL_DEADLINE_SECONDS = 2
    stub.script(
        "q",
        Reply(status=429, headers={"Retry-After": "1"}),
        Reply(status=500, error_message="boom"),
        Reply(status=429, headers={"Retry-After": "1"}),
    )
    started = time.monotonic()
    call = ask(endpoint, "q")["q"]
    assert call.status == LLMCall.Status.FAILED
    assert time.monotonic() - started < 2 + 1.5
    assert "gave up" in call.error


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
    assert call.attempts == 2  # retried like any provider fault, then given up


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
