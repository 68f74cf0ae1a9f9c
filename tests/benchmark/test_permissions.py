"""Who may open which page: every page × every persona → expected status.

To cover a new page, add a row to MATRIX: the URL name, a function building its URL
arguments from `world` (add what your page needs to the `world` fixture), and the
status each persona gets. 302 for anonymous means "sent to the login page".
"""

from typing import NamedTuple

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from benchmark.models import ImportJob
from tests.benchmark.factories import make_sample_items

PERSONAS = ("manager", "expert", "adjudicator", "reviewer", "outsider", "anonymous")


class Row(NamedTuple):
    url_name: str
    kwargs: object  # world -> dict of URL kwargs
    expected: dict[str, int]


def statuses(*codes: int) -> dict[str, int]:
    """Statuses in PERSONAS order: manager, expert, adjudicator, reviewer, outsider,
    anonymous."""
    return dict(zip(PERSONAS, codes, strict=True))


pytestmark = pytest.mark.django_db


EVERY_ROLE = statuses(200, 200, 200, 200, 403, 302)
STAFF = statuses(200, 302, 302, 302, 302, 302)
MANAGER_ONLY = statuses(200, 403, 403, 403, 403, 302)
MANAGER_AND_ADJUDICATOR = statuses(200, 403, 200, 403, 403, 302)
MANAGER_AND_REVIEWER = statuses(200, 403, 403, 200, 403, 302)
MANAGER_AND_EXPERT = statuses(200, 200, 403, 403, 403, 302)

# Row(URL name, URL kwargs from the world, status per persona)
MATRIX = [
    Row("login", lambda w: {}, statuses(200, 200, 200, 200, 200, 200)),
    Row("benchmark:home", lambda w: {}, EVERY_ROLE),
    # One's own preferences: anyone signed in, with a role or not.
    Row("benchmark:preferences", lambda w: {}, statuses(200, 200, 200, 200, 200, 302)),
    # The language switch is a POST, open before signing in (the sign-in page).
    Row("benchmark:set_language", lambda w: {}, statuses(405, 405, 405, 405, 405, 405)),
    Row("javascript_catalog", lambda w: {}, statuses(200, 200, 200, 200, 200, 200)),
    Row("benchmark:item_list", lambda w: {"slug": w["benchmark"].slug}, EVERY_ROLE),
    Row(
        "benchmark:item_detail",
        lambda w: {"slug": w["benchmark"].slug, "item_id": w["item"].pk},
        EVERY_ROLE,
    ),
    Row("admin:index", lambda w: {}, STAFF),
    Row("benchmark:import_items", lambda w: {}, MANAGER_ONLY),
    Row("benchmark:import_job", lambda w: {"job_id": w["job"].pk}, MANAGER_ONLY),
    Row("benchmark:export_items", lambda w: {}, MANAGER_ONLY),
    Row("construction:page", lambda w: {"slug": w["benchmark"].slug}, MANAGER_ONLY),
    Row(
        "construction:funnel_csv",
        lambda w: {"slug": w["benchmark"].slug},
        MANAGER_ONLY,
    ),
    Row("construction:funnel", lambda w: {"slug": w["benchmark"].slug}, MANAGER_ONLY),
    Row(
        "construction:funnel_svg",
        lambda w: {"slug": w["benchmark"].slug},
        MANAGER_ONLY,
    ),
    Row(
        "construction:stage",
        lambda w: {"slug": w["benchmark"].slug, "stage": "quality"},
        MANAGER_ONLY,
    ),
    Row(
        "construction:compare",
        lambda w: {"slug": w["benchmark"].slug, "stage": "quality"},
        MANAGER_ONLY,
    ),
    Row("construction:audits", lambda w: {}, MANAGER_AND_REVIEWER),
    Row(
        "construction:forum_review",
        lambda w: {"slug": w["benchmark"].slug},
        MANAGER_AND_EXPERT,
    ),
    Row(
        "benchmark:export_download",
        lambda w: {"slug": w["benchmark"].slug, "fmt": "jsonl"},
        MANAGER_ONLY,
    ),
    Row(
        "judging:start_evaluation",
        lambda w: {"slug": w["benchmark"].slug},
        MANAGER_ONLY,
    ),
    Row("judging:check_table", lambda w: {}, MANAGER_ONLY),
    Row(
        "judging:item_results",
        lambda w: {"slug": w["benchmark"].slug, "external_id": "IB-0002"},
        MANAGER_AND_ADJUDICATOR,
    ),
    Row("judging:robustness", lambda w: {"slug": w["benchmark"].slug}, MANAGER_ONLY),
    Row(
        "judging:robustness_report",
        lambda w: {"slug": w["benchmark"].slug},
        MANAGER_ONLY,
    ),
    Row(
        "judging:variant_review",
        lambda w: {"slug": w["benchmark"].slug},
        statuses(200, 403, 403, 200, 403, 302),
    ),
    Row("api:tokens", lambda w: {}, EVERY_ROLE),
    Row("api:webhooks", lambda w: {}, MANAGER_ONLY),
    Row("api:audit_log", lambda w: {}, MANAGER_ONLY),
    Row("api:audit_log_csv", lambda w: {}, MANAGER_ONLY),
    # The REST API's own routes answer 401, not the sign-in redirect:
    # tests/api/test_permissions.py walks them.
    Row("api:v1:openapi-view", lambda w: {}, EVERY_ROLE),
    Row("api:v1:openapi-json", lambda w: {}, EVERY_ROLE),
]


@pytest.fixture(scope="module")
def world(module_benchmark, module_personas):
    """What every case reads, made once for the module (tests/conftest.py's
    module_db): each case runs in its own savepoint and leaves it as it was."""
    benchmark, personas = module_benchmark, module_personas
    items = make_sample_items(benchmark, user=personas["manager"])
    job = ImportJob.objects.create(
        filename="big.csv", slug=benchmark.slug, created_by=personas["manager"]
    )
    return {"benchmark": benchmark, "item": items["IB-0002"], "job": job}


@pytest.fixture
def personas(module_personas):
    return module_personas


def client_as(persona, personas) -> Client:
    client = Client()
    if persona != "anonymous":
        client.force_login(personas[persona])
    return client


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("row", MATRIX, ids=[row.url_name for row in MATRIX])
def test_permission_matrix(row, persona, world, personas):
    url = reverse(row.url_name, kwargs=row.kwargs(world))
    response = client_as(persona, personas).get(url)
    assert response.status_code == row.expected[persona], (url, persona)
    if response.status_code == 302:
        assert "login" in response.url


def admin_changelists():
    return [
        f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
        for model in admin.site._registry
    ]


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", password="root-pass-1")


@pytest.mark.parametrize("url_name", ["admin:index", *admin_changelists()])
def test_admin_pages_load_for_manager_and_superuser(
    url_name, world, personas, superuser
):
    for user in (personas["manager"], superuser):
        client = Client()
        client.force_login(user)
        response = client.get(reverse(url_name))
        assert response.status_code == 200, (url_name, user.username)


def test_manager_admin_index_lists_every_app(world, client_for):
    content = client_for("manager").get(reverse("admin:index")).content.decode()
    assert "Items" in content and "Renderings" in content and "Users" in content


@pytest.mark.parametrize("app_label", ["benchmark", "judging", "annotation", "api"])
def test_every_model_has_an_admin(app_label):
    from django.apps import apps

    missing = [
        model.__name__
        for model in apps.get_app_config(app_label).get_models()
        if not admin.site.is_registered(model)
    ]
    assert missing == []
