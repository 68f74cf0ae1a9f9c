"""The construction page (funnel, reject reasons, runs), its CSV, the candidate
page and the start form; managers only."""

import re

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
        (label, r.stage, r.entered, r.passed, r.rejected, r.ran)
        for label, r in page.context["funnel"]
    ]
    assert ("Deduplication", "dedup", 3, 2, 1, True) in rows
    assert ("Quality check", "quality", 1, 0, 1, True) in rows
    assert ("Deep verification", "deep", 0, 0, 0, False) in rows
    candidate_url = reverse(
        "construction:candidate", args=[benchmark.slug, ledger["vague"].pk]
    )
    assert candidate_url.encode() in page.content
    assert "Not enough constraints." in page.content.decode()


def test_funnel_csv(benchmark, ledger, client_for):
    response = client_for("manager").get(
        reverse("construction:funnel_csv", args=[benchmark.slug])
    )
    body = b"".join(response)
    assert body.startswith(b"\xef\xbb\xbf")
    lines = body.decode("utf-8-sig").splitlines()
    assert lines[0] == (
        "stage,breakdown,group,in,out,rejected,pending,rejected_pct,status"
    )
    # Stage by stage, in pipeline order: overall, each source kind, each label.
    assert lines[5:11] == [
        "dedup,all,all,3,2,1,0,33.3,ran",
        "dedup,source_kind,gbt_standard,2,1,1,0,50.0,ran",
        "dedup,source_kind,product_record,1,1,0,0,0.0,ran",
        "dedup,label,(no label),3,2,1,0,33.3,ran",
        "quality,all,all,1,0,1,0,100.0,ran",
        "quality,source_kind,gbt_standard,0,0,0,0,,ran",
    ]
    assert "deep,all,all,0,0,0,0,,not run" in lines
    assert [line.split(",")[0] for line in lines[1::4]] == [
        "generation",
        "dedup",
        "quality",
        "search",
        "deep",
        "release",
        "exact_dedup",
        "dangling",
        "released",
    ]


def test_funnel_report_shows_every_stage_reasons_and_release(
    benchmark, ledger, client_for
):
    from construction.release import do_draw_release_sample, do_open_pool, do_release
    from tests.construction.test_release import label_capabilities
    from tests.construction.test_sample_checks import run_check

    source = make_source(benchmark, "product_record", "断路器 C16", label="electrical")
    source.fields["industry"] = "electrical_power"
    source.save()
    candidate = make_candidate(
        source,
        "C16 断路器的额定电流是多少？",
        [("dedup", "pass", ""), ("quality", "pass", "")],
        label="electrical",
    )
    do_open_pool(benchmark)
    candidate.refresh_from_db()
    label_capabilities(benchmark, [candidate], ["selection_substitution"])
    do_draw_release_sample(benchmark, 5, 0)
    run_check(benchmark, "exact_dedup")
    run_check(benchmark, "dangling")
    do_release(benchmark)
    client = client_for("manager")
    page = client.get(reverse("construction:funnel", args=[benchmark.slug]))
    assert page.status_code == 200
    report = page.context["report"]
    body = page.content.decode()
    assert [stage for stage, _, _ in report.overall_table] == [
        "Generation",
        "Deduplication",
        "Quality check",
        "Search verification",
        "Deep verification",
        "Release sample",
        "Exact dedup",
        "Dangling references",
        "Released",
    ]
    assert body.count("data-not-run") == 2  # search, deep
    assert report.reasons["dedup"] == [("Duplicate of candidate N (similarity N)", 1)]
    assert "Not enough constraints." in body
    assert report.labels == ["(no label)", "electrical"]
    released = report.released
    # Only the candidate that passed every stage run (quality too) is released.
    assert released.total == 1
    assert [(s.name, s.count) for s in released.kinds] == [
        ("GB/T standard", 0),
        ("Product record", 1),
    ]
    assert [(s.name, s.percent) for s in released.labels] == [("electrical", 100.0)]
    svg = client.get(reverse("construction:funnel_svg", args=[benchmark.slug]))
    assert svg["Content-Type"] == "image/svg+xml"
    assert svg.content.startswith(b"<?xml")


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
        reverse("construction:funnel", args=[benchmark.slug]),
        reverse("construction:funnel_svg", args=[benchmark.slug]),
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


HOSTILE_URLS = [
    "javascript:alert(document.cookie)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "//evil.example/x",
    "https://ok.example/a b",
]


def test_only_http_search_results_are_links(benchmark, client_for):
    from construction.audits.actions import do_open_audit

    results = [
        {"url": url, "title": f"hostile {n}", "snippet": "s", "rank": n, "query": 1}
        for n, url in enumerate(HOSTILE_URLS, start=1)
    ]
    results.append(
        {"url": "https://std.example.cn/gbt", "title": "good", "snippet": "s"}
    )
    candidate = make_candidate(
        make_source(benchmark), "插座额定电压？", [("search", "pass", "")]
    )
    candidate.decisions.filter(stage="search").update(
        evidence={"queries": ["q"], "results": results, "supporting": []}
    )
    audit = do_open_audit(benchmark, "search", "search-test v1", size=1, seed=0)
    pages = [
        client_for("manager").get(
            reverse("construction:candidate", args=[benchmark.slug, candidate.pk])
        ),
        # The audit screen leases its item by the POST the page makes as it loads.
        client_for("reviewer").post(
            reverse("construction:audit", args=[audit.pk]), {"action": "next"}
        ),
    ]
    for page in pages:
        assert page.status_code == 200
        html = page.content.decode()
        hrefs = re.findall(r'href="([^"]*)"', html)
        assert "https://std.example.cn/gbt" in hrefs
        assert not [h for h in hrefs if "script" in h.lower() or "data:" in h]
        assert "//evil.example/x" not in hrefs
        assert html.count('data-unlinked="not an http(s) URL"') == len(HOSTILE_URLS)
        for n in range(1, len(HOSTILE_URLS) + 1):
            assert f"hostile {n}</span>" in html
