"""LLM endpoints, without anything secret: no key (Assay never holds one), not even
the name of the variable holding it, no request fields, no connection-test message
(a provider's error may quote the key), and base URLs without user info or query."""

from datetime import datetime
from decimal import Decimal
from urllib.parse import urlsplit, urlunsplit

from ninja import Router, Schema

from api.schemas import answers
from benchmark.roles import Role, role_required
from judging.llm.models import Endpoint

router = Router(tags=["LLM endpoints"])


class EndpointOut(Schema):
    name: str
    base_url: str
    model: str
    thinking_switch: str
    thinking_model: str
    stream: bool
    max_concurrency: int
    rpm_limit: int | None
    price_input_per_1k: Decimal | None
    price_output_per_1k: Decimal | None
    is_active: bool
    test_status: str
    tested_at: datetime | None

    @staticmethod
    def resolve_base_url(endpoint):
        return public_url(endpoint.base_url)


@router.get("/endpoints", response=answers({200: list[EndpointOut]}))
@role_required(Role.MANAGER)
def list_endpoints(request):
    return Endpoint.objects.order_by("name")


def public_url(url: str) -> str:
    """`url` without user name, password, query or fragment, which may hold keys."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # out of range: no use to anyone
        port = None
    if port is not None:
        host += f":{port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
