"""Done-when for search and deep verification: a small industrial source set goes
through the five stages — generation → dedup → quality → search → deep — on a
real Celery worker, against the OpenAI-protocol test server and
the SearxNG-protocol test server, giving the known funnel of
verification_fixtures; then every stage runs again and nothing changes, and
neither server is asked anything."""

import pytest

from benchmark.models import Item
from construction.actions import do_save_search_service
from construction.models import (
    AnswerVersion,
    Candidate,
    SearchCall,
    StageDecision,
    StageRun,
)
from construction.report import funnel_rows
from judging.llm.prompts import default_template
from tests.construction.stage_fixtures import run_stage, stub_endpoint
from tests.construction.verification_fixtures import (
    FUNNEL,
    REFINED,
    respond,
    search_results,
    source_records,
)
from tests.openai_stub import OpenAIStub
from tests.search_stub import SearchStub


def funnel(benchmark):
    return {
        row.stage: (row.entered, row.passed, row.rejected, row.pending)
        for row in funnel_rows(benchmark.pk)
        if row.group == "all" and row.ran
    }


def ledger():
    return (
        sorted(Candidate.objects.values_list("pk", "reference_answer", "version")),
        sorted(
            StageDecision.objects.values_list(
                "candidate_id", "stage", "prompt_version", "outcome", "reason"
            )
        ),
        sorted(AnswerVersion.objects.values_list("candidate_id", "version")),
        SearchCall.objects.count(),
        Item.objects.count(),
    )


@pytest.mark.worker
def test_every_stage_gives_the_known_funnel_and_repeats_for_free(
    running_worker, benchmark, monkeypatch
):
    from construction.actions import do_import_sources

    monkeypatch.setenv("STUB_API_KEY", "k")
    assert do_import_sources(benchmark, source_records(), "sources.jsonl").added == 10
    with (
        OpenAIStub(responder=respond) as llm,
        SearchStub(responder=search_results) as search,
    ):
        endpoint = stub_endpoint(llm)
        service = do_save_search_service(
            "searx-test", adapter="searxng", base_url=search.base_url
        )
        stages = [
            (
                "generation",
                dict(
                    endpoint=endpoint,
                    template=default_template("generation"),
                    questions_per_source=3,
                ),
            ),
            ("dedup", dict(threshold=0.9)),
            (
                "quality",
                dict(endpoint=endpoint, template=default_template("quality_check")),
            ),
            (
                "search",
                dict(
                    endpoint=endpoint,
                    template=default_template("search_queries"),
                    verifier_template=default_template("search_verification"),
                    search_service=service,
                ),
            ),
            (
                "deep",
                dict(
                    endpoint=endpoint,
                    template=default_template("deep_claims"),
                    verifier_template=default_template("deep_verification"),
                    search_service=service,
                ),
            ),
        ]
        runs = [run_stage(benchmark, stage, **options) for stage, options in stages]
        assert [run.status for run in runs] == ["complete"] * 5
        assert funnel(benchmark) == FUNNEL

        # Three queries per candidate that entered search and one per claim of
        # each that entered deep verification, each answered once.
        searched, deep = FUNNEL["search"][0], FUNNEL["deep"][0]
        assert search.request_count == SearchCall.objects.count() == 3 * searched + deep
        # Generation per source, then one call per candidate entering quality,
        # search (its queries), search again (the verdict: all but the one that
        # found nothing) and deep twice (its claims, its verdict).
        assert llm.request_count == 10 + 28 + 25 + 24 + 2 * 21
        # Deep verification asked in thinking mode, by the endpoint's switch;
        # the other stages did not.
        thinking = [
            r.body.get("enable_thinking")
            for r in llm.requests
            if "claim" in str(r.body["messages"][-1]["content"])[:40]
        ]
        assert thinking == [True] * 2 * 21
        assert not any(
            "enable_thinking" in r.body
            for r in llm.requests
            if "claim" not in str(r.body["messages"][-1]["content"])[:40]
        )
        claimed = StageDecision.objects.filter(stage="deep", outcome="refine").first()
        (claim,) = claimed.evidence["searched"]
        assert claim["results"][0]["snippet"].startswith("事实：")
        assert claimed.evidence["thinking"] is True
        # Queries, then a verdict for all but the one that found nothing.
        search_run = runs[3]
        assert search_run.total_units == searched
        decisions = StageDecision.objects.filter(stage="search")
        evidence = decisions.get(outcome="pass", candidate__question__contains="内径")
        assert len(evidence.evidence["queries"]) == 3
        assert len(evidence.evidence["results"]) == 13  # 3 × 5, the own page once
        assert evidence.evidence["supporting"] == [1]
        assert evidence.evidence["results"][0]["url"].startswith(
            "https://std.example.cn/"
        )
        nothing = decisions.get(candidate__question__contains="电气强度")
        assert nothing.outcome == "reject" and nothing.call is None
        assert "No search result" in nothing.reason

        # Refined answers are the candidates' newest versions; release reads them.
        for question, corrected in REFINED.items():
            candidate = Candidate.objects.get(question=question)
            assert (candidate.reference_answer, candidate.version) == (corrected, 2)
            assert candidate.answer_versions.get(version=1).reference_answer != (
                corrected
            )
            assert candidate.decisions.get(stage="deep").outcome == "refine"

        before = ledger()
        counts = (llm.request_count, search.request_count)
        again = [run_stage(benchmark, stage, **options) for stage, options in stages]
        assert (llm.request_count, search.request_count) == counts, (
            "a second run asked a server again"
        )
        assert llm.duplicate_answers() == {}
        assert [run.total_units for run in again] == [0] * 5
        assert all(run.status == StageRun.Status.COMPLETE for run in again)
        assert ledger() == before
        assert funnel(benchmark) == FUNNEL
