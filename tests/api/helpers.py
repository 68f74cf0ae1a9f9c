"""Calling the REST API in tests: as a persona with a personal API token, or with no
credentials at all."""

from functools import cache

from django.test import Client

from api.actions import do_create_token

BASE = "/api/v1"


def token_client(user) -> Client:
    """A client that sends a fresh token of `user` with every request (no session)."""
    _, text = do_create_token(user, "tests")
    return Client(headers={"Authorization": f"Bearer {text}"})


def generic_item(external_id: str, **fields) -> dict:
    """One item in the generic JSONL layout the bulk call takes (zh + en)."""
    return {
        "id": external_id,
        "difficulty": "medium",
        "labels": {"capability": "fault_diagnosis"},
        "renderings": {
            "zh": {
                "question": f"{external_id} 的额定电压是多少？",
                "answer": "380 V。",
            },
            "en": {
                "question": f"What is the rated voltage of {external_id}?",
                "answer": "380 V.",
            },
        },
        **fields,
    }


@cache
def _schema() -> dict:
    from api.main import api

    return api.get_openapi_schema()


def declared_statuses(method: str, url_name: str) -> set[int]:
    """The statuses the OpenAPI schema declares for the route named `url_name`."""
    for methods in _schema()["paths"].values():
        operation = methods.get(method.lower())
        if operation and operation["operationId"].endswith("_" + url_name):
            return {int(code) for code in operation["responses"]}
    raise LookupError(f"No {method} route named {url_name}.")
