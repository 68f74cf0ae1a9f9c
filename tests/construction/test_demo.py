"""The simulated construction run that `load_demo` adds: every stage in the
ledger (search verification with its queries and results, deep verification
with a refined answer), a release sample by capability × industry, its
checks and the reviewed flags, a release, a half-answered stage audit — and
nothing more the second time."""

import io
import itertools

import pytest
from django.core.management import call_command
from django.urls import reverse

from benchmark.management.commands import load_demo
from benchmark.models import Benchmark, Item
from construction.audits.actions import do_open_audit
from construction.audits.read import stage_audits
from construction.demo import industrial as demo
from construction.models import (
    AnswerVersion,
    AuditAnswer,
    Candidate,
    Generation,
    SearchCall,
    Source,
    Stage,
    StageAudit,
    StageDecision,
    StageRun,
)
from construction.report import funnel_report, pending_flags
from tests.benchmark.importing_helpers import DATA


def run_load_demo():
    call_command(
        "load_demo",
        "--allow-without-debug",
        "--items",
        str(DATA / "generic.jsonl"),
        stdout=io.StringIO(),
    )


def snapshot():
    return (
        sorted(
            StageDecision.objects.values_list(
                "candidate_id", "stage", "prompt_version", "outcome", "reason"
            )
        ),
        sorted(Candidate.objects.values_list("pk", "item_id")),
        sorted(StageRun.objects.values_list("pk", "stage", "status", "total_units")),
        sorted(Candidate.objects.values_list("pk", "reference_answer", "version")),
        sorted(AnswerVersion.objects.values_list("candidate_id", "version")),
        sorted(SearchCall.objects.values_list("query", "results")),
        sorted(AuditAnswer.objects.values_list("item_id", "reviewer_id", "agrees")),
        StageAudit.objects.count(),
        Source.objects.count(),
        Item.objects.count(),
    )


@pytest.fixture
def construction_demo(db, monkeypatch):
    seeder = "construction.demo.industrial.seed"
    assert seeder in load_demo.DEMO_SEEDERS
    monkeypatch.setattr(load_demo, "DEMO_SEEDERS", [seeder])
    run_load_demo()
    return Benchmark.objects.get(slug=demo.CONSTRUCTION_SLUG)


def test_every_implemented_stage_has_decisions(construction_demo):
    benchmark = construction_demo
    assert benchmark.is_demo
    sources = benchmark.sources.all()
    assert sources.count() == len(demo.demo_sources()) >= 30
    kinds = {source.kind for source in sources}
    assert kinds == {"gbt_standard", "product_record"}
    runs = {run.stage: run for run in benchmark.stage_runs.all()}
    assert set(runs) == {
        "generation",
        "dedup",
        "quality",
        "search",
        "deep",
        "exact_dedup",
        "dangling",
    }
    for stage in ("dedup", "search", "deep", "exact_dedup"):
        assert runs[stage].status == StageRun.Status.COMPLETE
    # A pending generation, a pending quality call and flags: each needs attention.
    for stage in ("generation", "quality", "dangling"):
        assert runs[stage].status == StageRun.Status.ATTENTION
    (pending,) = Generation.objects.filter(status="pending")
    assert pending.source.reference.startswith("GB/T 191")

    report = funnel_report(benchmark.pk)
    overall = {row.stage: row for row in report.overall}
    assert all(row.ran for row in report.overall)
    assert overall["generation"].entered == Candidate.objects.count() > 80
    # Each stage takes exactly what the one before let through.
    stages = [
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
    assert [row.stage for row in report.overall] == stages
    for before, stage in itertools.pairwise(stages):
        assert overall[stage].entered == overall[before].passed
    assert overall["dedup"].rejected == 3
    assert overall["quality"].rejected >= 8 and overall["quality"].pending == 1
    assert report.reasons["dedup"][0] == ("Exact duplicate of candidate N", 2)
    assert ("Duplicate of candidate N (similarity N)", 1) in report.reasons["dedup"]
    assert ("问题缺少限定条件，存在多个正确答案", 3) in report.reasons["quality"]
    assert (overall["search"].rejected, overall["search"].pending) == (4, 0)
    assert (demo.NO_RESULT, 1) in report.reasons["search"]
    assert (
        sum(
            reason.startswith("No source corroborates ")
            for reason, _ in report.reasons["search"]
        )
        == 3
    )
    assert (overall["deep"].rejected, overall["deep"].pending) == (2, 0)
    # The sample is drawn from the verified pool; its checks remove the two
    # dangling references the manager removed.
    assert (overall["release"].entered, overall["release"].passed) == (
        overall["deep"].passed,
        demo.RELEASE_SIZE,
    )
    assert overall["dangling"].rejected == 2
    assert report.released.total == overall["released"].passed == demo.RELEASE_SIZE - 2
    assert {share.name for share in report.released.kinds if share.count} == {
        "GB/T standard",
        "Product record",
    }


def test_the_sample_flags_were_reviewed_before_release(construction_demo):
    assert not pending_flags(construction_demo.pk).exists()
    decided = list(
        StageDecision.objects.filter(
            stage=Stage.DANGLING, decided_by__username="manager"
        ).order_by("id")
    )
    assert [d.outcome for d in decided] == ["pass", "reject", "reject"]
    for decision in decided:
        assert decision.evidence["flag"].startswith("dangling reference")
    # Only the sample was checked, and a removed candidate stays a draft.
    sampled = StageDecision.objects.filter(stage=Stage.RELEASE, outcome="pass")
    checked = StageDecision.objects.filter(stage=Stage.DANGLING)
    assert set(checked.values_list("candidate", flat=True)) == set(
        sampled.values_list("candidate", flat=True)
    )
    removed = Candidate.objects.filter(pk__in=[d.candidate_id for d in decided[1:]])
    assert {c.item.status for c in removed} == {Item.Status.DRAFT}


def test_the_sample_keeps_capability_by_industry_shares(construction_demo):
    from construction.release import candidate_strata
    from construction.sampling import allocate

    pool = list(
        Candidate.objects.filter(decisions__stage=Stage.RELEASE).select_related("item")
    )
    strata = candidate_strata(pool)
    assert len(strata) == len(pool)
    drawn = set(
        StageDecision.objects.filter(stage=Stage.RELEASE, outcome="pass").values_list(
            "candidate", flat=True
        )
    )
    names = sorted(set(strata.values()))
    sizes = [sum(1 for v in strata.values() if v == name) for name in names]
    taken = [sum(1 for pk in drawn if strata[pk] == name) for name in names]
    assert list(allocate(sizes, demo.RELEASE_SIZE)) == taken
    for size, n in zip(sizes, taken, strict=True):
        assert abs(n - size * demo.RELEASE_SIZE / len(pool)) < 1


def test_released_items_name_their_candidate(construction_demo):
    candidate = Candidate.objects.filter(item__status="active").first()
    item = candidate.item
    assert item.benchmark == construction_demo
    assert item.external_id == f"CAND-{candidate.pk}"
    event = item.events.get(kind="created")
    assert event.after["candidate"] == candidate.pk
    assert item.events.get(kind="status").after == {"status": "active"}
    labels = {f.dimension.code: f for f in item.final_labels.all()}
    assert labels["industry"].provenance == "imported"
    assert labels["capability"].label.code in demo.CAPABILITY_OF_KIND.values()


def test_load_demo_twice_changes_nothing(construction_demo):
    before = snapshot()
    run_load_demo()
    assert snapshot() == before
    assert Benchmark.objects.filter(slug=demo.CONSTRUCTION_SLUG).count() == 1


def test_search_decisions_keep_their_queries_and_results(construction_demo):
    decisions = StageDecision.objects.filter(stage="search")
    assert decisions.count() > 50
    for decision in decisions:
        queries = decision.evidence["queries"]
        assert len(queries) == 3
        results = decision.evidence["results"]
        urls = [result["url"] for result in results]
        assert len(urls) == len(set(urls)) <= 15
        for result in results:
            assert result["url"].startswith("https://")
            assert result["title"] and result["snippet"]
            assert 1 <= result["rank"] <= 5 and 1 <= result["query"] <= 3
            assert result["retrieved_at"][:4] == str(decision.run.started_at.year)
        if decision.outcome == "pass":
            assert decision.evidence["supporting"] == [1]
            assert decision.candidate.knowledge_text[:40] in results[0]["snippet"]
    # Each query is recorded once, as the search client records it.
    queries = {q for d in decisions for q in d.evidence["queries"]}
    # Deep verification searched each claim as well (Stage 5 as published).
    deep = StageDecision.objects.filter(stage="deep")
    claims = {
        q for d in deep for claim in d.evidence["searched"] for q in claim["queries"]
    }
    assert claims and not claims & queries
    assert {d.evidence["thinking"] for d in deep} == {True}
    calls = SearchCall.objects.filter(service__name="searxng-demo")
    assert calls.count() == len(queries | claims)
    assert not calls.exclude(status="ok").exists()
    assert not calls.first().service.is_active
    (nothing,) = decisions.filter(reason=demo.NO_RESULT)
    assert nothing.evidence["results"] == []


def test_deep_verification_refines_two_answers_and_removes_two(construction_demo):
    refined = StageDecision.objects.filter(stage="deep", outcome="refine")
    assert refined.count() == 2
    for decision in refined:
        candidate = decision.candidate
        first, second = candidate.answer_versions.order_by("version")
        assert candidate.version == 2 == decision.evidence["answer_version"]
        assert candidate.reference_answer == second.reference_answer
        assert first.reference_answer != second.reference_answer
        assert second.decision == decision
        assert decision.evidence["claims"][0]["status"] == "contradicted"
    removed = StageDecision.objects.filter(stage="deep", outcome="reject")
    assert {d.reason.split(" ")[0] for d in removed} == {"GB/T", "The"}
    # A refined candidate goes on to the release sample with its new answer.
    assert (
        StageDecision.objects.filter(
            stage="release", candidate__in=refined.values("candidate")
        ).count()
        == 2
    )


def test_an_audit_of_the_quality_check_is_half_answered(construction_demo):
    (audit,) = StageAudit.objects.filter(benchmark=construction_demo)
    assert (audit.stage, audit.sample_size) == ("quality", demo.AUDIT_SIZE)
    assert audit.items.count() == demo.AUDIT_SIZE
    answers = AuditAnswer.objects.filter(item__audit=audit)
    assert answers.count() == demo.AUDIT_ANSWERED
    assert {a.reviewer.username for a in answers} == {"reviewer"}
    assert answers.filter(agrees=False).count() == 2
    (row,) = stage_audits(construction_demo.pk, "quality")
    assert row["progress"].left == demo.AUDIT_SIZE - demo.AUDIT_ANSWERED
    measure = row["measure"]
    assert measure.precision.n >= 1 and measure.recall.n >= 1


def test_a_stage_left_out_of_the_simulation_is_not_run(db, monkeypatch):
    kept = [s for s in demo.SIMULATED_STAGES if s.stage not in ("search", "deep")]
    monkeypatch.setattr(demo, "SIMULATED_STAGES", tuple(kept))
    demo.seed()
    report = funnel_report(Benchmark.objects.get(slug=demo.CONSTRUCTION_SLUG).pk)
    overall = {row.stage: row for row in report.overall}
    assert not overall["search"].ran and not overall["deep"].ran
    assert overall["release"].entered == overall["quality"].passed
    # Without the demo reviewer, no audit is opened.
    assert not StageAudit.objects.exists()


def test_demo_pages_have_content(construction_demo, client_for):
    client = client_for("manager")
    slug = construction_demo.slug
    funnel = client.get(reverse("construction:funnel", args=[slug]))
    assert "答案无法从来源原文得出" in funnel.content.decode()
    review = client.get(reverse("construction:review", args=[slug]))
    assert review.context["flag"] is None  # every flag was reviewed
    rejected = StageDecision.objects.filter(stage="quality", outcome="reject").first()
    page = client.get(
        reverse("construction:candidate", args=[slug, rejected.candidate_id])
    )
    assert rejected.reason in page.content.decode()
    searched = StageDecision.objects.filter(
        stage="search", outcome="reject", reason__startswith="No source"
    ).first()
    page = client.get(
        reverse("construction:candidate", args=[slug, searched.candidate_id])
    ).content.decode()
    assert searched.reason in page
    for result in searched.evidence["results"]:
        assert result["url"] in page
    stage = client.get(reverse("construction:stage", args=[slug, "quality"]))
    assert stage.context["audits"][0]["measure"].precision.n >= 1


def test_an_audit_of_search_shows_queries_and_results(construction_demo, client_for):
    run = construction_demo.stage_runs.get(stage="search")
    audit = do_open_audit(
        construction_demo, "search", run.prompt_version, size=3, seed=0
    )
    item = audit.items.select_related("decision").first()
    page = client_for("reviewer").post(
        reverse("construction:audit", args=[audit.pk]), {"action": "next"}
    )
    html = page.content.decode()
    assert page.status_code == 200
    for query in item.decision.evidence["queries"]:
        assert query in html
    for result in item.decision.evidence["results"]:
        assert result["url"] in html and result["snippet"] in html
    assert "&#x27;rank&#x27;" not in html  # no raw dictionary
