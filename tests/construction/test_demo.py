"""The simulated construction run that `load_demo` adds: every implemented stage in
the ledger, flags waiting for review, a release — and nothing more the second
time."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from benchmark.management.commands import load_demo
from benchmark.models import Benchmark, Item
from construction import demo
from construction.models import (
    Candidate,
    Generation,
    Source,
    Stage,
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
        Source.objects.count(),
        Item.objects.count(),
    )


@pytest.fixture
def construction_demo(db, monkeypatch):
    assert "construction.demo.seed" in load_demo.DEMO_SEEDERS
    monkeypatch.setattr(load_demo, "DEMO_SEEDERS", ["construction.demo.seed"])
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
    assert set(runs) == {"generation", "dedup", "quality", "post"}
    assert runs["dedup"].status == StageRun.Status.COMPLETE
    # A pending generation, a pending quality call and flags: each needs attention.
    for stage in ("generation", "quality", "post"):
        assert runs[stage].status == StageRun.Status.ATTENTION
    (pending,) = Generation.objects.filter(status="pending")
    assert pending.source.reference.startswith("GB/T 191")

    report = funnel_report(benchmark.pk)
    overall = {row.stage: row for row in report.overall}
    assert not overall["search"].ran and not overall["deep"].ran
    assert overall["generation"].entered == Candidate.objects.count() > 80
    # Each stage takes exactly what the one before let through.
    assert overall["dedup"].entered == overall["generation"].passed
    assert overall["quality"].entered == overall["dedup"].passed
    assert overall["post"].entered == overall["quality"].passed
    assert overall["dedup"].rejected == 3
    assert overall["quality"].rejected >= 8 and overall["quality"].pending == 1
    assert report.reasons["dedup"][0] == ("Exact duplicate of candidate N", 2)
    assert ("Duplicate of candidate N (similarity N)", 1) in report.reasons["dedup"]
    assert ("问题缺少限定条件，存在多个正确答案", 3) in report.reasons["quality"]
    assert report.released.total == demo.RELEASE_SIZE
    assert {share.name for share in report.released.kinds if share.count} == {
        "GB/T standard",
        "Product record",
    }


def test_flags_wait_for_review_and_two_were_decided(construction_demo):
    waiting = pending_flags(construction_demo.pk)
    assert waiting.count() == 4
    for flag in waiting:
        assert "dangling" in flag.evidence
        assert flag.reason.startswith("dangling reference: ")
    decided = StageDecision.objects.filter(
        stage=Stage.POST, decided_by__username="manager"
    ).order_by("id")
    assert [d.outcome for d in decided] == ["pass", "reject"]
    assert decided[1].evidence["flag"].startswith("dangling reference")
    # A flagged candidate is released only once approved.
    released = Candidate.objects.filter(item__isnull=False)
    assert not released.filter(pk__in=waiting.values("candidate_id")).exists()


def test_released_items_name_their_candidate(construction_demo):
    candidate = Candidate.objects.filter(item__isnull=False).first()
    item = candidate.item
    assert item.benchmark == construction_demo
    assert item.external_id == f"CAND-{candidate.pk}"
    event = item.events.get(kind="created")
    assert event.after["candidate"] == candidate.pk


def test_load_demo_twice_changes_nothing(construction_demo):
    before = snapshot()
    run_load_demo()
    assert snapshot() == before
    assert Benchmark.objects.filter(slug=demo.CONSTRUCTION_SLUG).count() == 1


def test_a_later_stage_joins_the_simulation_with_one_entry(db, monkeypatch):
    def search(run, pool, plan):
        return [
            ("reject", "搜索结果与参考答案不符", {})
            if i % 10 == 0
            else ("pass", "", {})
            for i, _ in enumerate(pool)
        ]

    dedup, quality, post = demo.SIMULATED_STAGES
    monkeypatch.setattr(
        demo,
        "SIMULATED_STAGES",
        (
            dedup,
            quality,
            # An LLM stage names its prompt purpose (search's own, once it has
            # one); the quality prompt stands in here.
            demo.SimulatedStage(Stage.SEARCH, "quality_check", search),
            post,
        ),
    )
    demo.seed()
    report = funnel_report(Benchmark.objects.get(slug=demo.CONSTRUCTION_SLUG).pk)
    overall = {row.stage: row for row in report.overall}
    assert overall["search"].ran
    assert overall["search"].entered == overall["quality"].passed
    assert overall["search"].rejected > 0
    assert overall["post"].entered == overall["search"].passed


def test_demo_pages_have_content(construction_demo, client_for):
    client = client_for("manager")
    slug = construction_demo.slug
    funnel = client.get(reverse("construction:funnel", args=[slug]))
    assert "答案无法从来源原文得出" in funnel.content.decode()
    review = client.get(reverse("construction:review", args=[slug]))
    assert review.context["flag"]["waiting"] == 4
    assert '<mark class="hl">' in review.content.decode()
    rejected = StageDecision.objects.filter(stage="quality", outcome="reject").first()
    page = client.get(
        reverse("construction:candidate", args=[slug, rejected.candidate_id])
    )
    assert rejected.reason in page.content.decode()
