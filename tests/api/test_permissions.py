"""Who may call which route: every route of the API × every persona × both ways of
signing in → the status in ROUTES.

The expectations follow the pages' rules (tests/benchmark/test_permissions.py):
every role reads benchmarks and items, as in the item browser; managers alone import
items and runs, export, start, see and cancel runs, see reports, endpoints and
campaigns, derive subsets, and build benchmarks (construction); a user
without a role gets 403 and a caller without credentials 401 (an API has no sign-in
page to send them to). A route without a row fails test_every_route_has_a_row.
"""

import json
from typing import NamedTuple

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Campaign
from api.main import api
from api.urls import NOT_ROUTES
from benchmark.models import Item, ItemSubset
from construction.audits.actions import do_open_audit
from construction.models import AuditAnswer, Source, Stage, StageDecision, StageRun
from judging.evaluation.models import EvaluationRun
from judging.labelling.models import LabellingRun
from judging.llm.models import Endpoint
from judging.llm.prompts import default_template
from judging.translation.models import TranslationRun
from tests.api.helpers import declared_statuses, generic_item, token_client
from tests.benchmark.factories import make_sample_items
from tests.construction.factories import make_candidate, make_source
from tests.judging.factories import make_run

PERSONAS = ("manager", "expert", "adjudicator", "reviewer", "outsider", "anonymous")


class Route(NamedTuple):
    method: str
    url_name: str
    kwargs: object  # world -> URL kwargs
    expected: dict[str, int]
    body: object = None  # world -> JSON body
    form: object = None  # world -> multipart fields (a file as bytes)


def statuses(*codes: int) -> dict[str, int]:
    """Statuses in PERSONAS order: manager, expert, adjudicator, reviewer, outsider,
    anonymous."""
    return dict(zip(PERSONAS, codes, strict=True))


pytestmark = pytest.mark.django_db


EVERY_ROLE = statuses(200, 200, 200, 200, 403, 401)
MANAGER_ONLY = statuses(200, 403, 403, 403, 403, 401)
MANAGER_AND_EXPERT = statuses(200, 200, 403, 403, 403, 401)
MANAGER_AND_REVIEWER = statuses(200, 403, 403, 200, 403, 401)


def slug(world):
    return {"slug": world["benchmark"].slug}


def campaign(world):
    return {"campaign_id": world["campaign"].pk}


def audit(world):
    return {**slug(world), "audit_id": world["audit"].pk}


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
    Route(
        "POST",
        "import_run",
        slug,
        statuses(201, 403, 403, 403, 403, 401),
        form=lambda w: {
            "file": results_file(w["item"]),
            "model_name": "imported-model",
            "language": "zh",
        },
    ),
    Route("GET", "export_items", slug, MANAGER_ONLY),
    Route("GET", "export_hf_release", slug, MANAGER_ONLY),
    Route(
        "GET",
        "export_run_inspect",
        lambda w: {"run_id": w["scored_runs"][0].pk},
        MANAGER_ONLY,
    ),
    Route("GET", "list_subsets", slug, MANAGER_ONLY),
    Route(
        "POST",
        "derive_subset",
        slug,
        statuses(201, 403, 403, 403, 403, 401),
        lambda w: {
            "name": "solved-by-some",
            "rule": "lpfqa-minus",
            "runs": [run.pk for run in w["scored_runs"]],
        },
    ),
    Route("GET", "robustness_report", slug, MANAGER_ONLY),
    Route(
        "POST",
        "import_sources",
        slug,
        statuses(201, 403, 403, 403, 403, 401),
        form=lambda w: {"file": SOURCES_FILE},
    ),
    Route(
        "POST",
        "start_stage",
        slug,
        statuses(201, 403, 403, 403, 403, 401),
        lambda w: {"stage": "dedup"},
    ),
    Route(
        "GET", "get_stage_run", lambda w: {"run_id": w["stage_run"].pk}, MANAGER_ONLY
    ),
    Route("GET", "funnel", slug, MANAGER_ONLY),
    Route("GET", "list_candidates", slug, MANAGER_ONLY),
    Route("GET", "list_flags", slug, MANAGER_ONLY),
    Route(
        "POST",
        "review_flag",
        lambda w: {**slug(w), "decision_id": w["flag"].pk},
        MANAGER_ONLY,
        lambda w: {"outcome": "pass"},
    ),
    Route(
        "GET",
        "get_candidate",
        lambda w: {**slug(w), "candidate_id": w["flag"].candidate_id},
        MANAGER_ONLY,
    ),
    Route(
        "POST",
        "decide_candidate",
        lambda w: {**slug(w), "candidate_id": w["flag"].candidate_id},
        MANAGER_ONLY,  # the flag review is the managers' (experts: their queue)
        lambda w: {"stage": "dangling", "outcome": "pass"},
    ),
    Route("POST", "open_pool", slug, MANAGER_ONLY),
    Route(
        "POST",
        "draw_sample",
        slug,
        statuses(422, 403, 403, 403, 403, 401),
        lambda w: {"size": 5},
    ),
    Route("POST", "release", slug, statuses(422, 403, 403, 403, 403, 401)),
    Route(
        "POST",
        "open_expert_review",
        slug,
        statuses(422, 403, 403, 403, 403, 401),
    ),
    Route("GET", "list_expert_items", slug, MANAGER_AND_EXPERT),
    Route(
        "POST",
        "verify_expert_item",
        lambda w: {**slug(w), "decision_id": w["expert_item"].pk},
        MANAGER_AND_EXPERT,
        lambda w: {"outcome": "pass"},
    ),
    Route(
        "POST",
        "release_forum_items",
        slug,
        statuses(422, 403, 403, 403, 403, 401),
    ),
    Route(
        "GET",
        "list_stage_audits",
        lambda w: {**slug(w), "stage": "quality"},
        MANAGER_ONLY,
    ),
    Route("GET", "list_audits", slug, MANAGER_AND_REVIEWER),
    Route("POST", "next_audit_item", audit, MANAGER_AND_REVIEWER),
    Route(
        "POST",
        "answer_audit_item",
        lambda w: {**audit(w), "item_id": w["audit_item"].pk},
        MANAGER_AND_REVIEWER,
        lambda w: {"agrees": True},
    ),
    Route("GET", "list_campaigns", slug, MANAGER_ONLY),
    Route("GET", "get_campaign", campaign, MANAGER_ONLY),
    Route("GET", "campaign_labels", campaign, MANAGER_ONLY),
]


SOURCES_FILE = (
    '{"kind": "gbt_standard", "reference": "GB/T 2099.1-2021 5.2", '
    '"text": "插座的额定电压不应超过 250 V。"}\n'
).encode()


def results_file(item) -> bytes:
    """One evaluate.py-style JSONL line for `item` (a run import)."""
    line = {
        "id": item.external_id,
        "model_response": "380 V.",
        "model_name": "imported-model",
        "score": 3,
        "judge_reason": "correct",
        "safety_violation": False,
        "safety_review_reason": "",
        "final_score": 3,
    }
    return json.dumps(line).encode() + b"\n"


@pytest.fixture(scope="module")
def world(module_benchmark, module_personas):
    """What every case reads, made once for the module (tests/conftest.py's
    module_db): each case runs in its own savepoint and leaves it as it was."""
    return build_world(module_benchmark, module_personas)


def build_world(benchmark, personas) -> dict:
    """One object of each kind a route names (other modules build it per test)."""
    items = make_sample_items(benchmark, user=personas["manager"])
    listed = list(items.values())
    scored_runs = [
        make_run(benchmark, listed, [3] * len(listed), [False] * len(listed), model=m)
        for m in ("alpha", "beta")
    ]
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
    source = make_source(benchmark)
    candidates = [
        make_candidate(source, question) for question in ("本表的额定电压？", "M8?")
    ]
    flag = StageDecision.objects.create(
        candidate=candidates[0],
        stage=Stage.DANGLING,
        outcome=StageDecision.Outcome.PENDING,
        reason="dangling reference",
        prompt_version="post v1",
        evidence={"dangling": {"question": [["本表", 0, 2]]}},
    )
    stage_run = StageRun.objects.create(benchmark=benchmark, stage=Stage.QUALITY)
    expert_item = StageDecision.objects.create(
        candidate=candidates[1],
        stage=Stage.EXPERT,
        outcome=StageDecision.Outcome.PENDING,
        prompt_version="expert",
    )
    make_candidate(source, "M10?", [("quality", "pass", "fine")])
    stage_audit = do_open_audit(benchmark, "quality", "quality-test v1", size=1)
    return {
        "audit": stage_audit,
        "audit_item": stage_audit.items.get(),
        "expert_item": expert_item,
        "benchmark": benchmark,
        "flag": flag,
        "stage_run": stage_run,
        "labelling_run": labelling_run,
        "translation_run": translation_run,
        "item": next(iter(items.values())),
        "run": run,
        "campaign": campaign,
        "scored_runs": scored_runs,
        "run_count": EvaluationRun.objects.count(),
    }


@pytest.fixture
def personas(module_personas):
    return module_personas


def caller(persona, how, personas) -> Client:
    if persona == "anonymous":
        return Client()
    if how == "token":
        return token_client(personas[persona])
    client = Client()
    client.force_login(personas[persona])
    return client


def send(client, route, url, world):
    """Call `route` at `url` with its body: JSON, or multipart with the file."""
    if route.method == "GET":
        return client.get(url)
    if route.form:
        fields = route.form(world)
        fields["file"] = SimpleUploadedFile("upload.jsonl", fields["file"])
        return client.post(url, fields)
    body = json.dumps(route.body(world)) if route.body else ""
    return client.post(url, body, content_type="application/json")


def test_every_route_has_a_row():
    patterns, _, _ = api.urls
    routes = {pattern.name for pattern in patterns} - NOT_ROUTES
    assert routes == {route.url_name for route in ROUTES}


@pytest.mark.parametrize("how", ["token", "session"])
@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("route", ROUTES, ids=[route.url_name for route in ROUTES])
def test_permission_matrix(route, persona, how, world, personas):
    url = reverse(f"api:v1:{route.url_name}", kwargs=route.kwargs(world))
    client = caller(persona, how, personas)
    response = send(client, route, url, world)
    assert response.status_code == route.expected[persona], (url, persona, how)
    # A generated client knows every answer it can get.
    assert response.status_code in declared_statuses(route.method, route.url_name)
    if response.status_code < 400 and route.url_name.startswith("export_"):
        assert response["Content-Disposition"].startswith("attachment;")
    else:
        assert response["Content-Type"] == "application/json; charset=utf-8"
    if response.status_code >= 400:
        # A refused call changes nothing.
        assert not Item.objects.filter(external_id="NEW-1").exists()
        assert EvaluationRun.objects.count() == world["run_count"]
        assert not ItemSubset.objects.exists()
        assert StageRun.objects.count() == 1
        assert Source.objects.count() == 1
        world["flag"].refresh_from_db()
        assert world["flag"].outcome == StageDecision.Outcome.PENDING
        assert not AuditAnswer.objects.exists()
        world["run"].refresh_from_db()
        assert world["run"].status == EvaluationRun.Status.RUNNING
