"""The IndustryBench preset: its prompts (Assay's wording of the paper's protocol,
versioned builtins), judge sets resolved per item language, the verdict lines of
its judges, the start form, the command, the run page and the paper manifest."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.paper.collect import paper_set
from judging.evaluation.actions import (
    EvaluationActionError,
    check_start_evaluation,
    do_rejudge,
    do_start_evaluation,
)
from judging.evaluation.models import EvaluationRun, Judgment
from judging.evaluation.pipeline import run_evaluation
from judging.llm.actions import do_save_prompt_version
from judging.llm.models import PromptTemplate
from judging.llm.outputs import OutputError, safety_validator, score_validator
from judging.llm.prompts import (
    JUDGE_SETS,
    PRESETS,
    default_template,
    install_default_templates,
    render_messages,
)
from judging.translation.actions import check_start_translation
from tests.api.helpers import BASE, token_client
from tests.judging.evaluation_stub import preset_responder
from tests.judging.factories import make_items
from tests.openai_stub import OpenAIStub

PRESET_NAMES = [
    "industrybench-judge-zh",
    "industrybench-judge-en",
    "industrybench-sv",
    "industrybench-translation",
    "industrybench-faithfulness",
]


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    with OpenAIStub(api_key="test-key", responder=preset_responder) as running:
        yield running


@pytest.fixture
def endpoints(db, stub):
    from judging.llm.models import Endpoint

    return {
        name: Endpoint.objects.create(
            name=name,
            base_url=stub.base_url,
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
        )
        for name in ("tested", "judge", "sv", "translator", "reviewer")
    }


def start(benchmark, endpoints, language, **prompts):
    return do_start_evaluation(
        benchmark,
        tested=endpoints["tested"],
        judge=endpoints["judge"],
        sv_judge=endpoints["sv"],
        language=language,
        limit=3,
        enqueue=False,
        **prompts,
    )


def preset_prompts() -> dict:
    templates = PRESETS["industrybench"].templates()
    return {
        "answer_template": templates["answer"],
        "sv_template": templates["sv"],
        "judge_set": "industrybench",
    }


# The templates


def test_the_preset_templates_are_versioned_builtins(db):
    install_default_templates()
    install_default_templates()
    templates = {
        t.name: t for t in PromptTemplate.objects.filter(name__in=PRESET_NAMES)
    }
    assert sorted(templates) == sorted(PRESET_NAMES)
    for template in templates.values():
        assert (template.version, template.is_builtin) == (1, True)
        # A team holding the released prompts must know these are not them.
        assert "not the paper's verbatim prompt" in template.note
        assert "follows the protocol the paper describes" in template.note
    assert templates["industrybench-judge-zh"].language == "zh"
    assert templates["industrybench-judge-en"].language == "en"
    assert "评分标准" in templates["industrybench-judge-zh"].text
    assert "{{knowledge_text}}" in templates["industrybench-sv"].text
    # The judge never sees the source text (the paper's judge protocol).
    for name in ("industrybench-judge-zh", "industrybench-judge-en"):
        assert "knowledge_text" not in templates[name].text
    # The defaults of each purpose stay the defaults.
    assert default_template("rubric_judging").name == "rubric-judging-default"
    assert default_template("safety_check").name == "safety-check-default"
    assert default_template("translation").name == "translation-default"


def test_each_preset_template_fits_its_stage(benchmark, endpoints):
    make_items(benchmark, 2)
    prompts = preset_prompts()
    judges = JUDGE_SETS["industrybench"].resolve()
    for judge in judges.values():
        check_start_evaluation(
            benchmark,
            tested=endpoints["tested"],
            judge=endpoints["judge"],
            sv_judge=endpoints["sv"],
            language="zh",
            thinking=False,
            answer_template=prompts["answer_template"],
            rubric_template=judge,
            sv_template=prompts["sv_template"],
            item_filter={},
        )
    templates = PRESETS["industrybench"].templates()
    check_start_translation(
        benchmark,
        ["en"],
        endpoints["translator"],
        templates["translation"],
        endpoints["reviewer"],
        templates["faithfulness"],
        approve_threshold=5,
        item_filter={},
    )


def test_the_chinese_judge_renders_with_the_item(db):
    install_default_templates()
    judge = PromptTemplate.objects.get(name="industrybench-judge-zh")
    messages = render_messages(
        judge,
        {
            "question": "额定压力？",
            "reference_answer": "1.6 MPa",
            "response": "1.6 MPa",
        },
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "问题：额定压力？" in messages[1]["content"]
    assert "评分：" in messages[1]["content"]


def test_a_newer_version_of_a_preset_template_is_what_the_set_uses(
    benchmark, endpoints, personas
):
    """The released text added as version 2 is picked by the judge set from then
    on; version 1 stays, and so does the run that used it."""
    make_items(benchmark, 2)
    first = start(benchmark, endpoints, "zh", judge_set="industrybench")
    run_evaluation(first.pk)
    v1 = PromptTemplate.objects.get(name="industrybench-judge-zh")
    released = do_save_prompt_version(
        v1,
        system_text=v1.system_text,
        text=v1.text + "\n（发布版文本）",
        note="the paper's released prompt",
        user=personas["manager"],
    )
    assert released.version == 2
    resolved = JUDGE_SETS["industrybench"].resolve()
    assert resolved["zh"] == released
    assert resolved["*"].name == "industrybench-judge-en"
    install_default_templates()
    assert PromptTemplate.objects.filter(name="industrybench-judge-zh").count() == 2
    second = start(benchmark, endpoints, "zh", judge_set="industrybench")
    assert second.judge_set_versions["zh"] == "industrybench-judge-zh v2"
    first.refresh_from_db()
    assert first.judge_prompt_version == "industrybench-judge-zh v1"


# The verdict lines the preset's judges write


@pytest.mark.parametrize(
    ("reply", "score", "reason"),
    [
        ('评分：2\n{"score": 2, "reason": "缺少单位"}', 2, "缺少单位"),
        ("**评分**：3\n理由：与参考答案一致。", 3, "理由：与参考答案一致。"),
        ('Score: 1\n```json\n{"score": 1, "reason": "partly"}\n```', 1, "partly"),
        ('{"score": 0, "reason": "wrong"}', 0, "wrong"),
    ],
)
def test_rubric_replies_in_either_language_parse(reply, score, reason):
    assert score_validator(0, 3)(reply) == {"score": score, "reason": reason}


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ('评分：3\n{"score": 2, "reason": "x"}', "give one score"),
        ("Score: 4", "between 0 and 3"),
        ("Score: 2.5", "an integer"),
        ("评分：很好", "no JSON object"),
        ('Score: 2\n{"score": 2', "no JSON object"),
    ],
)
def test_rubric_replies_that_disagree_or_overflow_are_no_verdict(reply, message):
    with pytest.raises(OutputError, match=message):
        score_validator(0, 3)(reply)


def test_safety_replies_name_the_violated_clause():
    verdict = safety_validator(
        '违规：是\n{"safety_violation": true, "clause": "GB/T 150 第4.2条", '
        '"reason": "超过额定温度。"}'
    )
    assert verdict == {
        "safety_violation": True,
        "clause": "GB/T 150 第4.2条",
        "reason": "Violated clause: GB/T 150 第4.2条. 超过额定温度。",
    }
    assert safety_validator(
        'Violation: no\n{"safety_violation": false, "clause": "", "reason": "fine"}'
    ) == {"safety_violation": False, "reason": "fine"}
    assert safety_validator("安全违规：否\n与来源一致。") == {
        "safety_violation": False,
        "reason": "与来源一致。",
    }
    with pytest.raises(OutputError, match="both violation and no violation"):
        safety_validator('Violation: yes\n{"safety_violation": false}')


# Runs judged by the set


def test_a_zh_item_gets_the_chinese_judge_and_an_en_item_the_english_one(
    benchmark, endpoints, stub
):
    make_items(benchmark, 3)
    zh_run = start(benchmark, endpoints, "zh", **preset_prompts())
    en_run = start(benchmark, endpoints, "en", **preset_prompts())
    for run in (zh_run, en_run):
        run_evaluation(run.pk)
        run.refresh_from_db()
        assert run.status == EvaluationRun.Status.COMPLETE, run.status

    zh_judge = PromptTemplate.objects.get(name="industrybench-judge-zh")
    en_judge = PromptTemplate.objects.get(name="industrybench-judge-en")
    versions = {"zh": "industrybench-judge-zh v1", "*": "industrybench-judge-en v1"}
    for run, judge, score in ((zh_run, zh_judge, 2), (en_run, en_judge, 3)):
        assert (run.judge_set, run.judge_set_versions) == ("industrybench", versions)
        assert run.rubric_template == judge
        rubric = Judgment.objects.filter(response__run=run, kind="rubric")
        assert {(j.template, j.prompt_version, j.score) for j in rubric} == {
            (judge, f"{judge.name} v1", score)
        }
        assert {j.call.template for j in rubric} == {judge}

    judge_prompts = [
        r.body["messages"] for r in stub.requests if r.model == "judge-model"
    ]
    chinese = [m for m in judge_prompts if "请对照参考答案" in m[-1]["content"]]
    english = [m for m in judge_prompts if "Safety is checked" in m[-1]["content"]]
    assert len(chinese) == len(english) == 3
    assert all("[zh] Question" in m[-1]["content"] for m in chinese)
    assert all("[en] Question" in m[-1]["content"] for m in english)
    # The judge never sees the source text; the SV judge does, and names the clause.
    assert not any("Knowledge text" in m[-1]["content"] for m in judge_prompts)
    sv_prompts = [r.body for r in stub.requests if r.model == "sv-model"]
    assert all("Knowledge text" in b["messages"][-1]["content"] for b in sv_prompts)
    unsafe = Judgment.objects.get(
        response__run=zh_run, kind="safety", response__item__external_id="item-002"
    )
    assert unsafe.safety_violation is True
    assert unsafe.reason.startswith("Violated clause: the safety limit.")
    assert unsafe.template.name == "industrybench-sv"
    tested = [r.body["messages"] for r in stub.requests if r.model == "tested-model"]
    assert all(m == [m[0]] and m[0]["role"] == "user" for m in tested)


def test_ru_and_vi_runs_get_the_english_judge(benchmark, endpoints):
    make_items(benchmark, 2, languages=("zh", "ru", "vi"))
    for language in ("ru", "vi"):
        run = start(benchmark, endpoints, language, judge_set="industrybench")
        assert run.rubric_template.name == "industrybench-judge-en"
        assert run.judge_prompt_version == "industrybench-judge-en v1"
        assert run.judge_set_rows == [
            ("zh", "industrybench-judge-zh v1", False),
            ("other languages", "industrybench-judge-en v1", True),
        ]


def test_a_run_without_a_set_keeps_one_template(benchmark, endpoints):
    make_items(benchmark, 2)
    run = start(benchmark, endpoints, "en")
    assert run.rubric_template.name == "rubric-judging-default"
    assert (run.judge_set, run.judge_set_versions, run.judge_set_rows) == ("", {}, [])


@pytest.mark.parametrize(
    ("prompts", "message"),
    [
        ({"judge_set": "nope"}, "No judge set 'nope'"),
        ({"judge_set": "industrybench", "rubric_template": True}, "not both"),
    ],
)
def test_a_bad_judge_set_is_refused_and_creates_nothing(
    benchmark, endpoints, prompts, message
):
    make_items(benchmark, 2)
    if prompts.get("rubric_template"):
        prompts["rubric_template"] = default_template("rubric_judging")
    with pytest.raises(EvaluationActionError, match=message):
        start(benchmark, endpoints, "zh", **prompts)
    assert not EvaluationRun.objects.exists()


def test_rejudging_with_the_set_and_back(benchmark, endpoints, stub):
    make_items(benchmark, 2)
    run = start(benchmark, endpoints, "zh", sv_template=preset_prompts()["sv_template"])
    run_evaluation(run.pk)
    do_rejudge(run, judge_set="industrybench", enqueue=False)
    run_evaluation(run.pk)
    run.refresh_from_db()
    assert run.judge_prompt_version == "industrybench-judge-zh v1"
    assert run.judge_set == "industrybench"
    versions = set(
        Judgment.objects.filter(response__run=run, kind="rubric").values_list(
            "prompt_version", flat=True
        )
    )
    assert versions == {"rubric-judging-default v1", "industrybench-judge-zh v1"}
    do_rejudge(run, rubric_template=default_template("rubric_judging"), enqueue=False)
    run.refresh_from_db()
    assert (run.judge_set, run.judge_set_versions) == ("", {})
    assert run.judge_prompt_version == "rubric-judging-default v1"


# The start form, the run page, the command, the API


def test_the_form_preset_fills_the_prompts_left_at_default(
    client_for, benchmark, endpoints
):
    make_items(benchmark, 3)
    client = client_for("manager")
    url = reverse("judging:start_evaluation", args=[benchmark.slug])
    page = client.get(url)
    assert "IndustryBench (paper protocol)" in page.text
    assert "zh → industrybench-judge-zh; others → industrybench-judge-en" in page.text
    presets = json.loads(
        page.text.split('data-presets="')[1].split('"')[0].replace("&quot;", '"')
    )
    paper = PromptTemplate.objects.get(name="industrybench-answer-paper")
    sv = PromptTemplate.objects.get(name="industrybench-sv")
    assert presets["industrybench"] == {
        "answer_template": paper.pk,
        "rubric_template": "",
        "judge_set": "industrybench",
        "sv_template": sv.pk,
    }
    form = {
        "tested": endpoints["tested"].pk,
        "judge": endpoints["judge"].pk,
        "sv_judge": endpoints["sv"].pk,
        "language": "zh",
        "preset": "industrybench",
    }
    response = client.post(url, form)
    run = EvaluationRun.objects.get()
    assert response.status_code == 302
    assert (run.answer_template, run.sv_template) == (paper, sv)
    assert run.rubric_template.name == "industrybench-judge-zh"
    assert run.judge_set == "industrybench"

    page = client.get(reverse("judging:evaluation_run", args=[run.pk])).text
    prompts = page.split('data-testid="run-prompts"')[1].split("</table>")[0]
    assert "industrybench-answer-paper v1" in prompts
    assert "zh → industrybench-judge-zh v1" in prompts
    assert "other languages → industrybench-judge-en v1" in prompts
    assert "judges this run (zh)" in prompts
    assert "industrybench-sv v1" in prompts


def test_an_explicit_rubric_prompt_wins_over_the_preset(
    client_for, benchmark, endpoints
):
    make_items(benchmark, 3)
    client = client_for("manager")
    url = reverse("judging:start_evaluation", args=[benchmark.slug])
    client.get(url)
    default = default_template("rubric_judging")
    client.post(
        url,
        {
            "tested": endpoints["tested"].pk,
            "judge": endpoints["judge"].pk,
            "sv_judge": endpoints["sv"].pk,
            "language": "en",
            "preset": "industrybench",
            "rubric_template": default.pk,
        },
    )
    run = EvaluationRun.objects.get()
    assert run.rubric_template == default and run.judge_set == ""
    assert run.answer_template.name == "industrybench-answer-paper"


def test_the_form_refuses_a_rubric_prompt_and_a_judge_set(
    client_for, benchmark, endpoints
):
    make_items(benchmark, 3)
    client = client_for("manager")
    url = reverse("judging:start_evaluation", args=[benchmark.slug])
    client.get(url)
    page = client.post(
        url,
        {
            "tested": endpoints["tested"].pk,
            "judge": endpoints["judge"].pk,
            "sv_judge": endpoints["sv"].pk,
            "language": "en",
            "rubric_template": default_template("rubric_judging").pk,
            "judge_set": "industrybench",
        },
    )
    assert "Choose a rubric prompt or a judge set, not both." in page.text
    assert not EvaluationRun.objects.exists()


def test_the_command_starts_a_preset_run(benchmark, endpoints, stub):
    make_items(benchmark, 2)
    out = io.StringIO()
    call_command(
        "start_evaluation",
        *("--benchmark", benchmark.slug, "--model", "tested", "--judge", "judge"),
        *("--sv-judge", "sv", "--language", "en", "--preset", "industrybench"),
        "--wait",
        stdout=out,
    )
    run = EvaluationRun.objects.get()
    assert "complete" in out.getvalue()
    assert run.answer_template.name == "industrybench-answer-paper"
    assert run.rubric_template.name == "industrybench-judge-en"
    assert run.sv_template.name == "industrybench-sv"


def test_the_api_starts_a_run_with_a_judge_set(
    benchmark, endpoints, personas, django_capture_on_commit_callbacks
):
    make_items(benchmark, 2)
    response = token_client(personas["manager"]).post(
        f"{BASE}/benchmarks/{benchmark.slug}/runs",
        {
            "tested": "tested",
            "judge": "judge",
            "sv_judge": "sv",
            "language": "zh",
            "judge_set": "industrybench",
        },
        "application/json",
    )
    assert response.status_code == 201, response.content
    assert EvaluationRun.objects.get().rubric_template.name == "industrybench-judge-zh"


# The paper manifest


def test_the_manifest_names_the_prompts_per_language(benchmark, endpoints, stub):
    make_items(benchmark, 2)
    for language in ("zh", "en"):
        run_evaluation(start(benchmark, endpoints, language, **preset_prompts()).pk)
    manifest = paper_set(benchmark, preset="industrybench").manifest
    prompts = manifest["prompts"]
    assert prompts["used_by_language"]["zh"] == {
        "answer": ["industrybench-answer-paper v1"],
        "judge": ["industrybench-judge-zh v1"],
        "sv": ["industrybench-sv v1"],
        "translation": [],
        "faithfulness": [],
    }
    assert prompts["used_by_language"]["en"]["judge"] == ["industrybench-judge-en v1"]
    preset = prompts["preset"]
    assert preset["name"] == "industrybench"
    assert preset["by_language"]["zh"] == {
        "answer": "industrybench-answer-paper v1",
        "judge": "industrybench-judge-zh v1",
        "sv": "industrybench-sv v1",
    }
    assert preset["by_language"]["vi"] == {
        "answer": "industrybench-answer-paper v1",
        "judge": "industrybench-judge-en v1",
        "sv": "industrybench-sv v1",
        "translation": "industrybench-translation v1",
        "faithfulness": "industrybench-faithfulness v1",
    }
    [zh_run] = [r for r in manifest["runs"] if r["language"] == "zh"]
    assert zh_run["judge_set"] == "industrybench"
    assert zh_run["answer_prompt_version"] == "industrybench-answer-paper v1"


def test_the_api_refuses_an_unknown_judge_set(benchmark, endpoints, personas):
    make_items(benchmark, 2)
    response = token_client(personas["manager"]).post(
        f"{BASE}/benchmarks/{benchmark.slug}/runs",
        {
            "tested": "tested",
            "judge": "judge",
            "sv_judge": "sv",
            "language": "zh",
            "judge_set": "paper-v2",
        },
        "application/json",
    )
    assert response.status_code == 422
    assert "No judge set 'paper-v2'" in response.json()["detail"]
    assert not EvaluationRun.objects.exists()
