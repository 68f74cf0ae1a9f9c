"""Construction over the REST API: a script imports sources (a bad file is
refused with its problems and adds nothing), starts a stage (a refused start
says why), reads the funnel in the paper's order and a candidate's ledger, and
reviews a flag."""

import json

from django.urls import reverse

from construction.models import Source, StageRun
from tests.api.helpers import token_client
from tests.construction.factories import make_candidate, make_source


def url(name, **kwargs):
    return reverse(f"api:v1:{name}", kwargs=kwargs)


def post(client, address, body=None):
    return client.post(address, json.dumps(body or {}), content_type="application/json")


def test_a_script_imports_starts_reads_and_reviews(benchmark, personas):
    client = token_client(personas["manager"])
    slug = benchmark.slug
    lines = "\n".join(
        json.dumps(row, ensure_ascii=False)
        for row in (
            {"kind": "gbt_standard", "reference": "GB/T 1 2", "text": "条文一"},
            {"kind": "product_record", "reference": "cat R-1", "text": "记录一"},
        )
    )
    sources = url("construction_import_sources", slug=slug)
    added = post(client, sources, {"filename": "s.jsonl", "content": lines})
    assert added.status_code == 200
    assert added.json() == {"added": 2, "already_present": 0}
    again = post(client, sources, {"filename": "s.jsonl", "content": lines})
    assert again.json() == {"added": 0, "already_present": 2}
    bad = post(client, sources, {"filename": "s.jsonl", "content": '{"kind": "x"}'})
    assert bad.status_code == 422
    assert bad.json()["problems"][0]["line"] == 1
    assert Source.objects.count() == 2

    refused = post(
        client, url("construction_start_stage", slug=slug), {"stage": "dedup"}
    )
    assert refused.status_code == 422
    assert refused.json()["detail"] == "Run the generation stage first."
    assert not StageRun.objects.exists()

    source = make_source(benchmark, text="该产品额定电压 250 V")
    candidate = make_candidate(
        source,
        "该产品的额定电压是多少？",
        [("dedup", "pass", ""), ("quality", "pass", ""), ("release", "pass", "")],
    )
    flag = candidate.decisions.create(
        stage="dangling",
        outcome="pending",
        reason="dangling reference: 该产品",
        prompt_version="dangling+x",
        evidence={"dangling": {"question": [["该产品", 0, 3]]}},
    )
    funnel = client.get(url("construction_funnel", slug=slug)).json()
    assert [row["stage"] for row in funnel][-4:] == [
        "release",
        "exact_dedup",
        "dangling",
        "released",
    ]
    assert funnel[-2] == {
        "stage": "dangling",
        "ran": True,
        "entered": 1,
        "passed": 0,
        "rejected": 0,
        "pending": 1,
    }
    flags = client.get(url("construction_flags", slug=slug)).json()
    assert [f["id"] for f in flags] == [flag.pk]
    review = url("construction_review_flag", decision_id=flag.pk)
    no_reason = post(client, review, {"outcome": "reject"})
    assert no_reason.status_code == 422
    assert no_reason.json()["detail"] == "Say why the candidate is removed."
    removed = post(client, review, {"outcome": "reject", "reason": "No product."})
    assert removed.json()["outcome"] == "reject"
    assert removed.json()["decided_by"] == "manager"
    ledger = client.get(
        url("construction_candidate", slug=slug, candidate_id=candidate.pk)
    ).json()
    assert [d["stage"] for d in ledger["decisions"]][-1] == "dangling"
    assert ledger["decisions"][-1]["reason"] == "No product."
