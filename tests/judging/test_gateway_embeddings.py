"""Embeddings through the gateway, against the stub's /v1/embeddings: the
vector recorded as the call's parsed output, tokens and cost, the cache, the
endpoint's limits, retries, and failures recorded, never a vector made up."""

from decimal import Decimal

import pytest

from judging.llm.gateway import EMBEDDING_PURPOSE, LLMRequest, request_hash
from judging.llm.models import LLMCall
from tests.judging.test_gateway import make_endpoint, run
from tests.openai_stub import OpenAIStub, Reply, embedding_vector


@pytest.fixture(autouse=True)
def fast_llm_settings(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 20
    settings.LLM_BACKOFF_MAX_MS = 100
    settings.LLM_MAX_ATTEMPTS = 3
    monkeypatch.setenv("STUB_API_KEY", "test-key")


@pytest.fixture
def stub():
    with OpenAIStub(api_key="test-key") as running:
        yield running


def embed_requests(endpoint, texts):
    return [LLMRequest(key=t, endpoint=endpoint, embedding_input=t) for t in texts]


def test_a_vector_is_recorded_with_tokens_and_cost(stub, db):
    endpoint = make_endpoint(
        stub,
        "embedder",
        temperature=0.0,
        max_tokens=64,
        extra_body={"dimensions": 64},
        price_input_per_1k=Decimal("0.02"),
    )
    stats, outcomes = run(embed_requests(endpoint, ["额定电压是多少？"]))
    call = outcomes["额定电压是多少？"].call
    assert call.status == LLMCall.Status.OK
    assert call.parsed_output == embedding_vector("额定电压是多少？")
    assert call.purpose == EMBEDDING_PURPOSE and call.template is None
    assert call.input_tokens > 0 and call.output_tokens == 0
    assert call.cost == (Decimal("0.02") * call.input_tokens / 1000).quantize(
        Decimal("0.000001")
    )
    body = stub.requests[0].body
    # Only the extra body of the endpoint's parameters is sent.
    assert body == {
        "model": "embedder-model",
        "input": "额定电压是多少？",
        "encoding_format": "float",
        "dimensions": 64,
    }
    assert call.request_hash == request_hash(
        endpoint, call.model, call.messages, call.params, embedding=True
    )
    assert call.request_hash != request_hash(
        endpoint, call.model, call.messages, call.params
    )
    assert stats.ok == 1 and stats.made == 1


def test_the_same_text_is_served_from_the_record(stub, db):
    endpoint = make_endpoint(stub, "embedder")
    run(embed_requests(endpoint, ["a b c", "d e f"]))
    stats, outcomes = run(embed_requests(endpoint, ["a b c", "d e f", "g h"]))
    assert stats.cached == 2 and stats.made == 1
    assert stub.request_count == 3
    assert stub.duplicate_answers() == {}
    assert outcomes["a b c"].cached


def test_server_errors_are_retried_then_a_failure_is_recorded(stub, db):
    endpoint = make_endpoint(stub, "embedder")
    stub.script("flaky", Reply(status=503), Reply(status=200))
    stub.script("broken", Reply(status=500, error_message="model crashed"))
    stats, outcomes = run(embed_requests(endpoint, ["flaky text", "broken text"]))
    flaky, broken = outcomes["flaky text"].call, outcomes["broken text"].call
    assert flaky.status == LLMCall.Status.OK and flaky.attempts == 2
    assert flaky.parsed_output == embedding_vector("flaky text")
    assert broken.status == LLMCall.Status.FAILED
    assert broken.parsed_output is None
    assert "HTTP 500: model crashed (gave up after 3 tries)" in broken.error
    # A failed call is made again next time.
    stub.reset()
    _, again = run(embed_requests(endpoint, ["broken text"]))
    assert again["broken text"].call.status == LLMCall.Status.OK
    assert again["broken text"].call.pk == broken.pk


@pytest.mark.parametrize(
    "body",
    [
        {"data": []},
        {"data": [{"embedding": "AAAA"}]},  # base64, not asked for
        {"data": [{"embedding": [0.1, None]}]},
        [1, 2],
    ],
)
def test_a_body_that_is_not_an_embedding_is_a_failed_call(stub, db, body):
    endpoint = make_endpoint(stub, "embedder")
    stub.script("odd", Reply(body=body))
    _, outcomes = run(embed_requests(endpoint, ["odd one"]))
    call = outcomes["odd one"].call
    assert call.status == LLMCall.Status.FAILED
    assert call.error.startswith("Malformed response")
    assert call.parsed_output is None


def test_embeddings_keep_the_endpoint_concurrency_limit(stub, db):
    stub.latency = 0.05
    stub.max_in_flight = 3
    endpoint = make_endpoint(stub, "embedder", max_concurrency=3)
    stats, _ = run(embed_requests(endpoint, [f"text {n}" for n in range(24)]))
    assert stats.ok == 24
    assert stub.capped == 0 and stub.peak_in_flight == 3
