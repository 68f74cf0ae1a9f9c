"""The REST API, version 1: django-ninja function views over the same actions and
read helpers as the pages, under the same role rules (benchmark.roles)."""

from django.core.exceptions import PermissionDenied
from ninja import NinjaAPI

from api import campaigns, construction, items, llm, reports, runs
from api.auth import AUTH
from benchmark.roles import Role, role_required

api = NinjaAPI(
    title="Assay API",
    version="1",
    description="Benchmarks, items, campaigns, runs, reports and LLM endpoints. "
    "Authenticate with `Authorization: Bearer <token>` (a personal API token, "
    "from **API** beside your name) or the browser's session.",
    auth=AUTH,
    urls_namespace="api:v1",
    # The docs page is a page: signed in, in a role, like every other.
    docs_decorator=role_required(*Role.values),
)
api.add_router("", items.router)
api.add_router("", runs.router)
api.add_router("", reports.router)
api.add_router("", llm.router)
api.add_router("", campaigns.router)
api.add_router("", construction.router)


@api.exception_handler(PermissionDenied)
def forbidden(request, exc):
    # role_required's refusal, as JSON: the pages answer it with the 403 page.
    return api.create_response(
        request, {"detail": "Your roles do not allow this."}, status=403
    )
