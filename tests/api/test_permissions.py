"""Who may call which route: every route of the API × every persona × both ways of
signing in → the status in ROUTES.

The expectations follow the pages' rules (tests/benchmark/test_permissions.py):
every role reads benchmarks and items, as in the item browser; managers alone import
items, start, see and cancel runs, and see reports, endpoints and campaigns; a user
without a role gets 403 and a caller without credentials 401 (an API has no sign-in
page to send them to). A route without a row fails test_every_route_has_a_row.
"""

import json
from typing import NamedTuple

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Campaign
from api.main import api
from api.urls import PAGES
from benchmark.models import Item
from construction.models import StageRun
from judging.evaluation.models import EvaluationRun
from judging.labelling.models import LabellingRun
from judging.llm.models import Endpoint
from judging.llm.prompts import default_template
from judging.translation.models import TranslationRun
from tests.api.helpers import generic_item, token_client
from tests.benchmark.factories import make_sample_items
from tests.construction.factories import make_candidate, make_source

PERSONAS = ("manager", "expert", "adjudicator", "reviewer", "outsider", "anonymous")


class Route(NamedTuple):
    method: str
    url_name: str
    kwargs: object  # world -> URL kwargs
    expected: dict[str, int]
    body: object = None  # world -> JSON body


def statuses(*codes: int) -> dict[str, int]:
    """Statuses in PERSONAS order: manager, expert, adjudicator, reviewer, outsider,
    anonymous."""
    return dict(zip(PERSONAS, codes, strict=True))


EVERY_ROLE = statuses(200, 200, 200, 200, 403, 401)
MANAGER_ONLY = statuses(200, 403, 403, 403, 403, 401)


def slug(world):
    return {"slug": world["benchmark"].slug}


def campaign(world):
    return {"campaign_id": world["campaign"].pk}


ROUTES = [
    Route("GET", "list_benchmarks", lambda w: {}, EVERY_ROLE),
    Route("GET", "get_benchmark", slug, EVERY_ROLE),
    Route("GET", "list_items", slug, EVERY_ROLE),
    Route(
        "GET",
        "item_history",
        lambda w: {**slug(w), "external_id": w["item"].external_id},
        EVERY_ROLE,
    ),
    Route(
        "POST",
        "bulk_items",
        slug,
        MANAGER_ONLY,
        lambda w: {"items": [generic_item("NEW-1")]},
    ),
    Route("GET", "list_runs", slug, MANAGER_ONLY),
    Route("GET", "get_run", lambda w: {"run_id": w["run"].pk}, MANAGER_ONLY),
    Route("POST", "cancel_run", lambda w: {"run_id": w["run"].pk}, MANAGER_ONLY),
    Route(
        "POST",
        "start_run",
        slug,
        statuses(201, 403, 403, 403, 403, 401),
        lambda w: (
            {"tested": "tested", "judge": "judge", "sv_judge": "sv"}
            | {"language": "zh"}
        ),
    ),
    Route("GET", "run_results", lambda w: {"run_id": w["run"].pk}, MANAGER_ONLY),
    Route(
        "GET",
        "get_labelling_run",
        lambda w: {"run_id": w["labelling_run"].pk},
        MANAGER_ONLY,
    ),
    Route(
        "GET",
        "get_translation_run",
        lambda w: {"run_id": w["translation_run"].pk},
        MANAGER_ONLY,
    ),
    Route(
        "GET",
        "agreement_report",
        lambda w: {**slug(w), "name": "consensus"},
        MANAGER_ONLY,
    ),
    Route("GET", "leaderboard", slug, MANAGER_ONLY),
    Route("GET", "translation_report_rows", slug, MANAGER_ONLY),
    Route("GET", "list_endpoints", lambda w: {}, MANAGER_ONLY),
    Route("GET", "list_campaigns", slug, MANAGER_ONLY),
    Route("GET", "get_campaign", campaign, MANAGER_ONLY),
    Route("GET", "campaign_labels", campaign, MANAGER_ONLY),
    Route(
        "POST",
        "construction_import_sources",
        slug,
        MANAGER_ONLY,
        lambda w: {
            "filename": "s.jsonl",
            "content": json.dumps(
                {"kind": "gbt_standard", "reference": "GB/T 1 2", "text": "新的条文"},
                ensure_ascii=False,
            ),
        },
    ),
    Route(
        "POST",
        "construction_start_stage",
        slug,
        statuses(201, 403, 403, 403, 403, 401),
        lambda w: {"stage": "generation", "endpoint": "tested"},
    ),
    Route(
        "GET", "construction_run", lambda w: {"run_id": w["stage_run"].pk}, MANAGER_ONLY
    ),
    Route("GET", "construction_funnel", slug, MANAGER_ONLY),
    Route(
        "GET",
        "construction_candidate",
        lambda w: {**slug(w), "candidate_id": w["flag"].candidate_id},
        MANAGER_ONLY,
    ),
    Route("GET", "construction_flags", slug, MANAGER_ONLY),
    Route(
        "POST",
        "construction_review_flag",
        lambda w: {"decision_id": w["flag"].pk},
        MANAGER_ONLY,
        lambda w: {"outcome": "pass"},
    ),
    Route("POST", "construction_open_pool", slug, MANAGER_ONLY),
    Route(
        "POST",
        "construction_draw_sample",
        slug,
        # Refused (nothing has run to draw from), but only for a manager.
        statuses(422, 403, 403, 403, 403, 401),
        lambda w: {"size": 10},
    ),
    Route(
        "POST",
        "construction_release",
        slug,
        statuses(422, 403, 403, 403, 403, 401),
    ),
]


@pytest.fixture
def world(benchmark, personas):
    items = make_sample_items(benchmark, user=personas["manager"])
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name="model-x",
        language="zh",
        origin=EvaluationRun.Origin.PIPELINE,
        status=EvaluationRun.Status.RUNNING,
    )
    for name in ("tested", "judge", "sv"):
        Endpoint.objects.create(
            name=name, base_url="http://127.0.0.1:9/v1", model=f"{name}-model"
        )
    campaign = Campaign.objects.create(
        benchmark=benchmark, name="Calibration", kind=Campaign.Kind.GRADING
    )
    labelling_run = LabellingRun.objects.create(
        benchmark=benchmark, template=default_template("labelling")
    )
    translation_run = TranslationRun.objects.create(
        benchmark=benchmark, languages=["en"]
    )
    source = make_source(benchmark, text="该产品额定电压 250 V")
    flag = make_candidate(
        source,
        "该产品的额定电压是多少？",
        [("dedup", "pass", ""), ("quality", "pass", ""), ("release", "pass", "")],
    ).decisions.create(
        stage="dangling",
        outcome="pending",
        reason="dangling reference: 该产品",
        prompt_version="dangling+x",
        evidence={"dangling": {"question": [["该产品", 0, 3]]}},
    )
    stage_run = StageRun.objects.create(benchmark=benchmark, stage="dedup")
    return {
        "benchmark": benchmark,
        "flag": flag,
        "stage_run": stage_run,
        "labelling_run": labelling_run,
        "translation_run": translation_run,
        "item": next(iter(items.values())),
        "run": run,
        "campaign": campaign,
    }


def caller(persona, how, personas) -> Client:
    if persona == "anonymous":
        return Client()
    if how == "token":
        return token_client(personas[persona])
    client = Client()
    client.force_login(personas[persona])
    return client


def test_every_route_has_a_row():
    patterns, _, _ = api.urls
    routes = {pattern.name for pattern in patterns} - PAGES
    assert routes == {route.url_name for route in ROUTES}


@pytest.mark.parametrize("how", ["token", "session"])
@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("route", ROUTES, ids=[route.url_name for route in ROUTES])
def test_permission_matrix(route, persona, how, world, personas):
    url = reverse(f"api:v1:{route.url_name}", kwargs=route.kwargs(world))
    client = caller(persona, how, personas)
    if route.method == "GET":
        response = client.get(url)
    else:
        body = json.dumps(route.body(world)) if route.body else ""
        response = client.post(url, body, content_type="application/json")
    assert response.status_code == route.expected[persona], (url, persona, how)
    assert response["Content-Type"] == "application/json; charset=utf-8"
    if response.status_code >= 400:
        # A refused call changes nothing.
        assert not Item.objects.filter(external_id="NEW-1").exists()
        assert EvaluationRun.objects.count() == 1
        world["run"].refresh_from_db()
        assert world["run"].status == EvaluationRun.Status.RUNNING
