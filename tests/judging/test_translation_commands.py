"""The start_translation command: bad options refused, a run with --wait against
the OpenAI-protocol stub printing the final counts."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from assay.celery import app
from judging.translation.models import FaithfulnessReview, TranslationRun
from tests.judging.translation_fixtures import add_items, make_endpoints, make_responder
from tests.openai_stub import OpenAIStub, Reply


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    with OpenAIStub(api_key="test-key") as running:
        yield running


@pytest.fixture
def eager():
    # Tasks run in this process as soon as the command's transaction commits.
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def start_translation(*args) -> str:
    out = io.StringIO()
    call_command("start_translation", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--benchmark", "nope"], "No benchmark with slug 'nope'"),
        (["--translator", "nobody"], "No endpoint with name 'nobody'"),
        (["--languages", "de"], "no target language de"),
        (["--threshold", "0"], "from 1 to 5"),
    ],
)
def test_bad_options_are_refused(db, benchmark, stub, args, message):
    add_items(benchmark)
    make_endpoints(stub)
    options = {
        "--benchmark": benchmark.slug,
        "--languages": "en",
        "--translator": "translator",
        "--reviewer": "reviewer",
    }
    options.update(dict(zip(args[::2], args[1::2], strict=True)))
    with pytest.raises(CommandError, match=message):
        start_translation(*[part for pair in options.items() for part in pair])
    assert not TranslationRun.objects.exists()


def test_wait_prints_the_final_counts(transactional_db, benchmark, stub, eager):
    add_items(benchmark)
    stub.responder = make_responder(scores={"motor": 2})
    make_endpoints(stub)
    out = start_translation(
        "--benchmark",
        benchmark.slug,
        "--languages",
        "en,ru",
        "--translator",
        "translator",
        "--reviewer",
        "reviewer",
        "--items",
        "bolt,motor",
        "--wait",
    )
    counts = json.loads(out)
    assert counts["status"] == "complete"
    assert (counts["total"], counts["auto_approved"], counts["flagged"]) == (4, 2, 2)
    run = TranslationRun.objects.get(pk=counts["run"])
    assert run.item_filter == {"external_ids": ["bolt", "motor"]}


def test_the_preset_translates_with_its_prompts(
    transactional_db, benchmark, stub, eager
):
    """--preset industrybench: the item-aligned translation prompt and the
    faithfulness review whose "Score: 4" line and JSON agree."""
    add_items(benchmark)
    plain = make_responder()

    def respond(body):
        if body["model"] == "reviewer-model":
            return Reply(content='Score: 4\n{"score": 4, "reason": "wording"}')
        return plain(body)

    stub.responder = respond
    make_endpoints(stub)
    out = start_translation(
        *("--benchmark", benchmark.slug, "--languages", "en"),
        *("--translator", "translator", "--reviewer", "reviewer"),
        *("--items", "bolt", "--preset", "industrybench", "--wait"),
    )
    counts = json.loads(out)
    assert (counts["status"], counts["flagged"]) == ("complete", 1)
    run = TranslationRun.objects.get(pk=counts["run"])
    assert str(run.translation_template) == "industrybench-translation v1"
    assert str(run.review_template) == "industrybench-faithfulness v1"
    [translator_prompt] = [
        r.body for r in stub.requests if r.model == "translator-model"
    ]
    assert "GB/T 3098.1-2010" in translator_prompt["messages"][-1]["content"]
    assert "do not convert units" in translator_prompt["messages"][-1]["content"]
    review = FaithfulnessReview.objects.get()
    assert (review.score, review.reason) == (4, "wording")
