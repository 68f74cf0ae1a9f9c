"""A provider's refusal (its content filter: finish_reason `content_filter`, or an
HTTP error naming the filter) is recorded on the call and becomes a response of its
own kind on a binary run: never asked again, not correct in accuracy (study 002
§2.3 divides by all tested questions), left out of robustness (§5.2)."""

import pytest
from django.urls import reverse

from judging.evaluation.grades import choice_outcomes
from judging.evaluation.models import EvaluationRun, Response
from judging.evaluation.pipeline import run_evaluation
from judging.leaderboard.building import build_report
from judging.llm.models import Endpoint, LLMCall
from tests.judging.evaluation_stub import item_number
from tests.judging.factories import make_format_items
from tests.judging.test_binary_runs import (  # noqa: F401 - an autouse fixture
    fast_llm_settings,
    start,
)
from tests.openai_stub import OpenAIStub, Reply, first_user_text


def refusing_responder(body: dict) -> Reply:
    """Item 0 right, item 1 wrong, item 2 filtered in the reply, item 3 refused
    with an HTTP 400 naming the filter, item 4 an ordinary client error."""
    number = item_number(first_user_text(body))
    if number == 2:
        return Reply(content="", finish_reason="content_filter")
    if number == 3:
        return Reply(
            status=400,
            error_message="Input data may contain inappropriate content.",
            error_code="data_inspection_failed",
        )
    if number == 4:
        return Reply(status=400, error_message="Bad request.")
    return Reply(content="答案：B" if number == 0 else "答案：C")


@pytest.fixture
def stub():
    with OpenAIStub(api_key="test-key", responder=refusing_responder) as running:
        yield running


@pytest.fixture
def endpoints(db, stub):
    return {
        name: Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=4,
        )
        for name in ("tested", "keypoint-judge")
    }


def test_provider_refusals_are_their_own_outcome(benchmark, endpoints, stub):
    make_format_items(benchmark, mc=5)
    run = start(benchmark, endpoints)
    run_evaluation(run.pk)
    run.refresh_from_db()
    found = {
        r.item.external_id: r for r in run.responses.select_related("item", "call")
    }
    assert found["mc-002"].call.finish_reason == "content_filter"
    assert found["mc-003"].call.finish_reason == "content_filter"
    assert found["mc-004"].call.finish_reason == ""
    assert found["mc-000"].call.finish_reason == "stop"
    statuses = {key: r.status for key, r in found.items()}
    assert statuses == {
        "mc-000": Response.Status.ANSWERED,
        "mc-001": Response.Status.ANSWERED,
        "mc-002": Response.Status.REFUSED,
        "mc-003": Response.Status.REFUSED,
        "mc-004": Response.Status.FAILED,
    }
    # The refusals are outcomes; only the ordinary failure keeps the run open.
    assert run.status == EvaluationRun.Status.ATTENTION
    assert (run.scored_count, run.failed_count) == (4, 1)
    asked = len(stub.requests)
    run_evaluation(run.pk)
    assert len(stub.requests) == asked + 1  # only mc-004 is asked again

    (metrics,) = build_report(benchmark, resamples=100).metrics
    assert metrics.provider_refused == 2
    assert (metrics.correct, metrics.wrong, metrics.pending) == (1, 1, 1)
    # Correct over all tested questions: 1 of 4 (two provider refusals count as
    # not correct); the earlier figure, over the answers with a verdict, 1 of 2.
    assert metrics.tested == 4
    assert metrics.accuracy == pytest.approx(25.0)
    assert metrics.scored_accuracy == pytest.approx(50.0)
    assert LLMCall.objects.filter(finish_reason="content_filter").count() == 2
    assert choice_outcomes(run).provider_refused == 2


def test_the_run_page_counts_provider_refusals(benchmark, endpoints, stub, client_for):
    make_format_items(benchmark, mc=4)
    run = start(benchmark, endpoints)
    run_evaluation(run.pk)
    page = client_for("manager").get(reverse("judging:evaluation_run", args=[run.pk]))
    assert "Refused by the provider: <strong>2</strong>" in page.content.decode()
