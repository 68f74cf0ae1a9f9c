"""The issue's worked example, through the database and the report page: a TF
seed answered right whose synonym variant is consistent and whose logic variant
(written by the LLM, approved by a reviewer) is not, plus a refused variant →
correct robustness 1/2; an MC seed answered wrong whose order variant picks the
same option content and whose irrelevant-option variant does not → incorrect
robustness 1/2."""

import math

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmark import formats
from benchmark.models import Item, ItemVariant
from judging.evaluation.models import EvaluationRun, Response
from judging.llm.prompts import default_template
from judging.robustness import actions, report
from judging.robustness.models import VariantDraft
from tests.judging.robustness_fixtures import (
    MC_OPTIONS,
    make_replies,
    make_seed,
    run_in_process,
    stub_endpoint,
)
from tests.openai_stub import OpenAIStub

NEGATED = "USB接口的额定电压不是5 V。"


@pytest.fixture
def example(benchmark, personas, monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "k")
    actions.do_replace_resources(
        benchmark, "kind,language,key,value\nsynonym,zh,USB,U盘\n"
    )
    tf = make_seed(benchmark, "TF-1", "USB接口的额定电压为5 V。", correct_answer=True)
    mc = make_seed(
        benchmark,
        "MC-1",
        "插座的额定电压最高是多少？",
        options=MC_OPTIONS,
        correct_options=["A"],
    )
    tf_made = actions.do_generate_variants(
        benchmark, [formats.TRUE_FALSE], ["synonym", "general_context"], "domain"
    )
    mc_made = actions.do_generate_variants(
        benchmark, [formats.MULTIPLE_CHOICE], ["order", "irrelevant_content"], "domain"
    )
    assert (tf_made.created, mc_made.created) == (2, 2)
    with OpenAIStub(responder=lambda body: NEGATED) as stub:
        run = actions.do_start_variant_run(
            benchmark,
            relation="logic",
            endpoint=stub_endpoint(stub),
            template=default_template("variant_writing"),
            sector_field="domain",
            item_formats=[formats.TRUE_FALSE, formats.MULTIPLE_CHOICE],
        )
        run_in_process(run)
    draft = VariantDraft.objects.get()
    assert (draft.seed, draft.text, draft.status) == (tf, NEGATED, "awaiting")
    actions.do_review_draft(draft.pk, "approved", user=personas["reviewer"])

    variant = {
        (link.seed.external_id, link.relation): link
        for link in ItemVariant.objects.select_related("seed", "item")
    }
    order = variant["MC-1", "order"]
    same_content = "ABCD"[order.option_map.index(1)]  # where the seed's B now is
    assert order.item.correct_options == ["ABCD"[order.option_map.index(0)]]
    logic = variant["TF-1", "logic"]
    assert logic.item.correct_answer is False
    assert logic.item.renderings.get().question == NEGATED
    make_replies(
        benchmark,
        "model-x",
        {
            tf: "正确",
            variant["TF-1", "synonym"].item: "答案：正确。",
            logic.item: "正确",  # the negated statement is false: inconsistent
            variant["TF-1", "general_context"].item: "无法回答这个问题。",
            mc: "答案：B",  # wrong: A is right
            order.item: f"答案：{same_content}",
            variant["MC-1", "irrelevant_content"].item: "答案：E",
        },
    )
    return benchmark


def test_the_worked_example_gives_one_half_each(example):
    built = report.build(example)
    pooled = built.result.pooled
    assert (pooled.correct[0, 0], pooled.correct_seeds[0, 0]) == (0.5, 1)
    assert (pooled.incorrect[0, 0], pooled.incorrect_seeds[0, 0]) == (0.5, 1)
    assert pooled.refused_variants[0, 0] == 1
    assert pooled.refused_seeds[0, 0] == 0
    table = built.result.by_relation
    by_relation = dict(zip(table.groups, table.correct[0], strict=True))
    assert (by_relation["synonym"], by_relation["logic"]) == (1.0, 0.0)
    assert math.isnan(by_relation["general_context"])  # refused: nothing compared
    wrong = dict(zip(table.groups, table.incorrect[0], strict=True))
    assert (wrong["order"], wrong["irrelevant_content"]) == (1.0, 0.0)


def test_the_report_page_and_its_downloads_show_the_worked_example(example, client_for):
    page = client_for("manager").get(
        reverse("judging:robustness_report", args=[example.slug])
    )
    assert page.status_code == 200
    summary = page.context["report"].tables["robustness"].formatted_rows()
    assert summary == [
        [
            "model-x (zh)",
            *("0.500", "2", "1"),  # correct: pooled, variants, seeds
            *("0.500", "2", "1"),  # incorrect
            *("0", "1"),  # the model's refusals: seeds, variants
            *("0", "0"),  # no single answer
            *("0", "0"),  # the provider's refusals
            *("0.500", "0.500"),  # the earlier mean per seed
        ]
    ]
    html = page.content.decode()
    assert html.count("<svg") >= 2  # the relation and sector heatmaps
    assert 'data-heatmap="relation"' in html and 'data-heatmap="sector"' in html

    download = client_for("manager").get(
        reverse("judging:robustness_download", args=[example.slug, "robustness"])
    )
    body = download.content.decode("utf-8")
    assert body.startswith("\ufeff")
    assert body.splitlines()[1].startswith("model-x (zh),0.5,2,1,0.5,2,1,0,1,0,0")
    by_relation = client_for("manager").get(
        reverse(
            "judging:robustness_download",
            args=[example.slug, "incorrect-by-relation"],
        )
    )
    header, row = by_relation.content.decode("utf-8-sig").splitlines()
    cells = dict(zip(header.split(","), row.split(","), strict=True))
    assert (cells["order"], cells["irrelevant_content"], cells["logic"]) == (
        "1.0",
        "0.0",
        "",
    )


def test_the_cached_report_follows_a_changed_reply_and_answer_key(example):
    first = report.cached_build(example)
    assert first.result.pooled.correct[0, 0] == 0.5
    run = first.runs[0]
    # The logic variant now answered consistently, as a retried call would record
    # it (the worker moves the run's heartbeat).
    logic = ItemVariant.objects.get(relation="logic").item
    run.responses.filter(item=logic).update(text="错误")
    EvaluationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
    assert report.cached_build(example).result.pooled.correct[0, 0] == 1.0
    # The MC seed's key changes (as an import's update would): B is now right.
    Item.objects.filter(external_id="MC-1").update(correct_options=["B"])
    pooled = report.cached_build(example).result.pooled
    assert (pooled.correct_seeds[0, 0], pooled.incorrect_seeds[0, 0]) == (2, 0)
    assert pooled.correct[0, 0] == 0.75  # TF 2/2, MC 1/2


def test_a_provider_refusal_changes_no_score_and_is_counted(example):
    """Study 002 §5.2: a variant the provider's filter refused is left out of the
    robustness evaluation, so the score stays as if it had not been asked."""
    run = report.reported_runs(example, example.source_language)[0]
    synonym = ItemVariant.objects.get(relation="synonym").item
    run.responses.filter(item=synonym).update(status=Response.Status.REFUSED)
    pooled = report.build(example).result.pooled
    # The TF seed now has only its logic variant compared (inconsistent): 0 of 1;
    # the refused synonym variant is counted apart.
    assert pooled.correct[0, 0] == 0.0
    assert pooled.correct_variants[0, 0] == 1
    assert pooled.provider_refused_variants[0, 0] == 1
    assert pooled.incorrect[0, 0] == 0.5  # the MC seed's variants are untouched
