"""Answers every route shares."""

from ninja import Schema


class Detail(Schema):
    detail: str
