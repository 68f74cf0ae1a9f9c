"""Evaluation runs on a binary benchmark against the OpenAI-protocol stub: MC/TF
answers read by rules (no judge call), short answers graded by the key-point judge
(never shown the question; "Score: 1" lines and JSON; malformed verdicts re-asked,
then pending), k trials not collapsed by the request record, the accuracy
leaderboard."""

import pytest

from judging.evaluation.actions import (
    EvaluationActionError,
    do_retry_pending,
    do_start_evaluation,
    pending_responses,
)
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.evaluation.pipeline import run_evaluation
from judging.leaderboard.binary_tables import BINARY_TABLE_ORDER
from judging.leaderboard.building import build_report
from judging.llm.models import Endpoint, LLMCall
from tests.judging.evaluation_stub import item_number
from tests.judging.factories import make_format_items
from tests.openai_stub import OpenAIStub, ReadingModel, Reply, first_user_text

# What the tested model reads in each prompt (tests.openai_stub.ReadingModel):
# MC items 0–3 by the options shown — B (right), C (wrong), A and C (several
# answers), nothing it knows (a refusal); TF 6 true when the statement says
# 16 A, 7 believed 10 A (false, wrong); short answers 8 and 9 with both key
# points or one. Items 4 and 5 get a fixed reply whatever they are asked
# (`fixed_replies`): an answer naming no option, and an empty one; short-010's
# verdict is garbled until a retry.
BINARY_FACTS = {
    "Question 0?": "20 mm",
    "Question 1?": "30 mm",
    "Question 2?": ("10 mm", "30 mm"),
    "Question 6?": "16 A",
    "Question 7?": "10 A",
    "Question 8?": "key point 8a and key point 8b",
    "Question 9?": "key point 9a only",
    "Question 10?": "garbled",
}
binary_responder = ReadingModel(BINARY_FACTS)
GARBLED = "Looks fine to me, mostly."


def fixed_replies(stub) -> None:
    stub.script("Question 4?", Reply(content="It depends on the installation."))
    stub.script("Question 5?", Reply(content=""))
    stub.script(
        "Candidate answer: The answer is garbled.",
        GARBLED,
        GARBLED,
        Reply(content='Score: 1\n{"score": 1, "basis": "ok"}'),
    )


# Replies written straight onto stored responses (grading of stored text): item
# N's by N mod 6 — right, wrong, two answers, a refusal, no answer, empty.
MC_REPLIES = {
    0: "分析如下。答案：B",
    1: "The answer is (C).",
    2: "答案是A和C",
    3: "I cannot answer this question.",
    4: "It depends on the installation.",
    5: "",
}


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
    with OpenAIStub(api_key="test-key", responder=binary_responder) as running:
        fixed_replies(running)
        yield running


@pytest.fixture
def endpoints(db, stub):
    return {
        name: Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=8,
        )
        for name in ("tested", "keypoint-judge")
    }


def start(benchmark, endpoints, sv_judge=None, **kwargs):
    return do_start_evaluation(
        benchmark,
        tested=endpoints["tested"],
        judge=endpoints["keypoint-judge"],
        sv_judge=sv_judge,
        language="zh",
        enqueue=False,
        **kwargs,
    )


def responses(run):
    return {
        r.item.external_id: r
        for r in run.responses.filter(trial=0).select_related("item", "grade")
    }


def test_mc_tf_by_rules_short_answers_by_the_keypoint_judge(benchmark, endpoints, stub):
    make_format_items(benchmark, mc=6, tf=2, short=3)
    run = start(benchmark, endpoints)
    assert run.binary and run.sv_judge_name == "" and run.total_items == 11
    run_evaluation(run.pk)
    run.refresh_from_db()

    found = responses(run)
    graded = {
        key: (r.grade.extracted, r.grade.get_grade_display())
        for key, r in found.items()
        if key.startswith(("mc", "tf"))
    }
    assert graded["mc-000"] == ("B", "Correct")
    assert graded["mc-001"] == ("C", "Wrong")
    assert graded["mc-002"] == ("A, C", "Flagged: several answers")
    assert graded["mc-003"] == ("", "Flagged: refusal")
    assert graded["mc-004"] == ("", "Flagged: no answer found")
    assert found["mc-005"].status == Response.Status.EMPTY
    assert graded["mc-005"] == ("", "Flagged: no answer found")
    assert graded["tf-006"] == ("true", "Correct")
    assert graded["tf-007"] == ("false", "Wrong")
    # No judge call for an MC/TF item, no SV call at all.
    judge_prompts = [
        first_user_text(r.body) for r in stub.requests if "keypoint-judge" in r.model
    ]
    assert len(judge_prompts) == 3 + 1  # short answers, the garbled one re-asked
    # The key-point judge sees reference, key points and answer, not the question.
    assert all("Question" not in prompt for prompt in judge_prompts)
    assert any("1. key point 8a\n2. key point 8b" in p for p in judge_prompts)
    verdicts = {
        j.response.item.external_id: j
        for j in Judgment.objects.filter(response__run=run).select_related(
            "response__item"
        )
    }
    assert set(verdicts) == {"short-008", "short-009", "short-010"}
    assert verdicts["short-008"].kind == Judgment.Kind.KEYPOINT
    assert (verdicts["short-008"].score, verdicts["short-008"].reason) == (
        1,
        "every key point met",
    )
    assert verdicts["short-009"].score == 0
    # A verdict that stays unparseable is pending, never a default 0 or 1.
    assert verdicts["short-010"].status == Judgment.Status.UNPARSEABLE
    assert verdicts["short-010"].score is None
    assert [r.item.external_id for r in pending_responses(run)] == ["short-010"]
    assert run.status == EvaluationRun.Status.ATTENTION
    assert (run.scored_count, run.failed_count, run.sv_checked_count) == (10, 1, 0)

    report = build_report(benchmark, resamples=200)
    assert report.binary and list(report.tables) == list(BINARY_TABLE_ORDER)
    (metrics,) = report.metrics
    # Scored: MC 1 right + 1 wrong, TF 1 + 1, short 1 + 1; 4 flagged, 1 pending.
    assert (metrics.correct, metrics.wrong) == (3, 3)
    assert (metrics.multiple, metrics.refusal, metrics.no_answer) == (1, 1, 2)
    assert metrics.pending == 1
    # Study 002 §2.3: correct over all tested questions (flagged are not correct).
    assert metrics.tested == 10
    assert metrics.accuracy == pytest.approx(30.0)
    assert metrics.scored_accuracy == pytest.approx(50.0)

    # A retry asks the judge afresh; a parseable verdict resolves the item.
    do_retry_pending(run, enqueue=False)
    run_evaluation(run.pk)
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE
    assert Judgment.objects.get(response__item__external_id="short-010").score == 1


def test_trials_are_asked_not_served_from_one_record(benchmark, endpoints, stub):
    make_format_items(benchmark, mc=2)
    run = start(benchmark, endpoints, trials=3)
    assert run.responses.count() == 6 and run.total_items == 6
    run_evaluation(run.pk)
    answers = [r for r in stub.requests if "tested" in r.model]
    # Three trials of each item: three requests each, and three records. The
    # trial number is in the request's identity, not in what is sent, so the
    # provider sees the same question three times and answers it three times.
    assert len(answers) == 6
    assert sorted(stub.duplicate_answers().values()) == [3, 3]
    assert LLMCall.objects.filter(purpose="answering").count() == 6
    assert (
        LLMCall.objects.filter(purpose="answering")
        .values("request_hash")
        .distinct()
        .count()
        == 6
    )
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE
    (metrics,) = build_report(benchmark, resamples=200).metrics
    assert metrics.trials == 3 and metrics.correct == 3 and metrics.wrong == 3


def test_refusals(benchmark, endpoints):
    make_format_items(benchmark, short=1)
    with pytest.raises(EvaluationActionError, match="key-point judge"):
        start(benchmark, {**endpoints, "keypoint-judge": None})
    with pytest.raises(EvaluationActionError, match="Trials"):
        start(benchmark, endpoints, trials=0)
    # Asked for, an SV judge would be dropped without a word: no SV on this scale.
    with pytest.raises(EvaluationActionError, match="no safety-violation judge"):
        start(benchmark, endpoints, sv_judge=endpoints["keypoint-judge"])
    assert not EvaluationRun.objects.exists()


def test_trials_are_for_binary_benchmarks(benchmark, endpoints):
    from tests.judging.factories import make_items

    make_items(benchmark, 2)
    with pytest.raises(EvaluationActionError, match="binary scale"):
        do_start_evaluation(
            benchmark,
            tested=endpoints["tested"],
            judge=endpoints["keypoint-judge"],
            sv_judge=endpoints["keypoint-judge"],
            language="zh",
            trials=3,
            enqueue=False,
        )


@pytest.mark.smoke  # the write has a PostgreSQL path and a portable one
def test_stored_replies_graded_and_regraded_in_bulk(benchmark, endpoints):
    """grade_stored_answers: a first grading (COPY) and a re-grading over existing
    rows (INSERT … ON CONFLICT) give the rules' grades, one row per answer."""
    from judging.evaluation.grading import grade_stored_answers
    from judging.evaluation.models import AnswerGrade

    make_format_items(benchmark, mc=6, tf=2)
    run = start(benchmark, endpoints)
    replies = {**MC_REPLIES, 6: "正确。", 7: "The statement is false."}
    for response in run.responses.select_related("rendering"):
        number = item_number(response.rendering.question)
        response.text = replies[number]
        response.status = "answered" if replies[number] else "empty"
        response.save(update_fields=["text", "status"])
    assert grade_stored_answers(run.responses.all()) == 8
    first = dict(
        AnswerGrade.objects.values_list("response__item__external_id", "grade")
    )
    assert first == {
        "mc-000": 1,
        "mc-001": 0,
        "mc-002": 2,
        "mc-003": 3,
        "mc-004": 4,
        "mc-005": 4,
        "tf-006": 1,
        "tf-007": 0,
    }
    AnswerGrade.objects.filter(response__item__external_id="mc-000").update(grade=0)
    assert grade_stored_answers(run.responses.all()) == 8
    assert AnswerGrade.objects.count() == 8
    assert AnswerGrade.objects.get(response__item__external_id="mc-000").grade == 1
    assert AnswerGrade.objects.get(response__item__external_id="mc-002").extracted == (
        "A, C"
    )
