"""One candidate's review over the API: every stage's decision with its evidence
(Stage 4's queries and results, Stage 5's searches and verdict per claim, the
dedup twin) and its provenance; a person's decision on it under the pages' role
rules, a bad one refused with nothing changed; and a script that builds a small
benchmark through the API alone on a real worker, against the test servers
that answer from what they are sent."""

import io
import json

import pytest

from benchmark.models import Item
from construction.actions import do_save_search_service
from construction.models import Candidate, Source, Stage, StageDecision
from judging.llm.actions import do_save_endpoint
from judging.llm.prompts import default_template
from reviewqueue.models import Lease
from tests.api.helpers import BASE, token_client
from tests.construction.conftest import local_search_services  # noqa: F401 (autouse)
from tests.construction.factories import make_candidate, make_source
from tests.construction.stage_fixtures import run_here, stub_endpoint
from tests.construction.verification_fixtures import (
    claim_query,
    queries_for,
    respond,
    search_results,
    source_records,
)
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import OpenAIStub
from tests.search_stub import SearchStub

BEARING, CONTACTOR, SOCKET = (
    "bearings 6205-2RS",
    "contactors CJX2-1810",
    "GB/T 2099.1-2021 5.2",
)
# The labels a script imports with its sources: the release sample's strata.
STRATA = {
    SOCKET: ("standards_terminology", "electrical_power"),
    BEARING: ("selection_substitution", "machinery_hardware"),
    CONTACTOR: ("selection_substitution", "electrical_power"),
}
REFINED = "CJX2-1810 交流接触器的 AC-3 额定工作电流是多少？"  # 9 A → 18 A
REPEAT = "按 GB/T 2099.1-2021, 家用插座的额定电压最高为多少伏?"
ITS_TWIN = "按 GB/T 2099.1-2021，家用插座的额定电压最高为多少伏？"
FLAGGED = "上述 6205-2RS 轴承的外径和宽度分别是多少？"


@pytest.fixture(autouse=True)
def stub_key(monkeypatch):
    # Set before a real worker starts: it reads the endpoint's key there.
    monkeypatch.setenv("STUB_API_KEY", "k")


def base(benchmark) -> str:
    return f"{BASE}/benchmarks/{benchmark.slug}/construction"


def sources_file(*references: str) -> io.BytesIO:
    """Those sources of the industrial set, with their capability and industry
    (imported as the draft items' final labels when the pool opens)."""
    lines = []
    for line in source_records().decode().splitlines():
        record = json.loads(line)
        if record["reference"] in references:
            capability, industry = STRATA[record["reference"]]
            record["fields"] |= {"capability": capability, "industry": industry}
            lines.append(json.dumps(record, ensure_ascii=False))
    upload = io.BytesIO("\n".join(lines).encode())
    upload.name = "sources.jsonl"
    return upload


def post(client, url, body=None):
    return client.post(url, json.dumps(body or {}), "application/json")


def serial_writer(llm):
    """Generation one source at a time: candidate ids follow the source file, so
    dedup keeps the socket's question and rejects the contactor's repeat."""
    return do_save_endpoint(
        "stub-writer-serial",
        base_url=llm.base_url,
        model="writer-model",
        api_key_env="STUB_API_KEY",
        max_concurrency=1,
    )


# -- the evidence ---------------------------------------------------------------


@pytest.fixture
def servers(db):
    with (
        OpenAIStub(responder=respond) as llm,
        SearchStub(responder=search_results) as search,
    ):
        yield llm, search


def test_a_candidate_shows_each_stage_with_its_evidence(servers, benchmark, personas):
    """Stage 4's queries and results with the corroborating ones, Stage 5's
    searches per claim and its refine with the answer's versions, the dedup
    twin — as the stages stored them, in-process against the test servers."""
    llm, search = servers
    manager_api = token_client(personas["manager"])
    manager_api.post(
        f"{base(benchmark)}/sources", {"file": sources_file(SOCKET, CONTACTOR)}
    )
    endpoint = stub_endpoint(llm)
    service = do_save_search_service(
        "searx-test", adapter="searxng", base_url=search.base_url
    )
    template = default_template
    run_here(
        benchmark,
        "generation",
        endpoint=serial_writer(llm),
        template=template("generation"),
    )
    run_here(benchmark, "dedup", threshold=0.9)
    run_here(
        benchmark, "quality", endpoint=endpoint, template=template("quality_check")
    )
    verifying = {"endpoint": endpoint, "search_service": service}
    run_here(
        benchmark,
        "search",
        template=template("search_queries"),
        verifier_template=template("search_verification"),
        **verifying,
    )
    run_here(
        benchmark,
        "deep",
        template=template("deep_claims"),
        verifier_template=template("deep_verification"),
        **verifying,
    )

    refined = Candidate.objects.get(question=REFINED)
    shown = manager_api.get(f"{base(benchmark)}/candidates/{refined.pk}")
    assert shown.status_code == 200, shown.content
    review = shown.json()
    assert (review["reference_answer"], review["version"]) == ("18 A", 2)
    assert review["source"]["reference"] == CONTACTOR
    assert review["source"]["fields"]["industry"] == "electrical_power"
    assert review["post"] is None
    decisions = review["decisions"]
    assert [(d["stage"], d["outcome"]) for d in decisions] == [
        ("generation", "pass"),
        ("dedup", "pass"),
        ("quality", "pass"),
        ("search", "pass"),
        ("deep", "refine"),
    ]
    assert {d["decided_by"] for d in decisions} == {None}
    assert all(d["run"] and d["created_at"] and d["prompt_version"] for d in decisions)

    stage4 = decisions[3]["search"]
    assert stage4["service"] == "searx-test"
    assert stage4["queries"] == queries_for(REFINED)
    assert stage4["supporting"] == [1]
    first = stage4["results"][0]
    assert (first["title"], first["query"], first["rank"]) == (
        f"{CONTACTOR} 全文",
        1,
        1,
    )
    assert {result["query"] for result in stage4["results"]} == {1, 2, 3}
    assert all(result["url"] and result["retrieved_at"] for result in stage4["results"])
    assert decisions[3]["deep"] is None

    stage5 = decisions[4]["deep"]
    assert (stage5["verdict"], stage5["thinking"]) == ("refine", True)
    assert stage5["answer_version"] == 2
    (searched,) = stage5["searched"]
    assert searched["claim"] == f"{REFINED} 9 A"
    assert searched["queries"] == [claim_query(REFINED)]
    assert [r["snippet"] for r in searched["results"]] == ["事实：18 A"] * 2
    assert stage5["claims"] == [
        {"claim": f"{REFINED} 9 A", "status": "contradicted", "basis": "[1]"}
    ]
    assert decisions[4]["reason"] == "Checked against the source and [1]."
    assert [
        (v["version"], v["reference_answer"], v["decision"])
        for v in review["answer_versions"]
    ] == [(1, "9 A", None), (2, "18 A", decisions[4]["id"])]

    repeat = Candidate.objects.get(question=REPEAT)
    twin = Candidate.objects.get(question=ITS_TWIN)
    review = manager_api.get(f"{base(benchmark)}/candidates/{repeat.pk}").json()
    dedup = review["decisions"][1]
    assert (dedup["stage"], dedup["outcome"]) == ("dedup", "reject")
    # The same question but for its punctuation: a twin once normalised.
    assert dedup["duplicate"] == {
        "twin": twin.pk,
        "exact": True,
        "similarity": 1.0,
        "threshold": 0.9,
    }
    assert len(review["decisions"]) == 2  # rejected: no later stage saw it


# -- who decides ----------------------------------------------------------------


def forum_item(benchmark):
    """A converted forum candidate waiting for its expert."""
    post = Source.objects.create(
        benchmark=benchmark,
        kind="forum_post",
        reference="plc-forum 4471",
        text="变频器报 OC 故障怎么办？",
        fields={"forum": "plc-forum", "post_id": 4471, "views": 900, "replies": 12},
        content_hash="forum-4471",
    )
    candidate = make_candidate(post, "变频器 OC 故障的首要原因？")
    candidate.form = {
        "format": "short_answer",
        "question": "变频器 OC 故障的首要原因？",
        "answer": "加速时间过短。",
        "key_points": ["加速时间过短"],
    }
    candidate.save(update_fields=["form"])
    StageDecision.objects.create(
        candidate=candidate,
        stage=Stage.EXPERT,
        outcome=StageDecision.Outcome.PENDING,
        prompt_version="expert",
    )
    return candidate


def flagged(benchmark, question="本表中的额定电压？"):
    candidate = make_candidate(make_source(benchmark, text=question), question)
    StageDecision.objects.create(
        candidate=candidate,
        stage=Stage.DANGLING,
        outcome=StageDecision.Outcome.PENDING,
        reason="dangling reference: 本表",
        prompt_version="dangling v1",
        evidence={"dangling": {"question": [["本表", 0, 2]]}},
    )
    return candidate


def ledger(candidate) -> list[tuple]:
    return list(
        candidate.decisions.order_by("id").values_list(
            "stage", "outcome", "reason", "evidence", "decided_by"
        )
    )


def test_each_person_decides_what_their_page_lets_them(benchmark, personas):
    """The candidate page and the flag review are the managers'; the experts'
    queue the experts' (managers hold every role)."""
    manager, expert, reviewer = (
        token_client(personas[name]) for name in ("manager", "expert", "reviewer")
    )
    forum, flag = forum_item(benchmark), flagged(benchmark)
    url = f"{base(benchmark)}/candidates"

    assert expert.get(f"{url}/{forum.pk}").status_code == 403
    assert reviewer.get(f"{url}/{forum.pk}").status_code == 403
    review = manager.get(f"{url}/{forum.pk}").json()
    assert review["form"]["format"] == "short_answer"
    assert review["post"] == {
        "forum": "plc-forum",
        "post_id": "4471",
        "url": "",
        "title": "",
        "posted_at": "",
        "field": "",
        "views": 900,
        "replies": 12,
        "votes": 0,
        "screenshots": 0,
    }

    before = ledger(flag)
    refused = post(
        expert, f"{url}/{flag.pk}/decision", {"stage": "dangling", "outcome": "pass"}
    )
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Your roles do not allow this."
    assert ledger(flag) == before
    as_reviewer = post(
        reviewer, f"{url}/{forum.pk}/decision", {"stage": "expert", "outcome": "pass"}
    )
    assert as_reviewer.status_code == 403

    verified = post(
        expert, f"{url}/{forum.pk}/decision", {"stage": "expert", "outcome": "pass"}
    )
    assert verified.status_code == 200, verified.content
    assert verified.json()["decided_by"] == "expert"
    assert (verified.json()["stage"], verified.json()["outcome"]) == ("expert", "pass")
    # A lease done, as the experts' queue records one: back finds it.
    assert Lease.objects.filter(user=personas["expert"], status="done").count() == 1

    approved = post(
        manager, f"{url}/{flag.pk}/decision", {"stage": "dangling", "outcome": "pass"}
    )
    assert approved.status_code == 200
    shown = approved.json()
    assert (shown["outcome"], shown["reason"], shown["decided_by"]) == (
        "pass",
        "Approved",
        "manager",
    )
    assert shown["dangling"] == {
        "hits": {"question": [{"phrase": "本表", "start": 0, "end": 2}]},
        "flag": "dangling reference: 本表",
    }


def test_a_bad_decision_is_refused_with_why_and_nothing_changes(benchmark, personas):
    manager = token_client(personas["manager"])
    candidate = flagged(benchmark)
    url = f"{base(benchmark)}/candidates/{candidate.pk}/decision"
    before = ledger(candidate)
    refusals = [
        ({"stage": "dangling", "outcome": "reject"}, "Say why"),
        ({"stage": "dangling", "outcome": "refine"}, "Approve or remove."),
        (
            {"stage": "dangling", "outcome": "pass", "question": "别的问题？"},
            "Only an expert verification takes an edit.",
        ),
        (
            {"stage": "expert", "outcome": "pass"},
            f"Candidate {candidate.pk} has no decision at the “Expert verification”",
        ),
        ({"stage": "quality", "outcome": "pass"}, "stage"),
        ({"stage": "dangling", "outcome": "pass", "verdict": "x"}, "verdict"),
    ]
    for body, why in refusals:
        answer = post(manager, url, body)
        assert answer.status_code == 422, (body, answer.content)
        assert why in answer.json()["detail"], (body, answer.json())
        assert ledger(candidate) == before, body
    assert not Lease.objects.exists()

    elsewhere = post(
        manager,
        f"{BASE}/benchmarks/no-such-bench/construction/candidates/{candidate.pk}"
        "/decision",
        {"stage": "dangling", "outcome": "pass"},
    )
    assert elsewhere.status_code == 404
    assert ledger(candidate) == before

    removed = post(
        manager, url, {"stage": "dangling", "outcome": "reject", "reason": "需要表。"}
    )
    assert removed.status_code == 200
    after = ledger(candidate)
    again = post(manager, url, {"stage": "dangling", "outcome": "pass"})
    assert again.status_code == 409
    assert "already removed by manager" in again.json()["detail"]
    assert ledger(candidate) == after


# -- a script, end to end ---------------------------------------------------------


def wait_for(client, run: dict) -> dict:
    """Poll a stage run as a script would, until it ends (the wait is a hang
    guard, not a speed check)."""
    polled = run

    def ended() -> bool:
        nonlocal polled
        polled = client.get(f"{BASE}/construction/runs/{run['id']}").json()
        return polled["status"] not in ("pending", "running")

    wait_until(ended, 300, f"the {run['stage']} run did not end")
    return polled


def start(client, benchmark, stage, **fields) -> dict:
    started = post(client, f"{base(benchmark)}/stages", {"stage": stage, **fields})
    assert started.status_code == 201, started.content
    return wait_for(client, started.json())


def overall_funnel(client, benchmark) -> list[tuple]:
    funnel = client.get(f"{base(benchmark)}/funnel").json()
    assert funnel["columns"][:7] == [
        "stage",
        "breakdown",
        "group",
        "in",
        "out",
        "rejected",
        "pending",
    ]
    return [(row[0], *row[3:7]) for row in funnel["rows"] if row[1] == "all"]


# stage, in, out, rejected, pending: the funnel's overall rows in their order.
VERIFIED_FUNNEL = [
    ("generation", 9, 9, 0, 0),
    ("dedup", 9, 8, 1, 0),  # the contactor's repeat of the socket's question
    ("quality", 8, 8, 0, 0),
    ("search", 8, 7, 1, 0),  # the bearing's load rating: uncorroborated
    ("deep", 7, 7, 0, 0),  # two answers refined
]
RELEASE_FUNNEL = [
    ("release", 7, 7, 0, 0),  # the whole pool drawn
    ("exact_dedup", 7, 7, 0, 0),
    ("dangling", 7, 6, 1, 0),  # the bearing's 上述, removed by the manager
    ("released", 6, 6, 0, 0),
]


@pytest.mark.worker
def test_a_script_builds_a_benchmark_through_the_api(
    running_worker, benchmark, personas
):
    """Sources in → every stage on the worker, followed → the funnel → one
    candidate's evidence read → the release sample and its checks → the flag
    decided on its candidate → released; nothing but API calls after the
    endpoint and search service are set up (the admin's part)."""
    manager_api = token_client(personas["manager"])
    with (
        OpenAIStub(responder=respond) as llm,
        SearchStub(responder=search_results) as search,
    ):
        stub_endpoint(llm)
        serial_writer(llm)
        do_save_search_service(
            "searx-test", adapter="searxng", base_url=search.base_url
        )
        imported = manager_api.post(
            f"{base(benchmark)}/sources",
            {"file": sources_file(SOCKET, BEARING, CONTACTOR)},
        )
        assert imported.json() == {"added": 3, "already_present": 0, "filtered_out": 0}
        writer = {"endpoint": "stub-writer"}
        verifying = {**writer, "search_service": "searx-test"}
        ran = [
            start(manager_api, benchmark, "generation", endpoint="stub-writer-serial"),
            start(manager_api, benchmark, "dedup", threshold=0.9),
            start(manager_api, benchmark, "quality", **writer),
            start(manager_api, benchmark, "search", **verifying),
            start(manager_api, benchmark, "deep", **verifying),
        ]
        assert [run["status"] for run in ran] == ["complete"] * 5
        assert ran[-1]["progress"]["pending"] == 0
        verified = overall_funnel(manager_api, benchmark)
        assert verified[:5] == VERIFIED_FUNNEL
        assert verified[5:] == [(stage, 0, 0, 0, 0) for stage, *_ in RELEASE_FUNNEL]

        listed = manager_api.get(f"{base(benchmark)}/candidates").json()["candidates"]
        ids = {candidate["question"]: candidate["id"] for candidate in listed}
        review = manager_api.get(f"{base(benchmark)}/candidates/{ids[REFINED]}").json()
        deep = review["decisions"][-1]
        assert (deep["stage"], deep["deep"]["verdict"]) == ("deep", "refine")
        assert review["decisions"][-2]["search"]["supporting"] == [1]
        assert review["reference_answer"] == "18 A"

        pool = post(manager_api, f"{base(benchmark)}/pool")
        assert pool.json()["count"] == 7
        sample = post(manager_api, f"{base(benchmark)}/sample", {"size": 7})
        assert sample.status_code == 200, sample.content
        assert start(manager_api, benchmark, "exact_dedup")["status"] == "complete"
        dangling = start(manager_api, benchmark, "dangling")
        assert dangling["status"] == "attention"
        early = post(manager_api, f"{base(benchmark)}/release")
        assert early.status_code == 422 and "wait for review" in early.json()["detail"]

        (flag,) = manager_api.get(f"{base(benchmark)}/flags").json()
        assert (flag["candidate"], flag["dangling"]) == (
            ids[FLAGGED],
            {"question": [["上述", 0, 2]]},
        )
        flagged_review = manager_api.get(
            f"{base(benchmark)}/candidates/{ids[FLAGGED]}"
        ).json()
        assert flagged_review["decisions"][-1]["dangling"]["hits"] == {
            "question": [{"phrase": "上述", "start": 0, "end": 2}]
        }
        decided = post(
            manager_api,
            f"{base(benchmark)}/candidates/{ids[FLAGGED]}/decision",
            {
                "stage": "dangling",
                "outcome": "reject",
                "reason": "上述 points nowhere.",
            },
        )
        assert decided.status_code == 200, decided.content
        assert manager_api.get(f"{base(benchmark)}/flags").json() == []
        released = post(manager_api, f"{base(benchmark)}/release")
        assert released.json()["count"] == 6

    assert overall_funnel(manager_api, benchmark) == VERIFIED_FUNNEL + RELEASE_FUNNEL
    assert Item.objects.filter(benchmark=benchmark, status="active").count() == 6
    final = manager_api.get(f"{base(benchmark)}/candidates/{ids[REFINED]}").json()
    assert final["item"] == f"CAND-{ids[REFINED]}"
    assert final["decisions"][-1]["stage"] == "released"
    gone = manager_api.get(f"{base(benchmark)}/candidates/{ids[FLAGGED]}").json()
    assert gone["item"] is not None  # its draft stays a draft
    assert Item.objects.get(external_id=gone["item"]).status == "draft"
    assert llm.duplicate_answers() == {}
