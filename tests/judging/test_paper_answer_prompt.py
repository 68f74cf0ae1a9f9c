"""The paper's answering protocol: the tested model sees the question alone, as the
one user message with no system prompt; a shipped, versioned template chosen on
the start form like any other."""

import pytest
from django.urls import reverse

from judging.evaluation.actions import do_start_evaluation
from judging.evaluation.pipeline import run_evaluation
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import default_template, install_default_templates
from tests.judging.evaluation_stub import evaluation_responder
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub

PAPER = "industrybench-answer-paper"


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    with OpenAIStub(api_key="test-key", responder=evaluation_responder) as running:
        yield running


@pytest.fixture
def endpoints(db, stub):
    return {
        name: Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
        )
        for name in ("tested", "judge", "sv")
    }


def test_the_tested_model_receives_only_the_question(benchmark, endpoints, stub):
    make_items(benchmark, 3)
    install_default_templates()
    paper = PromptTemplate.objects.get(name=PAPER)
    run = do_start_evaluation(
        benchmark,
        tested=endpoints["tested"],
        judge=endpoints["judge"],
        sv_judge=endpoints["sv"],
        language="zh",
        answer_template=paper,
        limit=2,
        enqueue=False,
    )
    run_evaluation(run.pk)
    asked = [r.body["messages"] for r in stub.requests if r.model == "tested-model"]
    assert asked == [
        [{"role": "user", "content": "[zh] Question 0?"}],
        [{"role": "user", "content": "[zh] Question 1?"}],
    ]
    assert {r.call.template for r in run.responses.select_related("call")} == {paper}
    assert run.answer_template.purpose == PromptTemplate.Purpose.ANSWERING


def test_it_is_versioned_and_the_default_stays(db):
    install_default_templates()
    install_default_templates()
    [paper] = PromptTemplate.objects.filter(name=PAPER)
    assert (paper.version, paper.is_builtin, paper.system_text) == (1, True, "")
    assert paper.note.startswith("IndustryBench answer (paper protocol: question only)")
    assert default_template("answering").name == "answering-default"


def test_the_start_form_offers_it_before_any_run(client_for, benchmark):
    assert not PromptTemplate.objects.exists()
    page = client_for("manager").get(
        reverse("judging:start_evaluation", args=[benchmark.slug])
    )
    paper = PromptTemplate.objects.get(name=PAPER)
    assert (
        f'<option value="{paper.pk}">{PAPER} v1 · IndustryBench answer (paper '
        "protocol: question only)" in page.text
    )
