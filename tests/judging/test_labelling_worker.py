"""A real Celery worker, killed with SIGKILL in the middle of a labelling run and
started again: the run completes with no duplicate results and no request answered
twice for anything that had been recorded before the kill."""

import json
import re
import time

import pytest

from benchmark.models import Item, Rendering
from judging.labelling.actions import do_start_labelling
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.llm.actions import do_save_endpoint
from judging.llm.models import LLMCall
from judging.llm.prompts import default_template
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import OpenAIStub, first_user_text, request_key

ITEMS = 40
ANNOTATORS = ("w-a", "w-b", "w-c")
CAPABILITIES = ("fault_diagnosis", "quality_metrology", "engineering_calculation")


def annotate(body):
    number = int(re.search(r"Question: W-(\d+)", first_user_text(body)).group(1))
    model_index = ANNOTATORS.index(body["model"].removesuffix("-model"))
    # Every third item gets a dissenting first annotator.
    capability = CAPABILITIES[(number + (model_index == 0 and number % 3 == 0)) % 3]
    return json.dumps(
        {"capability": capability, "industry": "energy_storage", "rationale": "r"}
    )


@pytest.mark.worker
def test_killed_worker_resumes_without_duplicates(
    killable_worker, benchmark, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    for number in range(ITEMS):
        item = Item.objects.create(benchmark=benchmark, external_id=f"W-{number:03d}")
        Rendering.objects.create(
            item=item,
            language="zh",
            question=f"W-{number:03d} 问题",
            answer="答案",
            origin=Rendering.Origin.SOURCE,
        )
    with OpenAIStub(latency=0.15, max_in_flight=6, responder=annotate) as stub:
        annotators = [
            do_save_endpoint(
                name,
                base_url=stub.base_url,
                model=f"{name}-model",
                api_key_env="STUB_API_KEY",
                max_concurrency=2,
            )
            for name in ANNOTATORS
        ]
        killable_worker.start()
        run = do_start_labelling(benchmark, annotators, default_template("labelling"))
        total = ITEMS * len(ANNOTATORS)

        def recorded():
            return LLMCall.objects.exclude(status="sent").count()

        wait_until(lambda: recorded() >= total // 4, 60, "the worker never started")
        killable_worker.kill()
        killed_at = time.monotonic()
        before_restart = {
            request_key({"model": call.model, "messages": call.messages})
            # answered: a "sent" record was claimed, maybe in flight, at the kill
            for call in LLMCall.objects.exclude(status="sent")
        }
        assert 0 < len(before_restart) < total, "the kill was not mid-run"

        killable_worker.start()

        def finished():
            run.refresh_from_db()
            return run.consensus_at is not None

        wait_until(finished, 90, "the run did not complete after the restart")

        answered_after = [
            r for r in stub.requests if r.status == 200 and r.at > killed_at
        ]
        repeated = [r for r in answered_after if r.key in before_restart]
        assert repeated == [], "a recorded call was paid for again"
        # Only calls in flight at the kill (six at most) or answered in the last
        # flush interval (0.5 s: six per 0.15 s) before it may be asked twice.
        assert sum(n - 1 for n in stub.duplicate_answers().values()) <= 6 + 20

    assert run.status == LabellingRun.Status.COMPLETE
    assert (run.done_calls, run.failed_calls, run.pending_calls) == (total, 0, 0)
    assert LLMCall.objects.count() == total
    assert AnnotatorLabel.objects.filter(run=run).count() == total * 2
    assert LabelConsensus.objects.filter(run=run).count() == ITEMS * 2
    majority = LabelConsensus.objects.filter(
        run=run, dimension__code="capability", outcome="majority"
    ).count()
    assert majority == len(range(0, ITEMS, 3))
