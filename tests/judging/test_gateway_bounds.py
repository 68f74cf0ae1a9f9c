"""The gateway against answers that never end, a huge body and a body that is not
JSON: each call ends by its deadline or the byte cap, with the reason, through the
real openai client (assay/outbound.py bounds every exchange)."""

import pytest

from judging.llm.actions import do_save_endpoint
from judging.llm.gateway import LLMRequest, run_requests
from judging.llm.models import LLMCall
from tests.openai_stub import OpenAIStub, Reply

GOOD = "fine"


@pytest.fixture(autouse=True)
def small_bounds(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 20
    settings.LLM_BACKOFF_MAX_MS = 100
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_REQUEST_TIMEOUT = 2
    settings.LLM_CALL_DEADLINE_SECONDS = 3
    settings.LLM_MAX_BODY_BYTES = 1_000_000
    monkeypatch.setenv("STUB_API_KEY", "k")


@pytest.fixture
def stub():
    with OpenAIStub(api_key="k") as running:
        yield running


def endpoint(stub, stream=False, name="model"):
    return do_save_endpoint(
        name,
        base_url=stub.base_url,
        model="m",
        api_key_env="STUB_API_KEY",
        max_concurrency=4,
        stream=stream,
    )


def call(point, text, embedding=False):
    calls = []
    request = (
        LLMRequest(key=text, endpoint=point, embedding_input=text)
        if embedding
        else LLMRequest(
            key=text,
            endpoint=point,
            messages=[{"role": "user", "content": text}],
            purpose="answering",
        )
    )
    run_requests([request], on_results=lambda o: calls.extend(x.call for x in o))
    return calls[0]


@pytest.mark.parametrize(
    ("fault", "stream", "embedding"),
    [
        ("trickle", False, False),
        ("trickle", True, False),
        ("endless", True, False),
        ("keepalive", True, False),
        ("trickle", False, True),
    ],
)
def test_an_answer_that_never_ends_is_cut_at_the_deadline(
    db, stub, fault, stream, embedding
):
    stub.script("q", Reply(content=GOOD * 50, fault=fault, interval=0.5))
    result = call(endpoint(stub, stream), "q", embedding)
    assert result.status == LLMCall.Status.FAILED
    assert result.error.startswith("Timed out"), result.error
    assert result.attempts >= 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_huge_body_is_refused_at_the_byte_cap(db, stub, stream):
    stub.script("q", Reply(fault="huge"))
    result = call(endpoint(stub, stream), "q")
    assert result.status == LLMCall.Status.FAILED
    assert (
        "over 1,000,000 bytes" in result.error and "LLM_MAX_BODY_BYTES" in result.error
    )
    assert result.attempts == 1


def test_a_huge_error_body_is_refused_at_the_byte_cap(db, stub):
    stub.script("q", Reply(status=500, fault="huge"))
    result = call(endpoint(stub), "q")
    assert result.status == LLMCall.Status.FAILED
    assert "LLM_MAX_BODY_BYTES" in result.error


@pytest.mark.parametrize(
    "raw", ['{"choices": []}{"choices": []}', '{"choices": [', "<html>busy</html>"]
)
def test_a_body_that_is_not_json_is_retried_then_failed_with_why(
    db, stub, settings, raw
):
    stub.script("q", Reply(raw=raw))
    result = call(endpoint(stub), "q")
    assert result.status == LLMCall.Status.FAILED
    assert result.error.startswith("Malformed response"), result.error
    assert result.attempts == settings.LLM_MAX_ATTEMPTS
