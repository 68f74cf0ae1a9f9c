"""The admin is no oracle for secrets: no changelist filters, searches or sorts by
a secret-like field (assay/admin_site.py)."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from api.models import Webhook
from api.webhooks.actions import do_create_webhook
from assay.admin_site import SecretFieldsGuard, is_secret_like

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_client():
    user = get_user_model().objects.create_superuser("root", password="x" * 12)
    client = Client()
    client.force_login(user)
    return client


def secret_lookups(model) -> list[str]:
    """Every secret-like field of the model, and of each model a forward relation
    leads to (`user__password`)."""
    lookups = []
    for field in model._meta.get_fields():
        if not getattr(field, "concrete", False):
            continue
        if is_secret_like(field.name):
            lookups.append(field.name)
        if field.is_relation and field.related_model is not None:
            lookups += [
                f"{field.name}__{related.name}"
                for related in field.related_model._meta.concrete_fields
                if is_secret_like(related.name)
            ]
    return lookups


def changelists() -> list[tuple[str, str]]:
    return [
        (
            reverse(
                f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
            ),
            lookup,
        )
        for model in admin.site._registry
        for lookup in secret_lookups(model)
    ]


def test_the_walk_covers_the_secrets_that_matter():
    walked = set(changelists())
    assert (reverse("admin:api_webhook_changelist"), "secret") in walked
    assert (reverse("admin:api_apitoken_changelist"), "digest") in walked
    assert (reverse("admin:auth_user_changelist"), "password") in walked
    assert (reverse("admin:api_webhook_changelist"), "user__password") in walked


@pytest.mark.parametrize(("url", "lookup"), changelists())
def test_no_changelist_filters_by_a_secret_like_field(superuser_client, url, lookup):
    response = superuser_client.get(url, {f"{lookup}__startswith": "x"})
    assert response.status_code == 400


def test_a_webhook_secret_cannot_be_guessed_one_character_at_a_time(
    superuser_client, personas
):
    webhook, secret = do_create_webhook(
        personas["manager"], "https://hooks.example.com/a", ["run.complete"]
    )
    url = reverse("admin:api_webhook_changelist")
    right = superuser_client.get(url, {"secret__startswith": secret[:8]})
    wrong = superuser_client.get(url, {"secret__startswith": "nothing"})
    searched = superuser_client.get(url, {"q": secret[:8]})
    assert right.status_code == wrong.status_code == 400
    assert searched.status_code == 200
    assert searched.context["cl"].result_count == 0
    assert Webhook.objects.filter(secret=secret).count() == 1


def test_every_registered_admin_passes_the_secret_field_check():
    assert all(
        isinstance(model_admin, SecretFieldsGuard)
        for model_admin in admin.site._registry.values()
    )
    errors = [error for error in admin.site.check(None) if error.id == "assay.E001"]
    assert errors == []


def test_an_admin_searching_a_secret_fails_the_checks():
    class Leaky(admin.ModelAdmin):
        search_fields = ["url", "secret"]
        list_filter = [("user__password", admin.EmptyFieldListFilter)]

    site = admin.AdminSite()
    guarded = type("Leaky", (SecretFieldsGuard, Leaky), {})
    errors = guarded(Webhook, site).check()
    assert {(error.id, error.msg.split(" names ")[0]) for error in errors} == {
        ("assay.E001", "search_fields"),
        ("assay.E001", "list_filter"),
    }
