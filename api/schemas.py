"""What every route shares: the error answer, the input base, and the JSON reader.

Every refusal — 400, 401, 403, 404, 409, 413, 422 — is an `ErrorOut`, so a
generated client has one error type to handle; each route declares the statuses
it can answer (`answers`), and tests/api/test_openapi.py checks that it does.
"""

import json
from typing import Any

from django.core.exceptions import ValidationError as Refusal
from ninja import Field, Schema, Status
from ninja.errors import ValidationError
from pydantic import ConfigDict

from reviewqueue.engine import HeldByAnother, StaleRefusal


class FieldError(Schema):
    loc: list[str | int] = Field(
        description="Where: `body`, `query` or `path`, then the field's path"
    )
    msg: str
    type: str


class ErrorOut(Schema):
    detail: str
    errors: list[FieldError] = Field(
        [], description="A 422 from the call's shape: each field that is wrong"
    )


# One cell of a report table: typed, so that generated clients read rows of them.
Cell = str | int | float | bool | None


class InSchema(Schema):
    """Every request body: a key the route does not know is refused, not ignored
    (a misspelt filter would otherwise run on everything)."""

    model_config = ConfigDict(extra="forbid")


def answers(ok: dict[int, Any], *errors: int) -> dict[int, Any]:
    """A route's responses: `ok` ({status: schema}), 401 and 403 (every route is
    under role_required) and `errors`, each an ErrorOut unless `ok` names it."""
    return {**{code: ErrorOut for code in (401, 403, *errors)}, **ok}


# Bodies a route reads itself (the bulk call: past DATA_UPLOAD_MAX_MEMORY_SIZE,
# which django-ninja's own reading would hit); api.main adds them to the schema's
# components.
READ_BY_THE_ROUTE: list[type[Schema]] = []


def read_by_the_route(model: type[Schema]) -> dict:
    """`openapi_extra` declaring `model` as the body of a route that parses it."""
    READ_BY_THE_ROUTE.append(model)
    reference = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": reference}},
        }
    }


def component_schemas(model: type[Schema]) -> dict[str, dict]:
    """`model` and the models it holds, as OpenAPI components."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    components = schema.pop("$defs", {})
    components[model.__name__] = schema
    return components


def refused(error: Refusal) -> Status:
    """An action's refusal: 409 when what is stored does not allow the call (decided
    already, another person holds the item now), 422 when the call is not valid."""
    conflict = isinstance(error, StaleRefusal | HeldByAnother)
    return Status(409 if conflict else 422, {"detail": " ".join(error.messages)})


def invalid(parameter: str, message: str) -> ValidationError:
    """A 422 naming the query parameter, as django-ninja's own for a bad type."""
    return ValidationError(
        [{"loc": ["query", parameter], "msg": message, "type": "value_error"}]
    )


class BadJson(ValueError):
    """A request body no route can take; its message says what is wrong."""


def load_json(body: bytes) -> Any:
    """The body as JSON, refusing text PostgreSQL cannot store: a NUL (`\\u0000`)
    or a lone surrogate (`\\ud800` without its pair) in any key or string."""
    try:
        data = json.loads(body)
    except UnicodeDecodeError:
        raise BadJson("The request body is not UTF-8.") from None
    except json.JSONDecodeError as error:
        raise BadJson(f"The request body is not valid JSON: {error}.") from None
    except RecursionError:
        raise BadJson("The request body is nested too deeply.") from None
    for text in _strings(data):
        if "\x00" in text:
            raise BadJson(
                "The request body contains a NUL character (\\u0000). No field of "
                "Assay accepts one; remove it and send the request again."
            )
        try:
            text.encode()
        except UnicodeEncodeError:
            raise BadJson(
                "The request body contains a lone surrogate (a \\ud800–\\udfff "
                "escape without its pair), which is not text; send UTF-8 text."
            ) from None
    return data


def _strings(data: Any):
    # Iterative: a deep body must not blow the stack here either.
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
