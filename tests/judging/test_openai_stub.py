"""The stub behaves like an OpenAI-protocol server for the real openai client."""

import threading

import openai
import pytest
from openai import OpenAI

from tests.openai_stub import OpenAIStub, ReadingModel, Reply


def ask(client, text, **kwargs):
    return client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": text}], **kwargs
    )


@pytest.fixture
def stub():
    with OpenAIStub(latency=0.0) as running:
        yield running


@pytest.fixture
def client(stub):
    return OpenAI(base_url=stub.base_url, api_key="k", max_retries=0, timeout=1)


def test_scripted_replies_in_order_then_last_repeats(stub, client):
    stub.script("item-1", "first", Reply(content="second", reasoning="why"))
    assert ask(client, "item-1").choices[0].message.content == "first"
    second = ask(client, "item-1").choices[0].message
    assert second.content == "second"
    assert second.model_extra["reasoning_content"] == "why"
    assert ask(client, "item-1").choices[0].message.content == "second"
    assert ask(client, "other").choices[0].message.content == "OK"


def test_streaming_reply_carries_content_reasoning_and_usage(stub, client):
    stub.script("long", Reply(content="x" * 50, reasoning="thinking"))
    chunks = list(
        ask(client, "long", stream=True, stream_options={"include_usage": True})
    )
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
        for c in chunks
        if c.choices
    )
    assert content == "x" * 50
    assert reasoning == "thinking"
    assert chunks[-1].usage.completion_tokens > 0


def test_errors_carry_status_headers_and_message(stub, client):
    stub.script(
        "busy",
        Reply(status=429, headers={"Retry-After": "7"}, error_message="slow down"),
        Reply(status=500, error_message="boom"),
    )
    with pytest.raises(openai.RateLimitError) as rate_limited:
        ask(client, "busy")
    assert rate_limited.value.response.headers["retry-after"] == "7"
    with pytest.raises(openai.InternalServerError, match="boom"):
        ask(client, "busy")


def test_slow_reply_times_out_the_client(stub, client):
    stub.script("slow", Reply(content="late", delay=1.5))
    with pytest.raises(openai.APITimeoutError):
        ask(client, "slow")


def test_api_key_and_model_checks():
    with OpenAIStub(api_key="right", models={"m"}) as stub:
        wrong_key = OpenAI(base_url=stub.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            ask(wrong_key, "hi")
        right_key = OpenAI(base_url=stub.base_url, api_key="right", max_retries=0)
        with pytest.raises(openai.NotFoundError, match="does not exist"):
            right_key.chat.completions.create(
                model="nope", messages=[{"role": "user", "content": "hi"}]
            )


def test_concurrency_cap_answers_429_and_duplicates_are_counted():
    with OpenAIStub(latency=0.3, max_in_flight=2) as stub:
        client = OpenAI(base_url=stub.base_url, api_key="k", max_retries=0)
        outcomes = []

        def call(n):
            try:
                ask(client, f"q{n}")
                outcomes.append(200)
            except openai.RateLimitError:
                outcomes.append(429)

        threads = [threading.Thread(target=call, args=(n,)) for n in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == [200, 200, 429, 429, 429]
        assert stub.stats()["capped_429"] == 3
        assert stub.stats()["peak_in_flight"] == 2
        assert stub.duplicate_answers() == {}
        ask(client, "q-dup")
        ask(client, "q-dup")
        assert list(stub.duplicate_answers().values()) == [2]


def test_the_reading_model_answers_from_what_it_is_shown():
    """The option carrying its belief, by the letter shown; a prompt without the
    options, or naming nothing it knows, is refused; true only for a statement
    carrying its belief; the key-point judge checks every point."""
    facts = {"bolt 8.8": "800 MPa", "mains": "50 Hz", "gear": ("20°", "25°")}
    with OpenAIStub(responder=ReadingModel(facts)) as running:
        client = OpenAI(base_url=running.base_url, api_key="k", max_retries=0)

        def reply(text):
            return ask(client, text).choices[0].message.content

        options = "A. 640 MPa\nB. 800 MPa\nC. 880 MPa\nD. 1000 MPa"
        assert reply(f"Tensile strength of bolt 8.8?\n\n{options}") == "Answer: B"
        shuffled = "A. 880 MPa\nB. 1000 MPa\nC. 640 MPa\nD. 800 MPa"
        assert reply(f"Tensile strength of bolt 8.8?\n{shuffled}") == "Answer: D"
        listed = "（A）640 MPa\n（B）880 MPa\n（C）800 MPa\n（D）1000 MPa"
        assert reply(f"bolt 8.8 的抗拉强度？\n{listed}") == "Answer: C"
        assert reply("Tensile strength of bolt 8.8?") == "The answer is 800 MPa."
        assert reply(f"Unknown part?\n\n{options}") == (
            "I cannot answer this question."
        )
        assert reply("The gear angle?\nA) 14.5°\nB) 20°\nC) 25°\nD) 30°") == (
            "Answer: B, C"
        )
        assert reply("True or false? The mains run at 50 Hz.") == "true"
        assert reply("判断正误，请回答“正确”或“错误”：mains 为 60 Hz。") == "false"
        judge = "Key points:\n1. 800 MPa\n2. tensile\n\nCandidate answer: {}"
        assert reply(judge.format("Tensile: 800 MPa.")).startswith("Score: 1")
        assert reply(judge.format("800 MPa.")).startswith("Score: 0")
