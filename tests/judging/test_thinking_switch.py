"""How an endpoint switches thinking (request fields, a model id of its own, or no
switch): the pure rule, its validation on every save path, what the stub receives
through the real openai client, the refused start, and the migration that keeps
today's `enable_thinking` for existing endpoints."""

import io
from importlib import import_module

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.evaluation.actions import EvaluationActionError, do_start_evaluation
from judging.evaluation.models import EvaluationRun, Response
from judging.evaluation.pipeline import run_evaluation
from judging.llm.models import Endpoint, LLMCall
from judging.llm.thinking import ThinkingModeUnavailable, thinking_request
from tests.judging.evaluation_stub import evaluation_responder
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub

Switch = Endpoint.ThinkingSwitch


def endpoint(**fields):
    return Endpoint(
        name="probe",
        base_url="https://api.example.com/v1",
        model="probe-chat",
        api_key_env="X_API_KEY",
        **fields,
    )


# -- the pure rule -------------------------------------------------------------------


@pytest.mark.smoke
@pytest.mark.parametrize(
    "on, off",
    [
        ({"enable_thinking": True}, {"enable_thinking": False}),
        ({"reasoning_effort": "high"}, {"reasoning_effort": "minimal"}),
        ({"thinking": {"type": "enabled"}}, {"thinking": {"type": "disabled"}}),
        ({"enable_thinking": True}, {}),
    ],
)
def test_request_fields_switch(on, off):
    probe = endpoint(thinking_switch=Switch.PARAMETER, thinking_on=on, thinking_off=off)
    assert thinking_request(probe, True) == ("probe-chat", on)
    assert thinking_request(probe, False) == ("probe-chat", off)


@pytest.mark.smoke
def test_model_switch():
    probe = endpoint(thinking_switch=Switch.MODEL, thinking_model="probe-reasoner")
    assert thinking_request(probe, True) == ("probe-reasoner", {})
    assert thinking_request(probe, False) == ("probe-chat", {})


@pytest.mark.smoke
@pytest.mark.parametrize(
    "switch, possible, message",
    [
        (Switch.NEVER, False, "never thinks .* cannot answer a thinking run"),
        (Switch.ALWAYS, True, "always thinks .* cannot answer a non-thinking run"),
    ],
)
def test_no_switch_gives_only_its_own_mode(switch, possible, message):
    probe = endpoint(thinking_switch=switch)
    assert thinking_request(probe, possible) == ("probe-chat", {})
    with pytest.raises(ThinkingModeUnavailable, match=message):
        thinking_request(probe, not possible)


@pytest.mark.smoke
@pytest.mark.parametrize(
    "fields, field, message",
    [
        ({"thinking_switch": Switch.PARAMETER}, "thinking_on", "turn thinking on"),
        (
            {
                "thinking_switch": Switch.PARAMETER,
                "thinking_on": {"enable_thinking": True},
                "thinking_off": {"enable_thinking": True},
            },
            "thinking_off",
            "must differ",
        ),
        (
            {"thinking_switch": Switch.PARAMETER, "thinking_on": {"model": "x"}},
            "thinking_on",
            "separate model id",
        ),
        ({"thinking_on": ["enable_thinking"]}, "thinking_on", "JSON object"),
        ({"thinking_switch": Switch.MODEL}, "thinking_model", "model id used"),
        (
            {"thinking_switch": Switch.MODEL, "thinking_model": "probe-chat"},
            "thinking_model",
            "must differ",
        ),
    ],
)
def test_an_incomplete_switch_is_refused(fields, field, message):
    with pytest.raises(ValidationError) as caught:
        endpoint(**fields).clean()
    assert message in " ".join(caught.value.message_dict[field])


# -- through the stub and the real client -------------------------------------------


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
def judges(db, stub):
    return {
        name: Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
            extra_body={"top_k": 20},
        )
        for name in ("judge", "sv")
    }


def make_tested(stub, **fields):
    return Endpoint.objects.create(
        name="tested",
        base_url=stub.base_url,
        model="tested-chat",
        api_key_env="STUB_API_KEY",
        extra_body={"top_k": 20},
        **fields,
    )


def start(benchmark, tested, judges, thinking):
    return do_start_evaluation(
        benchmark,
        tested=tested,
        judge=judges["judge"],
        sv_judge=judges["sv"],
        language="zh",
        thinking=thinking,
        limit=1,
        enqueue=False,
    )


def answer_requests(stub):
    """Bodies the tested model received (judge and SV prompts left out)."""
    return [
        r
        for r in stub.requests
        if r.model.startswith("tested")
        and "Grade the candidate" not in str(r.body)
        and "safety violation" not in str(r.body)
    ]


def test_declared_fields_reach_the_provider_in_each_mode(benchmark, judges, stub):
    make_items(benchmark, 3)
    tested = make_tested(
        stub,
        thinking_switch=Switch.PARAMETER,
        thinking_on={"reasoning_effort": "high"},
        thinking_off={"reasoning_effort": "minimal"},
    )
    for thinking in (True, False):
        run_evaluation(start(benchmark, tested, judges, thinking).pk)
    on, off = (r.body for r in answer_requests(stub))
    assert (on["model"], on["reasoning_effort"], on["top_k"]) == (
        "tested-chat",
        "high",
        20,
    )
    assert (off["model"], off["reasoning_effort"]) == ("tested-chat", "minimal")
    assert "enable_thinking" not in on and "enable_thinking" not in off
    # The judges are asked as their endpoints say, never in the tested run's mode.
    assert all(
        "reasoning_effort" not in r.body
        for r in stub.requests
        if not r.model.startswith("tested")
    )
    # The two modes never share a record, though the question is the same.
    calls = LLMCall.objects.filter(purpose="answering").order_by("pk")
    assert calls.count() == 2
    assert calls[0].request_hash != calls[1].request_hash


def test_a_separate_thinking_model_is_asked_in_thinking_mode(benchmark, judges, stub):
    make_items(benchmark, 3)
    tested = make_tested(
        stub, thinking_switch=Switch.MODEL, thinking_model="tested-reasoner"
    )
    thinking_run = start(benchmark, tested, judges, True)
    run_evaluation(thinking_run.pk)
    run_evaluation(start(benchmark, tested, judges, False).pk)
    assert [r.model for r in answer_requests(stub)] == [
        "tested-reasoner",
        "tested-chat",
    ]
    assert all("reasoning_effort" not in r.body for r in answer_requests(stub))
    response = thinking_run.responses.select_related("call").get()
    assert response.call.model == "tested-reasoner"
    assert response.status == Response.Status.ANSWERED


@pytest.mark.parametrize(
    "switch, thinking", [(Switch.NEVER, True), (Switch.ALWAYS, False)]
)
def test_a_mode_the_endpoint_cannot_give_is_refused_and_creates_nothing(
    benchmark, judges, stub, switch, thinking
):
    make_items(benchmark, 3)
    tested = make_tested(stub, thinking_switch=switch)
    with pytest.raises(EvaluationActionError, match="Endpoint tested .* thinks"):
        start(benchmark, tested, judges, thinking)
    assert not EvaluationRun.objects.exists() and not Response.objects.exists()
    assert stub.requests == []


def test_the_start_form_says_why_the_mode_is_refused(
    client_for, benchmark, judges, stub
):
    make_items(benchmark, 3)
    tested = make_tested(stub)  # no switch: never thinks
    response = client_for("manager").post(
        reverse("judging:start_evaluation", args=[benchmark.slug]),
        {
            "tested": tested.pk,
            "language": "zh",
            "thinking": "on",
            "judge": judges["judge"].pk,
            "sv_judge": judges["sv"].pk,
        },
    )
    assert "The run was not started." in response.text
    assert "Endpoint tested never thinks" in response.text
    assert not EvaluationRun.objects.exists()


def test_a_switch_removed_after_the_start_leaves_answers_failed_with_the_reason(
    benchmark, judges, stub
):
    make_items(benchmark, 3)
    tested = make_tested(
        stub, thinking_switch=Switch.PARAMETER, thinking_on={"enable_thinking": True}
    )
    run = start(benchmark, tested, judges, True)
    Endpoint.objects.filter(pk=tested.pk).update(thinking_switch=Switch.NEVER)
    run_evaluation(run.pk)
    run.refresh_from_db()
    response = run.responses.get()
    assert response.status == Response.Status.FAILED
    assert "never thinks" in response.error
    assert answer_requests(stub) == []
    assert run.status == EvaluationRun.Status.ATTENTION


# -- the endpoint form and command -------------------------------------------------


def test_the_endpoint_form_saves_a_switch_and_shows_what_is_missing(client_for, stub):
    client = client_for("manager")
    data = {
        "name": "deepseek",
        "base_url": stub.base_url,
        "model": "deepseek-chat",
        "api_key_env": "STUB_API_KEY",
        "max_concurrency": 4,
        "extra_body": "{}",
        "thinking_switch": "model",
        "thinking_on": "{}",
        "thinking_off": "{}",
        "thinking_model": "",
        "is_active": "on",
    }
    refused = client.post(reverse("judging:endpoints"), data)
    assert "Give the model id used in thinking mode." in refused.text
    assert not Endpoint.objects.exists()
    client.post(
        reverse("judging:endpoints"), {**data, "thinking_model": "deepseek-reasoner"}
    )
    saved = Endpoint.objects.get()
    assert thinking_request(saved, True) == ("deepseek-reasoner", {})
    assert (saved.thinking_on, saved.thinking_off) == ({}, {})
    page = client.get(reverse("judging:endpoint", args=[saved.pk])).text
    assert "Thinking switch" in page and "deepseek-reasoner" in page


def test_add_endpoint_declares_the_switch(db, stub):
    def add(name, *options):
        call_command(
            "add_endpoint",
            name,
            *("--base-url", stub.base_url, "--api-key-env", "STUB_API_KEY"),
            *options,
            stdout=io.StringIO(),
        )
        return Endpoint.objects.get(name=name)

    gpt = add(
        "gpt",
        *("--model", "gpt-5", "--thinking-on", '{"reasoning_effort": "high"}'),
        *("--thinking-off", '{"reasoning_effort": "minimal"}'),
    )
    assert thinking_request(gpt, False) == ("gpt-5", {"reasoning_effort": "minimal"})
    deepseek = add(
        "deepseek", "--model", "deepseek-chat", "--thinking-model", "deepseek-reasoner"
    )
    assert thinking_request(deepseek, True) == ("deepseek-reasoner", {})
    o3 = add("o3", "--model", "o3", "--thinking-switch", "always")
    assert o3.thinking_switch == Switch.ALWAYS
    assert add("plain", "--model", "m").thinking_switch == Switch.NEVER
    with pytest.raises(CommandError, match="is not JSON"):
        add("bad", "--model", "m", "--thinking-on", "{")
    with pytest.raises(CommandError, match="turn thinking on"):
        add("bad", "--model", "m", "--thinking-switch", "parameter")
    assert not Endpoint.objects.filter(name="bad").exists()


# -- the migration ------------------------------------------------------------------


def test_existing_endpoints_keep_todays_enable_thinking(db):
    migration = import_module("judging.migrations.0014_endpoint_thinking_switch")
    plain = Endpoint.objects.create(
        name="qwen",
        base_url="https://x.example/v1",
        model="qwen3",
        api_key_env="X_API_KEY",
    )
    quiet = Endpoint.objects.create(
        name="qwen-quiet",
        base_url="https://x.example/v1",
        model="qwen3",
        api_key_env="X_API_KEY",
        extra_body={"enable_thinking": False, "top_k": 20},
    )
    migration.declare_todays_switch(django_apps, None)
    plain.refresh_from_db()
    quiet.refresh_from_db()
    # Thinking adds enable_thinking: true; non-thinking sends nothing more than the
    # extra body, as before the switch was declared.
    assert thinking_request(plain, True) == ("qwen3", {"enable_thinking": True})
    assert thinking_request(plain, False) == ("qwen3", {})
    assert quiet.extra_body == {"enable_thinking": False, "top_k": 20}
    assert thinking_request(quiet, True) == ("qwen3", {"enable_thinking": True})
    quiet.clean()  # what the migration declares passes the endpoint's checks
