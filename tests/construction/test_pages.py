"""The construction page (funnel, reject reasons, runs), its CSV, the candidate
page and the start form; managers only."""

import pytest
from django.urls import reverse

from construction.models import StageRun
from tests.construction.factories import make_candidate, make_source


@pytest.fixture
def ledger(benchmark):
    standard = make_source(benchmark, "gbt_standard", "插座额定电压 250 V")
    product = make_source(benchmark, "product_record", "螺栓 A2-70")
    kept = make_candidate(standard, "额定电压最高多少？", [("dedup", "pass", "")])
    twin = make_candidate(
        standard,
        "额定电压最高是多少？",
        [("dedup", "reject", "Duplicate of candidate 1 (similarity 0.93)")],
    )
    vague = make_candidate(
        product,
        "这种螺栓怎么样？",
        [("dedup", "pass", ""), ("quality", "reject", "Not enough constraints.")],
    )
    return {"kept": kept, "twin": twin, "vague": vague}


def test_page_shows_funnel_and_reject_reasons(benchmark, ledger, client_for):
    page = client_for("manager").get(
        reverse("construction:page", args=[benchmark.slug])
    )
    assert page.status_code == 200
    rows = [
        (r.stage, r.source_kind, r.entered, r.passed, r.rejected)
        for r in page.context["funnel"]
    ]
    assert ("dedup", "all", 3, 2, 1) in rows
    assert ("quality", "product_record", 1, 0, 1) in rows
    candidate_url = reverse(
        "construction:candidate", args=[benchmark.slug, ledger["vague"].pk]
    )
    assert candidate_url.encode() in page.content
    assert "Not enough constraints." in page.content.decode()


def test_funnel_csv(benchmark, ledger, client_for):
    response = client_for("manager").get(
        reverse("construction:funnel_csv", args=[benchmark.slug])
    )
    text = b"".join(response).decode("utf-8-sig")
    lines = text.splitlines()
    assert lines[0] == "stage,source_kind,in,out,rejected,pending,rejected_pct"
    assert "dedup,all,3,2,1,0,33.3" in lines


def test_candidate_page_shows_source_and_decisions(benchmark, ledger, client_for):
    twin = ledger["twin"]
    page = client_for("manager").get(
        reverse("construction:candidate", args=[benchmark.slug, twin.pk])
    )
    body = page.content.decode()
    assert "插座额定电压 250 V" in body
    assert "Duplicate of candidate 1" in body
    assert [d.stage for d in page.context["decisions"]] == ["generation", "dedup"]


def test_runs_partial_stops_polling_when_no_run_is_active(benchmark, client_for):
    url = reverse("construction:page", args=[benchmark.slug])
    client = client_for("manager")
    assert client.get(url, headers={"HX-Request": "true"}).status_code == 286
    StageRun.objects.create(benchmark=benchmark, stage="dedup")
    partial = client.get(url, headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert b'hx-trigger="every 2s"' in partial.content


def test_start_form_refuses_a_stage_out_of_order(benchmark, client_for):
    make_source(benchmark)
    response = client_for("manager").post(
        reverse("construction:start_stage", args=[benchmark.slug]),
        {"stage": "quality", "questions_per_source": 3, "threshold": 0.9},
    )
    assert response.status_code == 400
    assert "Run the generation stage first." in response.content.decode()
    assert not StageRun.objects.exists()


def test_start_dedup_from_the_form(benchmark, ledger, client_for):
    response = client_for("manager").post(
        reverse("construction:start_stage", args=[benchmark.slug]),
        {"stage": "dedup", "questions_per_source": 3, "threshold": 0.85},
    )
    assert response.status_code == 302
    run = StageRun.objects.get()
    assert (run.stage, run.threshold, run.prompt_version) == (
        "dedup",
        0.85,
        "char-tfidf-2-4@0.85",
    )


@pytest.mark.parametrize("persona", ["expert", "adjudicator", "reviewer"])
def test_pages_are_for_managers(benchmark, ledger, client_for, persona):
    client = client_for(persona)
    for url in (
        reverse("construction:page", args=[benchmark.slug]),
        reverse("construction:funnel_csv", args=[benchmark.slug]),
        reverse("construction:candidate", args=[benchmark.slug, ledger["kept"].pk]),
    ):
        assert client.get(url).status_code == 403


def test_a_stage_run_address_leads_to_its_row(client_for, benchmark):
    from django.urls import reverse

    from construction.models import StageRun

    run = StageRun.objects.create(benchmark=benchmark, stage="dedup")
    response = client_for("manager").get(reverse("construction:run", args=[run.pk]))
    assert response.url == (
        reverse("construction:page", args=[benchmark.slug]) + f"#run-{run.pk}"
    )
    assert (
        client_for("expert").get(reverse("construction:run", args=[run.pk])).status_code
        == 403
    )
