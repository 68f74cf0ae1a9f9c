"""The REST API, version 1: django-ninja function views over the same actions and
read helpers as the pages, under the same role rules (benchmark.roles)."""

from functools import wraps

from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.http import JsonResponse
from ninja import NinjaAPI
from ninja.errors import HttpError, ValidationError
from ninja.parser import Parser

from api import (
    campaigns,
    construction,
    construction_audits,
    construction_review,
    exports,
    items,
    llm,
    reports,
    runs,
    studies,
)
from api.auth import AUTH, BEARER, route_roles
from api.schemas import (
    READ_BY_THE_ROUTE,
    BadJson,
    component_schemas,
    load_json,
)
from benchmark.roles import Role, has_role

FORBIDDEN = "Your roles do not allow this."
UNAUTHORIZED = "Send `Authorization: Bearer <token>` with a valid API token."


class JsonParser(Parser):
    """Every JSON body through api.schemas.load_json (no NUL, no lone surrogate)."""

    def parse_body(self, request):
        return load_json(request.body)


def docs_access(view):
    """The schema and docs page, for a token as for the browser's session: a token
    is checked like an API call's (401 when it is not one), a browser without a
    session is sent to sign in, and either needs a role."""

    @login_not_required
    @wraps(view)
    def checked(request, *args, **kwargs):
        if request.headers.get("Authorization"):
            if not BEARER(request):
                return JsonResponse({"detail": UNAUTHORIZED}, status=401)
        elif not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not has_role(request.user, *Role.values):
            return JsonResponse({"detail": FORBIDDEN}, status=403)
        return view(request, *args, **kwargs)

    return checked


def roles_before_parameters(run):
    """Hand each route's roles (from role_required) to the authentication, which
    runs before django-ninja reads the route's parameters and body: a caller
    outside them gets 403, never a 422 that lists what the route takes.
    role_required on the view stays the rule; this only moves the refusal first."""
    roles = getattr(run.__self__.view_func, "roles", None)
    if roles is None:
        raise ImproperlyConfigured(
            f"API route {run.__self__.view_func.__name__} is not under role_required."
        )

    @wraps(run)
    def checked(request, *args, **kwargs):
        route_roles(request, roles)
        return run(request, *args, **kwargs)

    return checked


class AssayAPI(NinjaAPI):
    def get_openapi_schema(self, **kwargs):
        schema = super().get_openapi_schema(**kwargs)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in READ_BY_THE_ROUTE:
            components.update(component_schemas(model))
        return schema


api = AssayAPI(
    title="Assay API",
    version="1",
    description="Benchmarks, items, campaigns, runs, reports, construction and "
    "LLM endpoints. Authenticate with `Authorization: Bearer <token>` (a personal "
    "API token, from **API** beside your name) or the browser's session. Every "
    "refusal is an `ErrorOut`: 401 without credentials, 403 without the role, 404 "
    "for nothing by that name, 409 for a state that does not allow the call, 422 "
    "for a call that is not valid.",
    auth=AUTH,
    urls_namespace="api:v1",
    parser=JsonParser(),
    docs_decorator=docs_access,
)
api.add_decorator(roles_before_parameters, mode="view")
for module in (
    items,
    runs,
    reports,
    llm,
    campaigns,
    exports,
    studies,
    construction,
    construction_review,
    construction_audits,
):
    api.add_router("", module.router)


@api.exception_handler(PermissionDenied)
def forbidden(request, exc):
    # role_required's refusal, as JSON: the pages answer it with the 403 page.
    return api.create_response(request, {"detail": FORBIDDEN}, status=403)


@api.exception_handler(ValidationError)
def invalid_call(request, exc):
    errors = [
        {"loc": list(error["loc"]), "msg": error["msg"], "type": error["type"]}
        for error in exc.errors
    ]
    fields = "; ".join(
        ".".join(map(str, error["loc"])) + ": " + error["msg"] for error in errors[:5]
    )
    return api.create_response(
        request,
        {"detail": f"The call is not valid: {fields}", "errors": errors},
        status=422,
    )


@api.exception_handler(HttpError)
def http_error(request, exc):
    # django-ninja hides why a body could not be parsed; ours says it.
    cause = exc.__cause__
    detail = str(cause) if isinstance(cause, BadJson) else str(exc)
    return api.create_response(request, {"detail": detail}, status=exc.status_code)
