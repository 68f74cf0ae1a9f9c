"""What a provider's reply body says (pure): a chat completion's content,
reasoning, finish reason and token counts, an embedding's vector, and an HTTP
error's message and code — among them a provider's refusal (its content filter
declined: finish reason `content_filter`, or an error naming the filter). The
gateway's engine (engine.py) sends and retries; this module only reads."""

from __future__ import annotations

import json
import math

import openai

# A provider's refusal: the finish reason OpenAI-protocol servers give, and what
# an HTTP refusal's error code or type names (Azure: "content_filter"; Alibaba's
# DashScope: "data_inspection_failed").
CONTENT_FILTER = "content_filter"
REFUSAL_ERROR_CODES = {CONTENT_FILTER, "data_inspection_failed"}


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
    finish_reason = choice.get("finish_reason")
    return {
        "content": content or "",
        "reasoning": _as_text(reasoning),
        "finish_reason": finish_reason if isinstance(finish_reason, str) else "",
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


def refusal_code(error: openai.APIStatusError) -> str:
    """The error code (or type) of an HTTP error's body, to tell a provider's
    refusal from other client errors."""
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error", body)
    if not isinstance(inner, dict):
        return ""
    return str(inner.get("code") or inner.get("type") or "")


def provider_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return error.message
