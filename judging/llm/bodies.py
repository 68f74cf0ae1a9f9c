"""What a provider's 200 body means (pure): the content, reasoning and token
counts of a chat completion, the vector of an embedding, or MalformedReply for a
body that is neither (judging/llm/gateway.py retries those)."""

import json
import math


class MalformedReply(ValueError):
    """The provider answered 200 with a body that is not a chat completion (or,
    for an embeddings call, not an embedding)."""


def read_completion(data) -> dict:
    """Content, reasoning and token counts of a chat-completion body; raises
    MalformedReply for anything that is not one (a list, a message that is not an
    object, content that is not text)."""
    if not isinstance(data, dict):
        raise MalformedReply(f"the body is a {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedReply("no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise MalformedReply("the first choice has no message object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedReply(f"the content is a {type(content).__name__}, not text")
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return {
        "content": content or "",
        "reasoning": _as_text(reasoning),
        "input_tokens": _token_count(usage.get("prompt_tokens")),
        "output_tokens": _token_count(usage.get("completion_tokens")),
    }


def read_embedding(data) -> dict:
    """The vector and token count of an /v1/embeddings body (one input); raises
    MalformedReply for anything else: no data, an embedding that is not a
    non-empty list of finite numbers (a base64 string included)."""
    if not isinstance(data, dict):
        raise MalformedReply(f"the body is a {type(data).__name__}, not an object")
    rows = data.get("data")
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        raise MalformedReply("no embedding in data")
    vector = rows[0].get("embedding")
    if not isinstance(vector, list) or not vector:
        raise MalformedReply("the embedding is not a list of numbers")
    if not all(
        isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
        for x in vector
    ):
        raise MalformedReply("the embedding holds something not a finite number")
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return {
        "content": "",
        "reasoning": "",
        "vector": [float(x) for x in vector],
        "input_tokens": _token_count(usage.get("prompt_tokens")),
        "output_tokens": 0,
    }


def _token_count(value) -> int:
    """A provider's token count, or 0 when it sent none or something not a count."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0) if value == value and abs(value) < 2**62 else 0


def reasoning_of(delta) -> str:
    """Providers stream reasoning as `reasoning_content` or `reasoning`."""
    extra = delta.model_extra or {}
    return _as_text(extra.get("reasoning_content") or extra.get("reasoning"))


def _as_text(value) -> str:
    if not value:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
