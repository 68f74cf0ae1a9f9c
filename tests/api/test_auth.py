"""Signing in to the API: a token or the browser's session; a session call that
changes something needs the CSRF token, as a form does; the docs page is a page."""

from django.test import Client
from django.urls import reverse

from benchmark.models import Item
from tests.api.helpers import BASE, generic_item, token_client


def bulk(client, benchmark, headers=None):
    return client.post(
        f"{BASE}/benchmarks/{benchmark.slug}/items/bulk",
        {"items": [generic_item("N-1")]},
        content_type="application/json",
        headers=headers,
    )


def test_the_session_reads(client_for, benchmark):
    response = client_for("expert").get(f"{BASE}/benchmarks/{benchmark.slug}")
    assert response.status_code == 200
    assert response.json()["slug"] == benchmark.slug


def test_a_session_post_without_the_csrf_token_is_refused(personas, benchmark):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["manager"])
    response = bulk(client, benchmark)
    assert response.status_code == 403
    assert response.json() == {"detail": "CSRF check Failed"}
    assert not Item.objects.exists()


def test_a_session_post_with_the_csrf_token_is_taken(personas, benchmark):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["manager"])
    client.get(reverse("api:tokens"))  # sets the CSRF cookie, as any page does
    token = client.cookies["csrftoken"].value
    response = bulk(client, benchmark, headers={"X-CSRFToken": token})
    assert response.status_code == 200
    assert Item.objects.get().external_id == "N-1"


def test_a_token_post_needs_no_csrf_token(personas, benchmark):
    client = token_client(personas["manager"])
    client.handler.enforce_csrf_checks = True
    assert bulk(client, benchmark).status_code == 200


def test_an_api_call_without_credentials_is_a_401_not_a_redirect(benchmark):
    response = Client().get(f"{BASE}/benchmarks/{benchmark.slug}/items")
    assert response.status_code == 401
    assert response.json() == {"detail": "Unauthorized"}


def test_the_docs_page_is_for_signed_in_people_in_a_role(client_for):
    url = reverse("api:v1:openapi-view")
    assert Client().get(url).status_code == 302
    assert client_for("outsider").get(url).status_code == 403
    page = client_for("reviewer").get(url)
    assert page.status_code == 200
    # Swagger UI from Assay's own static files: the Content-Security-Policy
    # allows no other script.
    assert "cdn" not in page.content.decode().lower()
    schema = client_for("reviewer").get(reverse("api:v1:openapi-json")).json()
    assert f"{BASE}/benchmarks/{{slug}}/items/bulk" in schema["paths"]
    assert "BearerToken" in schema["components"]["securitySchemes"]


def test_a_post_without_any_credentials_is_a_401_not_a_csrf_refusal(benchmark):
    response = bulk(Client(enforce_csrf_checks=True), benchmark)
    assert response.status_code == 401
    assert response.json() == {"detail": "Unauthorized"}
    assert not Item.objects.exists()
