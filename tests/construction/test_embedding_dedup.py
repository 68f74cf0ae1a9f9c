"""Dedup through an /v1/embeddings endpoint (the stub's hashed-bigram vectors):
exact twins need no vector, near twins are found on the endpoint's vectors, a
failed call leaves the candidates from it on pending (never passed), a resumed
run asks only for what failed; the run keeps its threshold sweep; one run on a
real Celery worker."""

import numpy as np
import pytest

from construction import pipeline
from construction.actions import do_resume_stage_run
from construction.dedup import SWEEP_THRESHOLDS
from construction.models import StageDecision, StageRun
from judging.llm.actions import do_save_endpoint
from judging.llm.models import LLMCall
from tests.construction.factories import make_candidate, make_source
from tests.construction.stage_fixtures import run_here, run_stage
from tests.openai_stub import OpenAIStub, Reply, embedding_vector

QUESTIONS = {
    "first": "插座的额定电压最高是多少伏？",
    "exact": "插座的额定电压最高是多少伏?",
    "near": "插座的额定电压最高为多少伏？",
    "bolt": "不锈钢螺栓 M8 的材质等级是什么？",
    "broken": "FAIL 接地端子的最小截面积是多少？",
    "after": "外壳防护等级应达到多少？",
    "bolt again": "不锈钢螺栓M8的材质等级是什么?",
}
THRESHOLD = 0.7


def cosine(a: str, b: str) -> float:
    u, v = np.array(embedding_vector(a)), np.array(embedding_vector(b))
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


def test_the_plan_holds_on_the_stubs_vectors():
    """Only "near" is at least THRESHOLD similar to an earlier question."""
    names = [n for n in QUESTIONS if n not in ("exact", "bolt again")]
    for i, later in enumerate(names):
        for earlier in names[:i]:
            similar = cosine(QUESTIONS[earlier], QUESTIONS[later]) >= THRESHOLD
            assert similar == ((earlier, later) == ("first", "near")), (earlier, later)


@pytest.fixture
def pool(benchmark):
    source = make_source(benchmark, text="GB/T 2099.1 插座")
    return {
        name: make_candidate(source, question) for name, question in QUESTIONS.items()
    }


def embedder(stub, **fields):
    return do_save_endpoint(
        "embedder",
        base_url=stub.base_url,
        model="embed-model",
        api_key_env="STUB_API_KEY",
        max_concurrency=4,
        **fields,
    )


def dedup(candidate):
    return candidate.decisions.get(stage="dedup")


@pytest.fixture(autouse=True)
def fast_llm(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 20
    settings.LLM_MAX_ATTEMPTS = 2
    monkeypatch.setenv("STUB_API_KEY", "k")


def test_a_failed_embedding_leaves_candidates_pending_and_resume_asks_only_for_it(
    benchmark, pool
):
    with OpenAIStub() as stub:
        stub.script("FAIL", Reply(status=500, error_message="embedder down"))
        endpoint = embedder(stub)
        run = run_here(benchmark, "dedup", endpoint=endpoint, threshold=THRESHOLD)
        assert run.prompt_version == "embed:embed-model@0.70"
        assert run.status == StageRun.Status.ATTENTION
        assert dedup(pool["first"]).outcome == "pass"
        assert dedup(pool["exact"]).reason == (
            f"Exact duplicate of candidate {pool['first'].pk}"
        )
        near = dedup(pool["near"])
        assert near.outcome == "reject"
        assert near.evidence["twin"] == pool["first"].pk
        assert near.evidence["similarity"] == pytest.approx(
            cosine(QUESTIONS["first"], QUESTIONS["near"]), abs=1e-4
        )
        assert near.model == "embed-model"
        assert near.prompt_version == run.prompt_version
        assert dedup(pool["bolt"]).outcome == "pass"
        broken = dedup(pool["broken"])
        assert broken.outcome == "pending"
        assert broken.reason.startswith("No embedding: HTTP 500: embedder down")
        after = dedup(pool["after"])
        assert after.outcome == "pending"
        assert after.reason.startswith(
            f"Waits for the embedding of candidate {pool['broken'].pk}"
        )
        # An exact twin needs no vector, even after the failure.
        assert dedup(pool["bolt again"]).outcome == "reject"
        assert run.sweep == []  # no sweep on a partial comparison
        calls = LLMCall.objects.filter(purpose="embedding")
        # Distinct questions only: five, of which one failed.
        assert calls.count() == 5
        assert calls.filter(status="failed").count() == 1
        assert run.input_tokens == sum(
            c.input_tokens for c in calls.filter(status="ok")
        )

        stub.reset()
        do_resume_stage_run(run)
        for run_id, units in pipeline.open_chunks(run):
            pipeline.stage_chunk(run_id, units)
        run.refresh_from_db()
        assert run.status == StageRun.Status.COMPLETE
        assert stub.request_count == 1  # only the failed text; the rest from record
        assert dedup(pool["broken"]).outcome == "pass"
        assert dedup(pool["after"]).outcome == "pass"
        assert dedup(pool["near"]).outcome == "reject"  # kept as it was
        assert not StageDecision.objects.filter(outcome="pending").exists()
        assert [row["threshold"] for row in run.sweep] == list(SWEEP_THRESHOLDS)
        at = {row["threshold"]: row for row in run.sweep}
        # Five distinct questions; at 0.70 one of them joins another.
        assert at[0.7]["clusters"] == 4 and at[0.7]["near_duplicates"] == 1
        assert at[0.7]["exact_duplicates"] == 2
        assert at[0.5]["clusters"] <= at[0.7]["clusters"] <= at[0.95]["clusters"]
        ids = {c.pk for c in pool.values()}
        assert all(
            a in ids and b in ids for row in run.sweep for a, b, _ in row["pairs"]
        )


def test_the_version_names_the_model_and_threshold_and_tfidf_stays_default(
    benchmark, pool
):
    run = run_here(benchmark, "dedup", threshold=0.9)
    assert run.prompt_version == "char-tfidf-2-4@0.90"
    assert dedup(pool["first"]).model == "char-tfidf-2-4"
    assert len(run.sweep) == len(SWEEP_THRESHOLDS)


@pytest.mark.worker
def test_an_embeddings_dedup_run_on_a_worker(running_worker, benchmark, pool):
    with OpenAIStub() as stub:
        endpoint = embedder(stub)
        run = run_stage(benchmark, "dedup", endpoint=endpoint, threshold=THRESHOLD)
        assert run.status == StageRun.Status.COMPLETE
        outcomes = {name: dedup(c).outcome for name, c in pool.items()}
        assert outcomes == {
            "first": "pass",
            "exact": "reject",
            "near": "reject",
            "bolt": "pass",
            "broken": "pass",
            "after": "pass",
            "bolt again": "reject",
        }
        assert stub.request_count == 5
        assert len(run.sweep) == len(SWEEP_THRESHOLDS)
        # The same version again asks nothing and changes nothing.
        again = run_stage(benchmark, "dedup", endpoint=endpoint, threshold=THRESHOLD)
        assert again.status == StageRun.Status.COMPLETE and again.total_units == 0
        assert stub.request_count == 5
