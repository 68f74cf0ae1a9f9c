"""A real Celery worker, killed with SIGKILL in the middle of a translation run and
started again: the run completes, every rendering is translated and reviewed exactly
once, and nothing recorded before the kill is paid for again."""

import json
import re
import time

import pytest

from benchmark.models import Rendering
from judging.llm.models import LLMCall
from judging.translation.models import (
    FaithfulnessReview,
    TranslationRun,
    TranslationTask,
)
from tests.judging.labelling_fixtures import wait_until
from tests.judging.translation_fixtures import add_item, make_endpoints, start
from tests.openai_stub import OpenAIStub, Reply, first_user_text, request_key

ITEMS = 30
LANGUAGES = ("en", "ru")


def source(number: int) -> tuple[str, str]:
    return f"第{number}号：额定电压10千伏电缆的截面积？", f"{number}0平方毫米。"


def respond(body: dict) -> Reply:
    number = int(re.search(r"第(\d+)号", first_user_text(body)).group(1))
    if body["model"] == "translator-model":
        text = {
            "question": f"No. {number}: cross-section of a 10 kV cable?",
            "answer": f"{number}0 mm².",
        }
    else:
        text = {"score": 5, "reason": "faithful"}
    return Reply(content=json.dumps(text))


@pytest.mark.worker
def test_killed_worker_resumes_translation_without_duplicates(
    killable_worker, benchmark, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    items = [add_item(benchmark, f"T-{n:03d}", *source(n)) for n in range(ITEMS)]
    total = ITEMS * len(LANGUAGES)
    with OpenAIStub(latency=0.1, max_in_flight=4, responder=respond) as stub:
        translator, reviewer = make_endpoints(stub)
        translator.max_concurrency = reviewer.max_concurrency = 2
        translator.save()
        reviewer.save()
        killable_worker.start()
        run = start(benchmark, translator, reviewer, languages=LANGUAGES)

        wait_until(
            lambda: LLMCall.objects.exclude(status="sent").count() >= total // 3,
            60,
            "the worker never started",
        )
        killable_worker.kill()
        killed_at = time.monotonic()
        before_restart = {
            request_key({"model": call.model, "messages": call.messages})
            # answered: a "sent" record was claimed, maybe in flight, at the kill
            for call in LLMCall.objects.exclude(status="sent")
        }
        assert 0 < len(before_restart) < 2 * total, "the kill was not mid-run"

        killable_worker.start()

        def finished():
            run.refresh_from_db()
            return run.status == TranslationRun.Status.COMPLETE

        wait_until(finished, 90, "the run did not complete after the restart")

        answered_after = [
            r for r in stub.requests if r.status == 200 and r.at > killed_at
        ]
        assert [r for r in answered_after if r.key in before_restart] == [], (
            "a recorded call was paid for again"
        )

    assert (run.total_tasks, run.translated, run.reviewed) == (total, total, total)
    assert (run.auto_approved, run.flagged, run.failed) == (total, 0, 0)
    assert not run.tasks.exclude(stage=TranslationTask.Stage.REVIEWED).exists()
    assert LLMCall.objects.count() == 2 * total
    assert FaithfulnessReview.objects.filter(run=run).count() == total
    machine = Rendering.objects.filter(
        item__in=items, origin=Rendering.Origin.MACHINE
    ).values_list("item_id", "language")
    assert sorted(machine) == sorted(
        (item.pk, language) for item in items for language in LANGUAGES
    ), "a rendering was translated twice or not at all"
