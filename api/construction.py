"""Construction over the REST API (added below)."""

from ninja import Router

router = Router(tags=["construction"])
