"""Answers every route shares."""

from ninja import Schema
from ninja.errors import ValidationError


class Detail(Schema):
    detail: str


def invalid(parameter: str, message: str) -> ValidationError:
    """A 422 naming the query parameter, as django-ninja's own for a bad type."""
    return ValidationError(
        [{"loc": ["query", parameter], "msg": message, "type": "value_error"}]
    )
