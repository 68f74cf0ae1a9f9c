"""Multiple-choice options reach the tested model (issue 25, items 1 and 3).

Every run here is answered by `ReadingModel`, a test server that reads the prompt
it is sent: it names the option whose text carries what it believes, so a prompt
without the options gets a refusal, not a lucky letter."""

import pytest

from benchmark.models import Item, Rendering
from judging.demo import lpfqa as lpfqa_demo
from judging.evaluation.actions import EvaluationActionError, do_start_evaluation
from judging.evaluation.models import EvaluationRun
from judging.evaluation.pipeline import run_evaluation
from judging.leaderboard.building import build_report
from judging.llm import answer_prompts
from judging.llm.models import Endpoint, PromptTemplate
from tests.openai_stub import OpenAIStub, ReadingModel, first_user_text


@pytest.fixture(autouse=True)
def fast_llm_settings(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 50
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    settings.LLM_REQUEST_TIMEOUT = 5
    monkeypatch.setenv("STUB_API_KEY", "test-key")


def endpoint_on(stub) -> Endpoint:
    return Endpoint.objects.create(
        name="tested",
        base_url=stub.base_url,
        model="tested-model",
        api_key_env="STUB_API_KEY",
        max_concurrency=8,
    )


def demo_mc(language="zh"):
    """The demo benchmark and its MC items with their `language` renderings."""
    benchmark = lpfqa_demo.seed()
    renderings = list(
        Rendering.objects.filter(
            item__benchmark=benchmark,
            item__format=Item.Format.MULTIPLE_CHOICE,
            language=language,
            is_current=True,
        )
        .select_related("item")
        .order_by("item__external_id")
    )
    return benchmark, renderings


def test_mc_run_on_the_lpfqa_demo_scores_the_share_the_model_knows(db):
    """The reading model knows the right option of 5 of the demo's MC items and
    believes a wrong one of the others: the run scores exactly 5 / n.

    On the code before issue 25 the tested model was sent the question alone
    (`{"question": …}`), so this test failed twice over (run once to see): no
    prompt held the "A. 640 MPa" lines, and the server, seeing no options,
    replied with the value it believes ("The answer is 800 MPa."), which names no
    letter — every grade was 4 (flagged: no answer found), 0 correct of n instead
    of 5."""
    benchmark, renderings = demo_mc()
    n = len(renderings)
    assert n >= 8
    facts = {}
    for index, rendering in enumerate(renderings):
        right = "ABCDEFG".index(rendering.item.correct_options[0])
        belief = rendering.options[right if index < 5 else (right + 1) % 4]
        # The belief names one option of the item, so the letter is unambiguous.
        assert sum(belief in option for option in rendering.options) == 1
        facts[rendering.question] = belief
    model = ReadingModel(facts)
    with OpenAIStub(api_key="test-key", responder=model) as stub:
        run = do_start_evaluation(
            benchmark,
            tested=endpoint_on(stub),
            judge=None,
            sv_judge=None,
            language="zh",
            item_filter={"external_ids": [r.item.external_id for r in renderings]},
            enqueue=False,
        )
        run_evaluation(run.pk)
        prompts = [first_user_text(r.body) for r in stub.requests]
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.COMPLETE
    assert len(prompts) == n and set(model.subjects_seen) == set(facts)
    # Each prompt shows its own item's options under the answer key's letters.
    for rendering in renderings:
        (prompt,) = [p for p in prompts if rendering.question in p]
        for letter, option in zip("ABCD", rendering.options, strict=True):
            assert f"\n{letter}. {option}\n" in prompt + "\n"
        assert "选项" in prompt  # the Chinese per-format prompt
    grades = dict(
        run.responses.values_list("item__external_id", "grade__grade").order_by()
    )
    assert sorted(grades.values()) == [0] * (n - 5) + [1] * 5
    (metrics,) = build_report(benchmark, runs=[run], resamples=50).metrics
    assert metrics.correct == 5 and metrics.wrong == n - 5
    assert metrics.accuracy == pytest.approx(100 * 5 / n)


def test_a_prompt_that_cannot_show_the_options_is_refused(db):
    benchmark, renderings = demo_mc()
    question_only = PromptTemplate.objects.create(
        name="question-only",
        version=1,
        purpose=PromptTemplate.Purpose.ANSWERING,
        text="{{question}}",
    )
    endpoint = Endpoint.objects.create(
        name="tested", base_url="http://127.0.0.1:9/v1", model="m"
    )
    with pytest.raises(EvaluationActionError) as refused:
        do_start_evaluation(
            benchmark,
            tested=endpoint,
            judge=None,
            sv_judge=None,
            language="zh",
            answer_template=question_only,
            item_filter={"external_ids": [r.item.external_id for r in renderings]},
            enqueue=False,
        )
    message = str(refused.value)
    assert "would not see the options" in message and "{{options}}" in message
    assert "LP-MC-01" in message
    assert not EvaluationRun.objects.filter(origin="pipeline").exists()

    # An item whose question lists its options itself may be asked so.
    embedded = renderings[0]
    embedded.question += "\n" + "\n".join(
        f"{letter}. {option}"
        for letter, option in zip("ABCD", embedded.options, strict=True)
    )
    embedded.save(update_fields=["question"])
    run = do_start_evaluation(
        benchmark,
        tested=endpoint,
        judge=None,
        sv_judge=None,
        language="zh",
        answer_template=question_only,
        item_filter={"external_ids": [embedded.item.external_id]},
        enqueue=False,
    )
    assert run.answer_templates == {}


@pytest.mark.parametrize(
    "question",
    [
        "Which bore?\nA. 20 mm\nB. 25 mm\nC. 52 mm\nD. 15 mm",
        "Which bore?\nA) 20 mm\nB) 25 mm\nC) 52 mm\nD) 15 mm",
        "内径是多少？\n（A）20 mm\n（B）25 mm\n（C）52 mm\n（D）15 mm",
        "内径是多少？\nA、20 mm\nB、25 mm\nC、52 mm\nD、15 mm",
        "内径是多少？\n(A) 20 mm\n(B) 25 mm",
    ],
)
def test_options_written_into_the_question_are_not_shown_twice(question):
    assert answer_prompts.embeds_options(question)
    assert (
        answer_prompts.options_text(["20 mm", "25 mm", "52 mm", "15 mm"], question)
        == ""
    )


@pytest.mark.parametrize(
    "question",
    [
        "What does class A. insulation mean?",  # "A." inside a sentence
        "Which is right?\nB. 25 mm\nC. 52 mm",  # does not start at A
        "A. only one option line",
        "Plain question?",
    ],
)
def test_questions_without_their_options(question):
    assert not answer_prompts.embeds_options(question)
    assert answer_prompts.options_text(["x", "y", "z", "w"], question) == (
        "A. x\nB. y\nC. z\nD. w"
    )


def test_answer_variables_per_format_and_language():
    mc = answer_prompts.answer_variables(
        item_format="multiple_choice",
        multiple_answers=False,
        question="Q?",
        options=["a", "b", "c", "d", "e"],
        language="en",
    )
    assert mc["options"] == "A. a\nB. b\nC. c\nD. d\nE. e"
    assert "(A–E)" in mc["answer_format"] and "one correct" in mc["answer_format"]
    several = answer_prompts.answer_variables(
        item_format="multiple_choice",
        multiple_answers=True,
        question="Q?",
        options=["a", "b", "c", "d"],
        language="zh",
    )
    assert "所有正确选项" in several["answer_format"]
    tf = answer_prompts.answer_variables(
        item_format="true_false",
        multiple_answers=False,
        question="S.",
        options=[],
        language="ru",
    )
    assert tf == {"question": "S.", "options": "", "answer_format": tf["answer_format"]}
    assert "true or false" in tf["answer_format"]
