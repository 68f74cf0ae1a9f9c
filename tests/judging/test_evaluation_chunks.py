"""A queued evaluation run is cut into chunk tasks: the run finishes exactly once,
when its last chunk closes, and a redelivered chunk or start pays for nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from judging.evaluation import pipeline
from judging.evaluation.actions import do_retry_pending, do_start_evaluation
from judging.evaluation.models import EvaluationChunk, EvaluationRun
from judging.evaluation.tasks import evaluate_chunk
from judging.llm.models import Endpoint
from judging.runs import lifecycle
from tests.judging.evaluation_stub import clean_responder, evaluation_responder
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub


@pytest.fixture(autouse=True)
def small_chunks(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 50
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    monkeypatch.setattr(pipeline, "CHUNK_ITEMS", 7)


@pytest.fixture
def finishes(monkeypatch):
    """(benchmark, language) of each leaderboard a finishing chunk warmed, in order."""
    warmed = []
    monkeypatch.setattr(
        pipeline,
        "warm_leaderboard",
        lambda benchmark_id, language: warmed.append((benchmark_id, language)),
    )
    return warmed


def test_chunk_parts_are_equal_with_the_first_split_to_go_first_and_last():
    parts = pipeline.chunk_parts(list(range(10)), 4)
    assert parts == [[0, 3], [1, 4, 7], [2, 5, 8], [6, 9]]
    assert pipeline.chunk_parts([5], 4) == [[5]]
    assert pipeline.chunk_parts([], 4) == []
    sizes = [len(part) for part in pipeline.chunk_parts(list(range(2049)), 512)]
    assert sizes == [205, 410, 410, 410, 409, 205]


def queue_run(benchmark, stub, django_capture_on_commit_callbacks):
    endpoints = {
        name: Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=8,
        )
        for name in ("tested", "judge", "sv")
    }
    run = do_start_evaluation(
        benchmark,
        tested=endpoints["tested"],
        judge=endpoints["judge"],
        sv_judge=endpoints["sv"],
        language="zh",
        enqueue=False,
    )
    # What the evaluate_run task does; its chunk tasks are queued on commit.
    with django_capture_on_commit_callbacks() as queued:
        assert pipeline.start_run(run.pk) == 4
    assert len(queued) == 4
    return run


def test_chunked_run_finishes_once_with_the_run_counts(
    benchmark, finishes, django_capture_on_commit_callbacks
):
    make_items(benchmark, 20)
    with OpenAIStub(api_key="test-key", responder=evaluation_responder) as stub:
        run = queue_run(benchmark, stub, django_capture_on_commit_callbacks)
        chunks = list(EvaluationChunk.objects.filter(run=run).order_by("pk"))
        assert sorted(pk for c in chunks for pk in c.response_ids) == sorted(
            run.responses.values_list("pk", flat=True)
        )
        assert [len(c.response_ids) for c in chunks] == [3, 7, 6, 4]
        for chunk in chunks[:3]:
            pipeline.evaluate_chunk(chunk.pk)
            run.refresh_from_db()
            assert run.status == EvaluationRun.Status.RUNNING
        # A start task delivered again while chunks are open queues nothing.
        assert pipeline.start_run(run.pk) == 0
        pipeline.evaluate_chunk(chunks[3].pk)
        assert stub.duplicate_answers() == {}
    run.refresh_from_db()
    assert finishes == [(run.benchmark_id, run.language)]
    assert not EvaluationChunk.objects.filter(run=run).exists()
    # The stub's failures leave four items pending (see test_evaluation_pipeline).
    assert run.status == EvaluationRun.Status.ATTENTION
    assert (run.total_items, run.answered_count, run.failed_count) == (20, 20, 4)
    assert (run.judged_count, run.sv_checked_count) == (18, 16)
    # Redelivered after the finish: no chunk left, the finished run is not started.
    assert pipeline.start_run(run.pk) == 0
    assert pipeline.evaluate_chunk(chunks[0].pk) == {}
    assert finishes == [(run.benchmark_id, run.language)]


def test_redelivered_chunk_pays_for_nothing_again(
    benchmark, finishes, monkeypatch, django_capture_on_commit_callbacks
):
    make_items(benchmark, 20)
    with OpenAIStub(api_key="test-key", responder=clean_responder) as stub:
        run = queue_run(benchmark, stub, django_capture_on_commit_callbacks)
        first, *others = EvaluationChunk.objects.filter(run=run).order_by("pk")

        def killed(chunk):
            raise SystemExit("worker killed before closing its chunk")

        with monkeypatch.context() as patched:
            patched.setattr(pipeline, "close_chunk", killed)
            with pytest.raises(SystemExit):
                pipeline.evaluate_chunk(first.pk)
        asked = len(stub.requests)
        assert asked == 3 * len(first.response_ids)
        # The broker delivers the unacknowledged chunk again: its items are answered
        # and judged, so nothing is asked; this time the chunk closes.
        stats = pipeline.evaluate_chunk(first.pk)
        assert len(stub.requests) == asked
        assert sum(s.made for s in stats.values()) == 0
        for chunk in others:
            pipeline.evaluate_chunk(chunk.pk)
        total = len(stub.requests)
        # And once closed, delivered yet again: nothing at all.
        assert pipeline.evaluate_chunk(first.pk) == {}
        assert len(stub.requests) == total == 3 * 20
        assert stub.duplicate_answers() == {}
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE
    assert (run.answered_count, run.judged_count, run.sv_checked_count) == (20, 20, 20)
    assert finishes == [(run.benchmark_id, run.language)]


def test_sweep_requeues_the_open_chunks_of_a_silent_run(
    benchmark, finishes, django_capture_on_commit_callbacks
):
    """A worker killed mid-evaluation: the sweep queues the run's open chunks again
    once its heartbeat is older than LABELLING_STALE_SECONDS, and only then."""
    make_items(benchmark, 20)
    with OpenAIStub(api_key="test-key", responder=clean_responder) as stub:
        run = queue_run(benchmark, stub, django_capture_on_commit_callbacks)
        first, *others = EvaluationChunk.objects.filter(run=run).order_by("pk")
        pipeline.evaluate_chunk(first.pk)
        with django_capture_on_commit_callbacks() as queued:
            assert lifecycle.resume_stalled(pipeline.EVALUATION) == []
        assert queued == []

        EvaluationRun.objects.filter(pk=run.pk).update(
            heartbeat_at=timezone.now() - timedelta(hours=1)
        )
        with django_capture_on_commit_callbacks() as queued:
            assert lifecycle.resume_stalled(pipeline.EVALUATION) == [run.pk]
        assert len(queued) == len(others)
        for chunk in others:
            pipeline.evaluate_chunk(chunk.pk)
        assert len(stub.requests) == 3 * 20
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE
    assert finishes == [(run.benchmark_id, run.language)]


def test_retry_queues_the_open_chunks_instead_of_doing_nothing(
    benchmark, finishes, monkeypatch, django_capture_on_commit_callbacks
):
    make_items(benchmark, 20)
    with OpenAIStub(api_key="test-key", responder=evaluation_responder) as stub:
        run = queue_run(benchmark, stub, django_capture_on_commit_callbacks)
        first, *others = EvaluationChunk.objects.filter(run=run).order_by("pk")
        pipeline.evaluate_chunk(first.pk)
        queued = []
        monkeypatch.setattr(
            evaluate_chunk, "delay", lambda chunk_id: queued.append(chunk_id)
        )
        with django_capture_on_commit_callbacks(execute=True):
            do_retry_pending(run)
        assert queued == [chunk.pk for chunk in others]
