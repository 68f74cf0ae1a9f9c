"""Search and deep verification in-process against the two test servers: the
three-queries rule, a failed search or call leaving the candidate pending with
its reason, refinement as a new answer version, the candidate page's evidence
and diff, and what a start refuses."""

import json
import re

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse

from construction import pipeline
from construction.actions import check_start_stage, do_save_search_service
from construction.actions import do_start_stage as start
from construction.models import AnswerVersion, SearchCall, StageRun
from judging.llm.actions import do_save_endpoint
from judging.llm.outputs import (
    OutputError,
    corroboration_validator,
    deep_verdict_validator,
    search_queries_validator,
)
from judging.llm.prompts import default_template
from judging.runs import lifecycle
from tests.construction.factories import make_candidate, make_source
from tests.openai_stub import OpenAIStub, Reply, first_user_text
from tests.search_stub import SearchReply, SearchStub

PASSED = [("dedup", "pass", ""), ("quality", "pass", "")]


@pytest.fixture(autouse=True)
def fast_retries(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 50
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    settings.SEARCH_BACKOFF_BASE_MS = 10
    settings.SEARCH_MAX_ATTEMPTS = 2
    monkeypatch.setenv("STUB_API_KEY", "k")


def queries_of(prompt):
    question = re.search(r"^Question: (.*)$", prompt, re.MULTILINE).group(1)
    return [f"{question} q{n}" for n in (1, 2, 3)]


def respond(body):
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if prompt.startswith("Propose exactly three"):
        return json.dumps({"queries": queries_of(prompt)}, ensure_ascii=False)
    if prompt.startswith("Decide whether"):
        return json.dumps({"verdict": "pass", "supporting": [2], "reason": "[2]."})
    if prompt.startswith("List the checkable claims"):
        question = re.search(r"^Question: (.*)$", prompt, re.MULTILINE).group(1)
        claims = [{"claim": "额定电压 250 V", "queries": [f"{question} 核实"]}]
        return json.dumps({"claims": claims}, ensure_ascii=False)
    if prompt.startswith("Check the candidate claim by claim"):
        claims = [{"claim": "额定电压 250 V", "status": "supported", "basis": "src"}]
        return json.dumps({"claims": claims, "verdict": "keep", "reason": "Holds."})
    return "OK"


def hits(query):
    return [
        (f"https://gb.example/{n}", f"GB/T 2099.1 第 {n} 页", f"额定电压 250 V ({n})")
        for n in range(1, 4)
    ] + [(f"https://{abs(hash(query))}.example/", "其他", "…")]


@pytest.fixture
def servers(db):
    with (
        OpenAIStub(responder=respond) as llm,
        SearchStub(responder=hits) as search,
    ):
        yield llm, search


@pytest.fixture
def setup(servers, benchmark):
    llm, search = servers
    endpoint = do_save_endpoint(
        "writer", base_url=llm.base_url, model="m", api_key_env="STUB_API_KEY"
    )
    service = do_save_search_service(
        "searx", adapter="searxng", base_url=search.base_url
    )
    source = make_source(benchmark, text="插座额定电压不应超过 250 V。")
    return {
        "endpoint": endpoint,
        "service": service,
        "source": source,
        "search": dict(
            endpoint=endpoint,
            template=default_template("search_queries"),
            verifier_template=default_template("search_verification"),
            search_service=service,
        ),
        "deep": dict(
            endpoint=endpoint,
            template=default_template("deep_claims"),
            verifier_template=default_template("deep_verification"),
            search_service=service,
            thinking=False,
        ),
    }


def run_inline(benchmark, stage, **options) -> StageRun:
    """Start a run and do its chunks here instead of on a worker."""
    run = start(benchmark, stage, **options)
    lifecycle.start(pipeline.STAGES, run.pk)
    run.refresh_from_db()
    for run_id, units in pipeline.open_chunks(run):
        pipeline.stage_chunk(run_id, units)
    lifecycle.finish(pipeline.STAGES, run.pk)
    run.refresh_from_db()
    return run


def decision(candidate, stage):
    return candidate.decisions.get(stage=stage)


def test_three_queries_exactly_else_re_asked_then_pending(setup, servers, benchmark):
    llm, search = servers
    two = make_candidate(setup["source"], "两个查询的问题？", PASSED)
    fixed = make_candidate(setup["source"], "先四个后三个的问题？", PASSED)
    replies = {
        "两个查询的问题": iter(
            ['{"queries": ["a", "b"]}', '{"queries": ["a", "b", "c", "d"]}']
        ),
        "先四个后三个的问题": iter(
            ['{"queries": ["w", "x", "y", "z"]}', '{"queries": ["x", "y", "z"]}']
        ),
    }

    def queries_in_turn(body):
        prompt = first_user_text(body)
        for question, queue in replies.items():
            if prompt.startswith("Propose") and question in prompt:
                return next(queue)
        return respond(body)

    llm.responder = queries_in_turn
    run = run_inline(benchmark, "search", **setup["search"])
    assert run.status == StageRun.Status.ATTENTION
    pending = decision(two, "search")
    assert pending.outcome == "pending"
    assert pending.reason == (
        "Search queries: Unparseable reply: Give exactly 3 search queries, not 4."
    )
    asked = [r for r in llm.requests if "两个查询的问题" in str(r.body["messages"])]
    assert len(asked) == 2  # the reply and one re-ask (LLM_PARSE_RETRIES=1)
    assert not any(q in search.queries() for q in ("a", "b", "c", "d"))
    passed = decision(fixed, "search")
    assert passed.outcome == "pass"
    assert passed.evidence["queries"] == ["x", "y", "z"]


def test_evidence_is_the_queries_and_results_deduplicated(setup, servers, benchmark):
    llm, search = servers
    candidate = make_candidate(setup["source"], "插座的额定电压最高是多少？", PASSED)
    run = run_inline(benchmark, "search", **setup["search"])
    assert run.status == StageRun.Status.COMPLETE
    found = decision(candidate, "search")
    assert (found.outcome, found.reason) == ("pass", "[2].")
    assert found.evidence["queries"] == [
        f"{candidate.question} q{n}" for n in (1, 2, 3)
    ]
    urls = [r["url"] for r in found.evidence["results"]]
    # Three shared pages once, then each query's own page.
    assert urls[:3] == [f"https://gb.example/{n}" for n in (1, 2, 3)]
    assert len(urls) == len(set(urls)) == 6
    first = found.evidence["results"][0]
    assert set(first) == {"url", "title", "snippet", "rank", "query", "retrieved_at"}
    assert found.evidence["supporting"] == [2]
    assert found.call is not None and found.model == "m"
    assert search.request_count == 3


def test_a_candidate_is_judged_while_another_still_writes_its_queries(
    setup, servers, benchmark
):
    # Each candidate streams on alone: its searches start when its queries are in
    # and its verifier call when its results are, whatever the others are doing.
    llm, search = servers
    slow = make_candidate(setup["source"], "慢慢写查询的问题？", PASSED)
    fast = make_candidate(setup["source"], "很快写好查询的问题？", PASSED)

    def slow_queries(body):
        reply, prompt = respond(body), first_user_text(body)
        if prompt.startswith("Propose") and slow.question in prompt:
            return Reply(content=reply, delay=1.0)
        return reply

    llm.responder = slow_queries
    run = run_inline(benchmark, "search", **setup["search"])
    assert run.status == StageRun.Status.COMPLETE
    assert decision(slow, "search").outcome == decision(fast, "search").outcome
    assert decision(fast, "search").outcome == "pass"

    def asked(kind, candidate):
        return next(
            r.at
            for r in llm.requests
            if first_user_text(r.body).startswith(kind)
            and candidate.question in first_user_text(r.body)
        )

    # The stub records a request as it replies: the fast one was searched and
    # judged before the slow one's queries (a second late) came back.
    assert asked("Decide whether", fast) < asked("Propose", slow)
    assert llm.request_count == 4 and search.request_count == 6


def test_a_failed_search_leaves_the_candidate_pending_until_it_works(
    setup, servers, benchmark
):
    llm, search = servers
    candidate = make_candidate(setup["source"], "断网时的问题？", PASSED)
    search.script("断网时的问题？ q2", SearchReply(status=502))
    run = run_inline(benchmark, "search", **setup["search"])
    assert run.status == StageRun.Status.ATTENTION
    pending = decision(candidate, "search")
    assert pending.outcome == "pending"
    assert pending.reason == (
        "Search failed for “断网时的问题？ q2”: HTTP 502: Stub error "
        "(gave up after 2 tries)"
    )
    assert len(pending.evidence["queries"]) == 3
    verdicts = [r for r in llm.requests if "Decide whether" in str(r.body)]
    assert verdicts == []  # no verdict without every query's results

    search.clear_scripts()
    asked, sent = llm.request_count, search.request_count
    again = run_inline(benchmark, "search", **setup["search"])
    assert again.total_units == 1 and again.status == StageRun.Status.COMPLETE
    assert decision(candidate, "search").outcome == "pass"
    # The queries call is served from its record, the two answered queries too.
    assert llm.request_count == asked + 1
    assert search.request_count == sent + 1
    assert SearchCall.objects.filter(status="ok").count() == 3
    assert decision(candidate, "search").reason == "[2]."


def test_a_failed_verdict_call_is_pending_never_a_rejection(setup, servers, benchmark):
    llm, _ = servers
    candidate = make_candidate(setup["source"], "判官失联的问题？", PASSED)
    llm.script("Decide whether", Reply(status=500, error_message="down"))
    run_inline(benchmark, "search", **setup["search"])
    pending = decision(candidate, "search")
    assert pending.outcome == "pending"
    assert pending.reason.startswith("HTTP 500")
    assert pending.evidence["results"]  # what it was shown is kept


def test_refine_adds_an_answer_version_shown_with_its_diff(
    setup, servers, benchmark, client_for
):
    llm, _ = servers
    candidate = make_candidate(
        setup["source"], "插座额定电压上限？", [*PASSED, ("search", "pass", "")]
    )
    candidate.reference_answer = "220 V"
    candidate.save(update_fields=["reference_answer"])
    candidate.decisions.filter(stage="search").update(
        evidence={
            "queries": ["GB/T 2099.1 额定电压", "插座 250 V", "插座 额定电压 上限"],
            "results": [
                {
                    "url": "https://std.example.cn/gbt2099",
                    "title": "GB/T 2099.1-2021 全文",
                    "snippet": "额定电压不应超过 250 V",
                    "rank": 1,
                    "query": 1,
                    "retrieved_at": "2026-11-25T10:00:00+00:00",
                }
            ],
            "supporting": [1],
        }
    )
    refined = json.dumps(
        {
            "claims": [
                {"claim": "上限 220 V", "status": "contradicted", "basis": "[1]"}
            ],
            "verdict": "refine",
            "reason": "The source says 250 V.",
            "corrected_answer": "250 V",
        }
    )
    # The verdict call (its prompt holds the searches' evidence), not the
    # claims call before it.
    llm.script("Search evidence:", Reply(content=refined))
    run = run_inline(benchmark, "deep", **setup["deep"])
    assert run.status == StageRun.Status.COMPLETE
    deep = decision(candidate, "deep")
    assert (deep.outcome, deep.reason) == ("refine", "The source says 250 V.")
    assert deep.evidence["answer_version"] == 2
    assert deep.evidence["claims"][0]["status"] == "contradicted"
    candidate.refresh_from_db()
    assert (candidate.reference_answer, candidate.version) == ("250 V", 2)
    assert list(
        AnswerVersion.objects.filter(candidate=candidate).values_list(
            "version", "reference_answer", "decision"
        )
    ) == [(1, "220 V", None), (2, "250 V", deep.pk)]
    # The deep prompt saw Stage 4's evidence and the claim's own results, from
    # the claim's query, recorded like Stage 4's.
    prompt = str(llm.requests[-1].body["messages"])
    assert "https://std.example.cn/gbt2099" in prompt
    assert "Claim 1: 额定电压 250 V" in prompt and "https://gb.example/1" in prompt
    (claim,) = deep.evidence["searched"]
    assert claim["queries"] == [f"{candidate.question} 核实"]
    assert SearchCall.objects.filter(query=claim["queries"][0]).count() == 1

    page = client_for("manager").get(
        reverse("construction:candidate", args=[benchmark.slug, candidate.pk])
    )
    html = page.content.decode()
    assert page.status_code == 200
    for shown in (
        "https://std.example.cn/gbt2099",
        "GB/T 2099.1-2021 全文",
        "额定电压不应超过 250 V",
        "GB/T 2099.1 额定电压",
        "上限 220 V",
        "<del>220</del><ins>250</ins> V",
        "Version 2 (current)",
    ):
        assert shown in html, shown


def test_a_refinement_that_changes_nothing_is_re_asked_then_pending(
    setup, servers, benchmark
):
    llm, _ = servers
    candidate = make_candidate(
        setup["source"], "不变的修订？", [*PASSED, ("search", "pass", "")]
    )
    same = json.dumps(
        {
            "claims": [{"claim": "c", "status": "supported"}],
            "verdict": "refine",
            "reason": "r",
            "corrected_answer": candidate.reference_answer,
        },
        ensure_ascii=False,
    )
    llm.script("Search evidence:", Reply(content=same))
    run_inline(benchmark, "deep", **setup["deep"])
    pending = decision(candidate, "deep")
    assert pending.outcome == "pending"
    assert "equals the reference answer" in pending.reason
    assert not AnswerVersion.objects.exists()


def test_validators():
    three = search_queries_validator(3)
    assert three('{"queries": [" a  b", "c", "d"]}') == {"queries": ["a b", "c", "d"]}
    for reply in (
        '{"queries": ["a", "b"]}',
        '{"queries": ["a", "b", "c", "d"]}',
        '{"queries": ["a", "a", "b"]}',
        '{"queries": ["a", "", "b"]}',
        '{"query": ["a", "b", "c"]}',
    ):
        with pytest.raises(OutputError):
            three(reply)
    verdict = corroboration_validator(4)
    assert verdict('{"verdict": "reject", "reason": "none"}')["supporting"] == []
    for reply in (
        '{"verdict": "pass", "supporting": [], "reason": "r"}',
        '{"verdict": "pass", "supporting": [5], "reason": "r"}',
        '{"verdict": "pass", "supporting": [true], "reason": "r"}',
        '{"verdict": "pass", "supporting": [1]}',
    ):
        with pytest.raises(OutputError):
            verdict(reply)
    deep = deep_verdict_validator("250 V")
    claims = '"claims": [{"claim": "c", "status": "supported"}]'
    assert deep("{" + claims + ', "verdict": "keep", "reason": "ok"}')["claims"] == [
        {"claim": "c", "status": "supported", "basis": ""}
    ]
    for reply in (
        "{" + claims + ', "verdict": "refine", "reason": "r"}',
        "{" + claims + ', "verdict": "fix", "reason": "r"}',
        '{"claims": [], "verdict": "keep", "reason": "r"}',
        '{"claims": [{"claim": "c", "status": "maybe"}], "verdict": "keep", '
        '"reason": "r"}',
    ):
        with pytest.raises(OutputError):
            deep(reply)


def test_a_start_refuses_what_cannot_run(setup, benchmark):
    make_candidate(setup["source"], "q？", PASSED)
    with pytest.raises(ValidationError, match="search verification stage first"):
        check_start_stage(benchmark, "deep", **setup["deep"])
    options = {**setup["search"], "search_service": None}
    with pytest.raises(ValidationError, match="active search service"):
        check_start_stage(benchmark, "search", **options)
    options = {
        **setup["search"],
        "verifier_template": default_template("quality_check"),
    }
    with pytest.raises(ValidationError, match="not search verification verdict"):
        check_start_stage(benchmark, "search", **options)
    assert not StageRun.objects.exists()


def test_run_stage_starts_a_search_run_from_the_command_line(setup, benchmark):
    make_candidate(setup["source"], "q？", PASSED)
    call_command(
        "run_stage",
        "search",
        "--benchmark",
        benchmark.slug,
        "--endpoint",
        "writer",
        "--search-service",
        "searx",
    )
    run = StageRun.objects.get()
    assert run.search_service == setup["service"]
    assert run.prompt_version == (
        "search-queries-default v1 + search-verification-default v1 @ searx"
    )
