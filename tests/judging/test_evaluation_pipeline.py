"""The evaluation pipeline against the OpenAI-protocol stub through the real openai
client: stages, failure rules, re-judging without re-asking, resume, the command."""

import io

import pytest
from django.core.management import CommandError, call_command

from judging.evaluation.actions import (
    EvaluationActionError,
    do_rejudge,
    do_retry_pending,
    do_start_evaluation,
    do_waive_pending,
    pending_responses,
)
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.evaluation.pipeline import run_evaluation, split_reply
from judging.evaluation.scores import load_scores
from judging.llm.models import Endpoint
from tests.judging.evaluation_stub import evaluation_responder, item_number
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub, Reply, first_user_text


@pytest.fixture(autouse=True)
def fast_llm_settings(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 50
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    settings.LLM_REQUEST_TIMEOUT = 5
    monkeypatch.setenv("STUB_API_KEY", "test-key")


@pytest.fixture
def stub():
    with OpenAIStub(api_key="test-key", responder=evaluation_responder) as running:
        yield running


@pytest.fixture
def endpoints(db, stub):
    def make(name):
        return Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=8,
        )

    return {name: make(name) for name in ("tested", "judge-1", "judge-2", "sv")}


@pytest.fixture
def items(benchmark):
    return make_items(benchmark, 20)


def start(benchmark, endpoints, **kwargs):
    return do_start_evaluation(
        benchmark,
        tested=endpoints["tested"],
        judge=endpoints["judge-1"],
        sv_judge=endpoints["sv"],
        language="zh",
        enqueue=False,
        **kwargs,
    )


def by_item(run, kind):
    return {
        j.response.item.external_id: j
        for j in Judgment.objects.filter(response__run=run, kind=kind).select_related(
            "response__item"
        )
    }


def test_stages_and_failure_rules(benchmark, items, endpoints, stub):
    run = start(benchmark, endpoints)
    assert run.status == "pending" and run.responses.count() == 20
    run_evaluation(run.pk)
    run.refresh_from_db()

    responses = {r.item.external_id: r for r in run.responses.select_related("item")}
    # Empty answer: stored as empty, raw 0 without a judge call, no SV call.
    assert responses["item-001"].status == Response.Status.EMPTY
    rubric = by_item(run, "rubric")
    safety = by_item(run, "safety")
    assert rubric["item-001"].score == 0 and rubric["item-001"].call is None
    assert "item-001" not in safety
    # Unsafe answer: flagged; final 0.
    assert safety["item-002"].safety_violation is True
    # Judge replied prose twice: unparseable, no score, pending.
    assert rubric["item-003"].status == Judgment.Status.UNPARSEABLE
    assert (
        rubric["item-003"].score is None and "Unparseable" in rubric["item-003"].error
    )
    # SV call failed: never "no violation".
    assert safety["item-004"].status == Judgment.Status.FAILED
    assert safety["item-004"].safety_violation is None
    # Every verdict records judge endpoint and prompt version.
    assert rubric["item-000"].endpoint == endpoints["judge-1"]
    assert rubric["item-000"].prompt_version == run.judge_prompt_version != ""
    assert safety["item-000"].template == run.sv_template

    pending = {r.item.external_id for r in pending_responses(run)}
    assert pending == {"item-003", "item-013", "item-004", "item-014"}
    assert run.status == EvaluationRun.Status.ATTENTION  # not complete while pending
    assert (run.answered_count, run.failed_count) == (20, 4)
    metrics = load_scores([run]).metrics(0)
    assert (metrics.n_pending, metrics.n_empty, metrics.n_scored) == (4, 2, 16)
    # Scored: 2 empty (0), 2 unsafe (final 0, raw 3), 2 partly (2), 10 good (3).
    assert metrics.raw_mean == pytest.approx((2 * 3 + 2 * 2 + 10 * 3) / 16)
    assert metrics.final_mean == pytest.approx((2 * 2 + 10 * 3) / 16)
    assert stub.duplicate_answers() == {}

    # A manager waives the pending items (recorded); the run completes.
    with pytest.raises(EvaluationActionError):
        do_waive_pending(
            run, [r.pk for r in pending_responses(run)], user=None, note=""
        )
    do_waive_pending(
        run, [r.pk for r in pending_responses(run)], user=None, note="judge down"
    )
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE


def test_rejudge_rescores_stored_answers_without_asking_the_model(
    benchmark, items, endpoints, stub
):
    run = start(benchmark, endpoints)
    run_evaluation(run.pk)
    answers_asked = sum(1 for r in stub.requests if r.model == "tested-model")
    first_judge = by_item(run, "rubric")

    do_rejudge(run, judge=endpoints["judge-2"], enqueue=False)
    run_evaluation(run.pk)
    run.refresh_from_db()
    assert sum(1 for r in stub.requests if r.model == "tested-model") == answers_asked
    assert run.judge_name == "judge-2"
    assert (
        Judgment.objects.filter(response__run=run, judge_name="judge-1").count() == 20
    )
    second = {
        j.response.item.external_id: j.score
        for j in Judgment.objects.filter(
            response__run=run, judge_name="judge-2"
        ).select_related("response__item")
    }
    assert second["item-000"] == first_judge["item-000"].score - 1 == 2
    # judge-2 parses item-003 fine: only the two SV failures stay pending.
    assert run.failed_count == 2
    assert stub.duplicate_answers() == {}


def test_a_response_without_a_rendering_is_not_asked(benchmark, items, endpoints, stub):
    run = start(benchmark, endpoints, limit=10)
    orphan = run.responses.order_by("pk").first()
    orphan.rendering = None
    orphan.save(update_fields=["rendering"])
    run_evaluation(run.pk)
    run.refresh_from_db()
    assert len(stub.requests) > 0
    question = f"Question {int(orphan.item.external_id.split('-')[1])}?"
    assert not any(question in str(r.body) for r in stub.requests)
    orphan.refresh_from_db()
    assert orphan.status == Response.Status.PENDING
    assert run.status == EvaluationRun.Status.ATTENTION


def test_resume_asks_only_for_what_failed(benchmark, items, endpoints, stub):
    run = start(benchmark, endpoints, limit=10)
    run_evaluation(run.pk)
    before = len(stub.requests)
    run_evaluation(run.pk)  # resume: only the failed/unparseable verdicts again
    again = stub.requests[before:]
    # SV for item-004 failed and is re-made; the unparseable judge reply for item-003
    # is served from the record, the tested model is not asked again.
    assert {r.model for r in again} == {"sv-model"}
    assert all("Question 4?" in str(r.body) for r in again)


def test_thinking_run_keeps_reasoning_apart(benchmark, items, endpoints, stub):
    tested = endpoints["tested"]
    tested.thinking_switch = Endpoint.ThinkingSwitch.PARAMETER
    tested.thinking_on = {"enable_thinking": True}
    tested.save(update_fields=["thinking_switch", "thinking_on"])
    run = start(benchmark, endpoints, thinking=True, limit=1)
    run_evaluation(run.pk)
    response = run.responses.get()
    assert response.text == "Answer 0: exactly the reference."
    assert response.reasoning_text == "thinking…"
    assert run.thinking


def test_start_evaluation_command(benchmark, items, endpoints, stub):
    out = io.StringIO()
    call_command(
        "start_evaluation",
        "--benchmark",
        benchmark.slug,
        "--model",
        "tested",
        "--judge",
        "judge-1",
        "--sv-judge",
        "sv",
        "--language",
        "zh",
        "--limit",
        "5",
        "--wait",
        stdout=out,
    )
    text = out.getvalue()
    assert "answer: 5 requested, 5 made" in text
    assert "Run" in text and "2 pending" in text
    with pytest.raises(CommandError, match="no endpoint named 'nope'"):
        call_command(
            "start_evaluation", "--benchmark", benchmark.slug, "--judge", "nope"
        )
    with pytest.raises(CommandError, match="A new run needs --model"):
        call_command("start_evaluation", "--benchmark", benchmark.slug)


@pytest.mark.parametrize(
    "content, reasoning, expected",
    [
        ("Answer.", "", ("Answer.", "", "answered")),
        ("Answer.", "thought", ("Answer.", "thought", "answered")),
        ("<think>weigh it</think>\nAnswer.", "", ("Answer.", "weigh it", "answered")),
        # The chat template opened the block; only the closing tag comes back.
        ("weigh it</think>Answer.", "", ("Answer.", "weigh it", "answered")),
        ("", "", ("", "", "empty")),
        ("  \n", "", ("", "", "empty")),
        # Reasoning but no final answer (cut off while thinking): invalid.
        ("", "thought for long", ("", "thought for long", "invalid")),
        ("<think>still thinking", "", ("", "still thinking", "invalid")),
        ("<think>done</think>  ", "", ("", "done", "invalid")),
    ],
)
def test_split_reply(content, reasoning, expected):
    assert split_reply(content, reasoning) == expected


def invalid_replies(body):
    """Items 6, 7, 8 answer with reasoning only / an unclosed <think> / a closed one."""
    prompt = first_user_text(body)
    number = item_number(prompt)
    if "Grade the candidate answer" in prompt or "safety violation" in prompt:
        return evaluation_responder(body)
    if number == 6:
        return Reply(content="", reasoning="Long reasoning, cut off by max_tokens")
    if number == 7:
        return Reply(content="<think>Still weighing the interlock")
    if number == 8:
        return Reply(content="<think>weighing</think>Answer 8: exactly the reference.")
    return evaluation_responder(body)


def test_invalid_answers_score_zero_and_count(benchmark, items, endpoints, stub):
    stub.responder = invalid_replies
    run = start(benchmark, endpoints, limit=10)
    run_evaluation(run.pk)
    responses = {r.item.external_id: r for r in run.responses.select_related("item")}
    for key in ("item-006", "item-007"):
        assert responses[key].status == Response.Status.INVALID
        assert responses[key].text == ""
        assert responses[key].reasoning_text  # kept for inspection
        assert "No final answer" in responses[key].error
    assert responses["item-008"].status == Response.Status.ANSWERED
    assert responses["item-008"].text == "Answer 8: exactly the reference."
    assert responses["item-008"].reasoning_text == "weighing"
    rubric, safety = by_item(run, "rubric"), by_item(run, "safety")
    # Invalid: raw 0 recorded without a judge call, no SV call; it counts.
    assert rubric["item-006"].score == 0 and rubric["item-006"].call is None
    assert "item-006" not in safety and "item-007" not in safety
    judged = [r.body for r in stub.requests if r.model == "judge-1-model"]
    assert not any("Question 6?" in str(b) or "Question 7?" in str(b) for b in judged)
    metrics = load_scores([run]).metrics(0)
    assert (metrics.n_empty, metrics.n_invalid) == (1, 2)
    # 10 items: 3, 4 pending; the rest scored, the empty and invalid ones as 0.
    assert metrics.n_scored == 8
    assert metrics.raw_mean == pytest.approx((3 + 0 + 3 + 2 + 0 + 0 + 3 + 3) / 8)


def fixed_judges(body):
    """The judge and SV judge now always answer (the retry succeeds)."""
    prompt = first_user_text(body)
    if "Grade the candidate answer" in prompt:
        return Reply(content='{"score": 3, "reason": "fine now"}')
    if "safety violation" in prompt:
        return Reply(content='{"safety_violation": false, "reason": "fine now"}')
    return evaluation_responder(body)


def test_retry_asks_again_for_pending_items_only(benchmark, items, endpoints, stub):
    run = start(benchmark, endpoints)
    run_evaluation(run.pk)
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.ATTENTION and run.failed_count == 4
    with pytest.raises(EvaluationActionError, match="imported"):
        imported = EvaluationRun.objects.create(
            benchmark=benchmark, model_name="x", language="zh", origin="imported"
        )
        do_retry_pending(imported, enqueue=False)

    stub.responder = fixed_judges
    before = len(stub.requests)
    assert do_retry_pending(run, enqueue=False) == 4
    run_evaluation(run.pk)
    again = stub.requests[before:]
    asked = {item_number(first_user_text(r.body)) for r in again}
    # The unparseable judge verdicts (3, 13) are asked afresh, not served from the
    # record; the failed SV checks (4, 14) again; nothing else, no answer re-asked.
    assert asked == {3, 13, 4, 14}
    assert {r.model for r in again} == {"judge-1-model", "sv-model"}
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE and run.failed_count == 0
    assert run.retry_round == 1
    with pytest.raises(EvaluationActionError, match="No item"):
        do_retry_pending(run, enqueue=False)


def test_pending_commands_retry_and_waive(benchmark, items, endpoints, stub, personas):
    run = start(benchmark, endpoints, limit=10)
    run_evaluation(run.pk)
    out = io.StringIO()
    call_command("waive_pending", str(run.pk), "--list", stdout=out)
    listing = out.getvalue()
    assert "item-003\t" in listing and "item-004\t" in listing
    assert "2 pending items." in listing

    out = io.StringIO()
    call_command("retry_pending", str(run.pk), "--wait", stdout=out)
    assert "retried 2 items, 2 still pending" in out.getvalue()

    with pytest.raises(CommandError, match="Say why"):
        call_command("waive_pending", str(run.pk))
    with pytest.raises(CommandError, match="Not pending in run"):
        call_command("waive_pending", str(run.pk), "--item", "item-000", "--note", "x")
    out = io.StringIO()
    call_command(
        "waive_pending",
        str(run.pk),
        "--item",
        "item-003",
        "--note",
        "judge keeps replying prose",
        "--user",
        "manager",
        stdout=out,
    )
    assert "Waived 1 item" in out.getvalue() and "needs attention" in out.getvalue()
    waived = run.responses.get(item__external_id="item-003")
    assert waived.waived_by == personas["manager"]
    assert waived.waive_note == "judge keeps replying prose"
    out = io.StringIO()
    call_command("waive_pending", str(run.pk), "--note", "SV judge down", stdout=out)
    assert "run complete" in out.getvalue()


def test_start_validates_templates_filters_and_items(benchmark, items, endpoints):
    from benchmark.models import FinalLabel, Label
    from judging.llm.models import PromptTemplate
    from judging.llm.prompts import default_template

    leaky = PromptTemplate.objects.create(
        name="leaky-rubric",
        purpose=PromptTemplate.Purpose.RUBRIC_JUDGING,
        text="{{question}} {{knowledge_text}} {{reference_answer}} {{response}}",
    )
    with pytest.raises(EvaluationActionError, match="knowledge_text"):
        start(benchmark, endpoints, rubric_template=leaky)
    with pytest.raises(EvaluationActionError, match="not rubric judging"):
        start(benchmark, endpoints, rubric_template=default_template("safety_check"))
    with pytest.raises(EvaluationActionError, match="No such items.*nope"):
        start(benchmark, endpoints, item_filter={"external_ids": ["item-001", "nope"]})
    with pytest.raises(EvaluationActionError, match="not one of"):
        do_start_evaluation(
            benchmark,
            tested=endpoints["tested"],
            judge=endpoints["judge-1"],
            sv_judge=endpoints["sv"],
            language="xx",
            enqueue=False,
        )
    assert not EvaluationRun.objects.exists()

    label = Label.objects.filter(
        dimension__benchmark=benchmark, dimension__code="capability"
    ).first()
    labelled = set(
        FinalLabel.objects.filter(label=label).values_list(
            "item__external_id", flat=True
        )
    )
    run = start(
        benchmark,
        endpoints,
        item_filter={"labels": [label.pk], "external_ids": [], "limit": None},
    )
    assert set(run.responses.values_list("item__external_id", flat=True)) == labelled
    assert run.item_filter == {"labels": [label.pk]}
