"""The OpenAPI schema is one a generator can trust: every component name names one
schema, every status a route answers is declared with the shared error schema,
bulk bodies are typed, and a program reads the schema with its token."""

import json
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse
from ninja.openapi.schema import OpenAPISchema

from api.main import api
from tests.api.helpers import declared_statuses, token_client
from tests.api.test_permissions import ROUTES, build_world, send

ERROR = {"$ref": "#/components/schemas/ErrorOut"}


@pytest.fixture
def world(benchmark, personas):
    return build_world(benchmark, personas)


@pytest.fixture(scope="module")
def schema():
    return api.get_openapi_schema()


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_component_name_names_one_schema(monkeypatch):
    # django-ninja merges components by name, so a second model of the same name
    # silently replaces the first and a generated client reads the wrong fields.
    seen, clashes = {}, []
    merge = OpenAPISchema.add_schema_definitions

    def checked(self, definitions):
        for name, definition in definitions.items():
            if name in seen and seen[name] != definition:
                clashes.append(name)
            seen[name] = definition
        merge(self, definitions)

    monkeypatch.setattr(OpenAPISchema, "add_schema_definitions", checked)
    schema = api.get_openapi_schema()
    assert clashes == []
    for name, definition in schema["components"]["schemas"].items():
        assert definition.get("title", name) == name


def test_every_route_declares_the_refusals_it_can_answer(schema):
    schema = json.loads(json.dumps(schema))  # status codes as the client reads them
    for path, method, operation in operations(schema):
        responses = operation["responses"]
        expected = {"401", "403"}
        parameters = operation.get("parameters", [])
        if "{" in path:
            expected.add("404")
        if any(p["in"] == "query" for p in parameters) or "requestBody" in operation:
            expected.add("422")
        if "requestBody" in operation:
            expected.add("400")
        missing = expected - set(responses)
        assert not missing, (method, path, missing)
        for code, response in responses.items():
            if code.startswith(("4", "5")):
                body = response["content"]["application/json"]["schema"]
                assert body == ERROR or code == "422", (method, path, code, body)


def test_no_body_or_answer_is_untyped(schema):
    # `items: {}` is a list of anything: a generated client cannot type it.
    untyped = []

    def walk(node, where):
        if isinstance(node, dict):
            if node.get("type") == "array" and node.get("items") == {}:
                untyped.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    walk(schema["components"], "components")
    for path, method, operation in operations(schema):
        walk(operation.get("requestBody", {}), f"{method} {path}")
    assert untyped == []


def test_the_bulk_body_is_a_typed_component(schema):
    bulk = schema["paths"]["/api/v1/benchmarks/{slug}/items/bulk"]["post"]
    body = bulk["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/BulkItemsIn"}
    items = schema["components"]["schemas"]["BulkItemsIn"]["properties"]["items"]
    assert items["items"] == {"$ref": "#/components/schemas/ItemIn"}
    item = schema["components"]["schemas"]["ItemIn"]
    assert item["additionalProperties"] is False
    assert {"id", "renderings", "labels", "difficulty"} <= set(item["properties"])


def _has_path_parameters(route) -> bool:
    patterns, _, _ = api.urls
    pattern = next(p for p in patterns if p.name == route.url_name)
    return bool(pattern.pattern.converters)


WITH_PATH_PARAMETERS = [route for route in ROUTES if _has_path_parameters(route)]


@pytest.mark.parametrize(
    "route", WITH_PATH_PARAMETERS, ids=[r.url_name for r in WITH_PATH_PARAMETERS]
)
def test_a_missing_object_is_a_declared_404(route, world, personas):
    kwargs = route.kwargs(world)
    missing = {
        key: 987654 if isinstance(value, int) else "no-such-thing"
        for key, value in kwargs.items()
    }
    url = reverse(f"api:v1:{route.url_name}", kwargs=missing)
    response = send(token_client(personas["manager"]), route, url, world)
    assert response.status_code == 404, (url, response.content)
    assert set(response.json()) <= {"detail", "errors"}
    assert 404 in declared_statuses(route.method, route.url_name)


def test_a_token_reads_the_schema_and_the_docs(personas):
    client = token_client(personas["reviewer"])
    response = client.get(reverse("api:v1:openapi-json"))
    assert response.status_code == 200
    assert "/api/v1/benchmarks" in response.json()["paths"]
    docs = client.get(reverse("api:v1:openapi-view"))
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_a_bad_or_roleless_token_is_refused_as_json(personas):
    url = reverse("api:v1:openapi-json")
    wrong = Client(headers={"Authorization": "Bearer assay_not-a-token"}).get(url)
    assert wrong.status_code == 401
    assert "Bearer" in wrong.json()["detail"]
    roleless = token_client(personas["outsider"]).get(url)
    assert roleless.status_code == 403
    # Without credentials the docs stay a page: sign in first.
    redirect = Client().get(reverse("api:v1:openapi-view"))
    assert redirect.status_code == 302
    assert urlsplit(redirect["Location"]).path == reverse("login")
