"""Bad input to the API is a clear 4xx that changes nothing, never a 500: text
PostgreSQL cannot store in a JSON body, keys a route does not know, and a caller
outside the route's roles, who is refused before the body is read."""

import pytest

from benchmark.models import Item
from judging.evaluation.models import EvaluationRun
from judging.llm.models import Endpoint
from tests.api.helpers import BASE, generic_item, token_client


@pytest.fixture
def endpoints(db):
    for name in ("tested", "judge", "sv"):
        Endpoint.objects.create(
            name=name, base_url="http://127.0.0.1:9/v1", model=f"{name}-model"
        )


def start_body(**changes) -> dict:
    return {
        "tested": "tested",
        "judge": "judge",
        "sv_judge": "sv",
        "language": "zh",
    } | changes


# JSON text as a client sends it: the escapes, not the characters, are on the wire.
NUL_START = '{"tested": "tes\\u0000ted", "judge": "judge", "language": "zh"}'
SURROGATE_START = '{"tested": "tested\\ud800", "judge": "judge", "language": "zh"}'
NUL_KEY_START = '{"tested": "tested", "lang\\u0000uage": "zh"}'


@pytest.mark.parametrize(
    "body, says",
    [
        (NUL_START, "NUL character"),
        (NUL_KEY_START, "NUL character"),
        (SURROGATE_START, "lone surrogate"),
    ],
)
def test_unstorable_text_in_a_start_is_a_400(
    personas, benchmark, endpoints, body, says
):
    client = token_client(personas["manager"])
    response = client.post(
        f"{BASE}/benchmarks/{benchmark.slug}/runs", body, "application/json"
    )
    assert response.status_code == 400, response.content
    assert says in response.json()["detail"]
    assert not EvaluationRun.objects.exists()


@pytest.mark.parametrize("escape, says", [("\\u0000", "NUL"), ("\\udfff", "surrogate")])
def test_unstorable_text_in_a_bulk_import_is_a_400(personas, benchmark, escape, says):
    body = (
        '{"items": [{"id": "N-1", "renderings": {"zh": {"question": "Q'
        + escape
        + '", "answer": "A"}}}]}'
    )
    response = token_client(personas["manager"]).post(
        f"{BASE}/benchmarks/{benchmark.slug}/items/bulk", body, "application/json"
    )
    assert response.status_code == 400, response.content
    assert says in response.json()["detail"]
    assert not Item.objects.exists()


def test_an_escaped_backslash_before_u0000_is_plain_text(personas, benchmark):
    # "\\u0000" in JSON is a backslash and "u0000": text, stored as sent.
    body = (
        '{"items": [{"id": "N-1", "renderings": {"zh": {"question": "Q\\\\u0000", '
        '"answer": "A"}}}]}'
    )
    response = token_client(personas["manager"]).post(
        f"{BASE}/benchmarks/{benchmark.slug}/items/bulk", body, "application/json"
    )
    assert response.status_code == 200, response.content
    rendering = Item.objects.get().renderings.get(language="zh")
    assert rendering.question == "Q\\u0000"


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"subset": "x"}, "subset"),
        ({"answer_template": {"name": "a", "version": 1, "lang": "en"}}, "lang"),
    ],
)
def test_an_unknown_key_is_refused_not_ignored(
    personas, benchmark, endpoints, changes, field
):
    response = token_client(personas["manager"]).post(
        f"{BASE}/benchmarks/{benchmark.slug}/runs",
        start_body() | changes,
        "application/json",
    )
    assert response.status_code == 422, response.content
    error = response.json()["errors"][0]
    assert error["loc"][-1] == field
    assert error["type"] == "extra_forbidden"
    assert field in response.json()["detail"]
    assert not EvaluationRun.objects.exists()


@pytest.mark.parametrize(
    "body",
    [{}, {"tested": 5}, start_body() | {"subset": "x"}, NUL_START],
    ids=["empty", "wrong-type", "unknown-key", "nul"],
)
@pytest.mark.parametrize("persona", ["reviewer", "expert", "outsider"])
def test_the_role_is_checked_before_the_body(
    personas, benchmark, endpoints, persona, body
):
    response = token_client(personas[persona]).post(
        f"{BASE}/benchmarks/{benchmark.slug}/runs", body, "application/json"
    )
    assert response.status_code == 403, response.content
    assert response.json() == {"detail": "Your roles do not allow this."}
    assert not EvaluationRun.objects.exists()


def test_a_session_outside_the_role_is_refused_before_the_body(client_for, benchmark):
    response = client_for("reviewer").post(
        f"{BASE}/benchmarks/{benchmark.slug}/items/bulk",
        {"items": [generic_item("N-1")], "unknown": 1},
        "application/json",
    )
    assert response.status_code == 403
    assert not Item.objects.exists()
