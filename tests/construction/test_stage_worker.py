"""Sources → generation → dedup → quality on a real Celery worker against the
stub, giving a known funnel; a second run of each stage pays for nothing (no new
request reaches the stub) and changes nothing."""

import pytest

from construction.models import Candidate, Generation, StageDecision, StageRun
from judging.llm.prompts import default_template
from tests.construction.stage_fixtures import (
    import_sources,
    respond,
    run_stage,
    stub_endpoint,
)
from tests.openai_stub import OpenAIStub


def outcomes(stage):
    return sorted(
        StageDecision.objects.filter(stage=stage).values_list(
            "candidate__question", "outcome"
        )
    )


def ledger():
    return (
        list(Candidate.objects.values_list("pk", flat=True)),
        sorted(
            StageDecision.objects.values_list(
                "candidate_id", "stage", "prompt_version", "outcome", "reason"
            )
        ),
        sorted(Generation.objects.values_list("source_id", "status")),
    )


@pytest.mark.worker
def test_stages_give_the_planned_funnel_and_repeat_for_free(
    running_worker, benchmark, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    import_sources(benchmark)
    with OpenAIStub(responder=respond) as stub:
        endpoint = stub_endpoint(stub)
        generation = dict(
            endpoint=endpoint,
            template=default_template("generation"),
            questions_per_source=2,
        )
        quality = dict(endpoint=endpoint, template=default_template("quality_check"))

        run = run_stage(benchmark, "generation", **generation)
        assert run.status == StageRun.Status.ATTENTION  # SRC-3 is pending
        assert Candidate.objects.count() == 4
        pending = Generation.objects.get(status="pending")
        assert "SRC-3" in pending.source.text
        assert pending.reason.startswith("Unparseable reply")
        assert (
            StageDecision.objects.filter(stage="generation", outcome="pass").count()
            == 4
        )

        run = run_stage(benchmark, "dedup", threshold=0.9)
        assert run.status == StageRun.Status.COMPLETE
        (rejected,) = StageDecision.objects.filter(stage="dedup", outcome="reject")
        first = Candidate.objects.order_by("id").first()
        assert rejected.evidence["twin"] == first.pk
        assert rejected.evidence["exact"] is True
        assert f"candidate {first.pk}" in rejected.reason

        run = run_stage(benchmark, "quality", **quality)
        assert run.status == StageRun.Status.COMPLETE
        assert [o for _, o in outcomes("quality")].count("pass") == 2
        (vague,) = StageDecision.objects.filter(stage="quality", outcome="reject")
        assert "模糊" in vague.candidate.question
        assert vague.reason == "Not enough constraints."
        assert vague.call is not None and vague.model == "writer-model"

        before, requests = ledger(), len(stub.requests)
        again = [
            run_stage(benchmark, "generation", **generation),
            run_stage(benchmark, "dedup", threshold=0.9),
            run_stage(benchmark, "quality", **quality),
        ]
        assert len(stub.requests) == requests, "a second run paid for a call"
        assert ledger() == before
        # Only SRC-3's generation was open again, and it is pending again.
        assert [(r.total_units, r.status) for r in again] == [
            (1, "attention"),
            (0, "complete"),
            (0, "complete"),
        ]
        assert again[0].cached_calls == 1
