"""Every page × every role × both back ends (#26): with the demo loaded
(`manage.py load_demo`), each URL name of the project opened by each role answers
something other than a server error. It runs in the PostgreSQL pass of `make test`
and, marked `smoke`, in its SQLite pass. A URL name without a row below fails the
test: a new page must say how to open it.

The Django admin's pages and the REST API's routes have matrices of their own
(tests/benchmark/test_permissions.py, tests/api/test_permissions.py)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import URLResolver, get_resolver, reverse

from annotation.models import Assignment, Campaign, Task
from api.models import ApiToken, Webhook, WebhookDelivery
from benchmark.management.commands.load_demo import DEMO_SLUG
from benchmark.models import Benchmark, ImportJob, Item
from benchmark.roles import Role
from construction.demo.forum import FORUM_SLUG
from construction.demo.industrial import CONSTRUCTION_SLUG
from construction.models import StageAudit, StageDecision, StageRun
from judging.evaluation.models import EvaluationRun
from judging.labelling.models import LabellingRun, SuggestionApplication
from judging.llm.models import Endpoint
from judging.robustness.models import VariantRun
from judging.translation.models import TranslationRun

pytestmark = [pytest.mark.smoke, pytest.mark.django_db(transaction=True)]

OWN_MATRICES = ("admin:", "api:v1:")
MISSING = 999_999  # an id no demo row has: the page must say 404, not fail


def first_pk(queryset) -> int:
    return queryset.values_list("pk", flat=True).order_by("pk").first() or MISSING


def campaign(kind) -> int:
    return first_pk(Campaign.objects.filter(kind=kind))


def demo_world() -> dict:
    item = Item.objects.filter(benchmark__slug=DEMO_SLUG).order_by("pk").first()
    robustness = VariantRun.objects.select_related("benchmark").first()
    return {
        "slug": DEMO_SLUG,
        "construction": CONSTRUCTION_SLUG,
        "forum": FORUM_SLUG,
        "expert_decision": first_pk(StageDecision.objects.filter(stage="expert")),
        "robustness": robustness.benchmark.slug if robustness else DEMO_SLUG,
        "item": item,
        "evaluation_run": first_pk(EvaluationRun.objects),
        "labelling_run": first_pk(LabellingRun.objects),
        "application": first_pk(SuggestionApplication.objects),
        "translation_run": first_pk(TranslationRun.objects),
        "variant_run": first_pk(VariantRun.objects),
        "stage_run": first_pk(StageRun.objects),
        "endpoint": first_pk(Endpoint.objects),
        "audit": first_pk(StageAudit.objects),
        "flag": first_pk(StageDecision.objects.filter(stage="dangling")),
        "candidate": StageDecision.objects.filter(stage="dangling")
        .first()
        .candidate_id,
        "grading": campaign(Campaign.Kind.GRADING),
        "adjudication": campaign(Campaign.Kind.ADJUDICATION),
        "review": campaign(Campaign.Kind.TRANSLATION_REVIEW),
        "assignment": first_pk(Assignment.objects),
        "task": first_pk(Task.objects),
        "token": first_pk(ApiToken.objects),
        "webhook": first_pk(Webhook.objects),
        "delivery": first_pk(WebhookDelivery.objects),
        "job": first_pk(ImportJob.objects),
    }


def slug(w):
    return {"slug": w["slug"]}


def building(w):
    return {"slug": w["construction"]}


def stage(w):
    return {"slug": w["construction"], "stage": "quality"}


def report(name):
    return lambda w: {"slug": w["slug"], "name": name}


def pk(key):
    return lambda w: {"pk": w[key]}


def NONE(w):
    return {}


# URL name -> URL kwargs from the demo world.
ROWS = {
    "login": NONE,
    "logout": NONE,
    "oidc_authentication_init": NONE,
    "oidc_authentication_callback": NONE,
    "benchmark:home": NONE,
    "benchmark:preferences": NONE,
    "benchmark:set_language": NONE,
    "javascript_catalog": NONE,
    "benchmark:import_items": NONE,
    "benchmark:import_job": lambda w: {"job_id": w["job"]},
    "benchmark:export_items": NONE,
    "benchmark:export_download": lambda w: {"slug": w["slug"], "fmt": "jsonl"},
    "benchmark:item_list": slug,
    "benchmark:item_detail": lambda w: {"slug": w["slug"], "item_id": w["item"].pk},
    "judging:endpoints": NONE,
    "judging:endpoint": pk("endpoint"),
    "judging:endpoint_test": pk("endpoint"),
    "judging:labelling_runs": NONE,
    "judging:labelling_run": pk("labelling_run"),
    "judging:labelling_run_add_annotator": pk("labelling_run"),
    "judging:labelling_apply_suggestions": pk("labelling_run"),
    "judging:labelling_undo_suggestions": pk("application"),
    "judging:consensus_report": pk("labelling_run"),
    "judging:translation_runs": NONE,
    "judging:translation_run": pk("translation_run"),
    "judging:translation_report": slug,
    "judging:evaluations": NONE,
    "judging:leaderboard": slug,
    "judging:table_download": lambda w: {
        "slug": w["slug"],
        "table": "leaderboard",
        "fmt": "csv",
    },
    "judging:cell_items": slug,
    "judging:item_results": lambda w: {
        "slug": w["slug"],
        "external_id": w["item"].external_id,
    },
    "judging:evaluation_runs": slug,
    "judging:start_evaluation": slug,
    "judging:import_evaluation_run": slug,
    "judging:set_category": slug,
    "judging:item_subsets": slug,
    "judging:write_difficulty": slug,
    "judging:check_table": NONE,
    "judging:evaluation_run": pk("evaluation_run"),
    "judging:export_run_inspect": pk("evaluation_run"),
    "judging:waive_pending": pk("evaluation_run"),
    "judging:robustness": lambda w: {"slug": w["robustness"]},
    "judging:generate_variants": lambda w: {"slug": w["robustness"]},
    "judging:start_variant_run": lambda w: {"slug": w["robustness"]},
    "judging:robustness_resources": lambda w: {"slug": w["robustness"]},
    "judging:variant_review": lambda w: {"slug": w["robustness"]},
    "judging:robustness_report": lambda w: {"slug": w["robustness"]},
    "judging:robustness_download": lambda w: {
        "slug": w["robustness"],
        "table": "robustness",
    },
    "judging:variant_run": pk("variant_run"),
    "judging:run_control": lambda w: {
        "kind": "evaluation",
        "pk": w["evaluation_run"],
        "action": "cancel",
    },
    "construction:audits": NONE,
    "construction:audit": pk("audit"),
    "construction:page": building,
    "construction:import_sources": building,
    "construction:start_stage": building,
    "construction:release": building,
    "construction:open_pool": building,
    "construction:draw_sample": building,
    "construction:funnel": building,
    "construction:funnel_svg": building,
    "construction:funnel_csv": building,
    "construction:candidate": lambda w: {
        "slug": w["construction"],
        "pk": w["candidate"],
    },
    "construction:review": building,
    "construction:forum_open_review": lambda w: {"slug": w["forum"]},
    "construction:forum_review": lambda w: {"slug": w["forum"]},
    "construction:forum_verify": lambda w: {
        "slug": w["forum"],
        "pk": w["expert_decision"],
    },
    "construction:forum_release": lambda w: {"slug": w["forum"]},
    "construction:review_flag": lambda w: {"slug": w["construction"], "pk": w["flag"]},
    "construction:stage": stage,
    "construction:open_audit": stage,
    "construction:start_trial": stage,
    "construction:compare": stage,
    "construction:run": pk("stage_run"),
    "annotation:queues": NONE,
    "annotation:campaign_new": NONE,
    "annotation:campaign": lambda w: {"campaign_id": w["grading"]},
    "annotation:campaign_status": lambda w: {"campaign_id": w["grading"]},
    "annotation:export": lambda w: {"campaign_id": w["grading"], "fmt": "csv"},
    "annotation:export_for_tool": lambda w: {
        "campaign_id": w["grading"],
        "tool": "label-studio",
    },
    "annotation:import_grades": lambda w: {"campaign_id": w["grading"]},
    "annotation:grade": lambda w: {"campaign_id": w["grading"]},
    "annotation:adjudicate": lambda w: {"campaign_id": w["adjudication"]},
    "annotation:review": lambda w: {"campaign_id": w["review"]},
    "annotation:release_lease": lambda w: {"assignment_id": w["assignment"]},
    "annotation:reassign": lambda w: {"task_id": w["task"]},
    "annotation:report_index": NONE,
    "annotation:report_disagreements": slug,
    "annotation:paper_archive": slug,
    "annotation:report": report("table4"),
    "annotation:report_weights": report("table4"),
    "annotation:report_download": lambda w: {
        "slug": w["slug"],
        "name": "table4",
        "fmt": "csv",
    },
    "api:tokens": NONE,
    "api:revoke_token": lambda w: {"token_id": w["token"]},
    "api:webhooks": NONE,
    "api:webhook_log": lambda w: {"webhook_id": w["webhook"]},
    "api:deactivate_webhook": lambda w: {"webhook_id": w["webhook"]},
    "api:resend_delivery": lambda w: {"delivery_id": w["delivery"]},
    "api:audit_log": NONE,
    "api:audit_log_csv": NONE,
}


def url_names(patterns=None, namespace=""):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            inner = namespace + (f"{pattern.namespace}:" if pattern.namespace else "")
            yield from url_names(pattern.url_patterns, inner)
        elif pattern.name:
            yield namespace + pattern.name


def test_every_url_name_has_a_row():
    names = {name for name in url_names() if not name.startswith(OWN_MATRICES)}
    assert sorted(names - set(ROWS)) == []
    assert sorted(set(ROWS) - names) == []


def test_every_page_opens_for_every_role_without_a_server_error(settings):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    call_command("load_demo", allow_without_debug=True, verbosity=0)
    assert Benchmark.objects.filter(slug=CONSTRUCTION_SLUG).exists()
    world = demo_world()
    failures = []
    for role in Role.values:
        client = Client(raise_request_exception=False)
        client.force_login(get_user_model().objects.get(username=role))
        for name, kwargs in ROWS.items():
            if name == "logout":
                continue  # it would end the session the next pages need
            response = client.get(reverse(name, kwargs=kwargs(world)))
            if response.status_code >= 500:
                failures.append((connection.vendor, role, name, response.status_code))
    assert failures == []
