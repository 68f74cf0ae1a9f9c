"""Variants as items: deterministic generation (idempotent, large selections on
a worker), the resources (all or nothing), LLM-written variants on the run
lifecycle and their review queue (who may, approve / edit / reject)."""

import io

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from benchmark import formats
from benchmark.models import Item, ItemVariant
from judging.llm.prompts import default_template, render_text
from judging.robustness import actions, relations, tasks
from judging.robustness.models import Resource, VariantDraft, VariantRun
from tests.judging.robustness_fixtures import (
    MC_OPTIONS,
    make_seed,
    run_in_process,
    stub_endpoint,
)
from tests.openai_stub import OpenAIStub, first_user_text

RESOURCES = """kind,language,key,value
synonym,zh,USB,U盘
industry,zh,电力,电力能源
law,zh,*,安全生产法
irrelevant,zh,,一只橘猫
"""
BOTH = [formats.MULTIPLE_CHOICE, formats.TRUE_FALSE]


@pytest.fixture
def seeds(benchmark):
    actions.do_replace_resources(benchmark, RESOURCES)
    return {
        "mc": make_seed(
            benchmark,
            "MC-1",
            "USB插座的额定电压为多少？电缆长100 cm。",
            options=MC_OPTIONS,
            correct_options=["A"],
        ),
        "tf": make_seed(
            benchmark, "TF-1", "USB接口的额定电压为5 V。", correct_answer=True
        ),
    }


def links():
    return {
        (link.seed.external_id, link.relation): link
        for link in ItemVariant.objects.select_related("seed", "item")
    }


def test_every_deterministic_relation_makes_linked_items_once(benchmark, seeds):
    made = actions.do_generate_variants(
        benchmark, BOTH, list(actions.generation.DETERMINISTIC), "domain"
    )
    found = links()
    assert set(found) == {
        ("MC-1", name)
        for name in (
            "magnitude",
            "precision",
            "synonym",
            "order",
            "general_context",
            "security_context",
            "irrelevant_content",
        )
    } | {
        # TF-1's "5 V" is a quantity too: magnitude and precision apply.
        ("TF-1", name)
        for name in (
            "magnitude",
            "precision",
            "synonym",
            "general_context",
            "security_context",
        )
    }
    assert made.created == len(found)
    text = {key: link.item.renderings.get().question for key, link in found.items()}
    assert text["MC-1", "magnitude"] == "USB插座的额定电压为多少？电缆长1 m。"
    assert text["MC-1", "synonym"].startswith("U盘插座")
    assert text["MC-1", "general_context"].startswith("在电力能源行业中，")
    assert text["MC-1", "security_context"].startswith("考虑到《安全生产法》，")
    irrelevant = found["MC-1", "irrelevant_content"]
    assert irrelevant.item.renderings.get().options == [*MC_OPTIONS, "一只橘猫"]
    assert irrelevant.option_map == [0, 1, 2, 3, -1]
    assert irrelevant.item.correct_options == ["A"]
    order = found["MC-1", "order"]
    shown = order.item.renderings.get().options
    assert [MC_OPTIONS[i] for i in order.option_map] == shown
    assert order.item.correct_options == ["ABCD"[shown.index("250 V")]]
    for link in found.values():
        assert link.item.benchmark == benchmark
        assert link.sector == "电力"
        assert link.item.format == link.seed.format
        assert link.item.events.get().after["seed"] == link.seed.external_id

    before = Item.objects.count()
    again = actions.do_generate_variants(
        benchmark, BOTH, list(actions.generation.DETERMINISTIC), "domain"
    )
    assert again.created == 0 and Item.objects.count() == before


def test_generation_refuses_llm_relations_and_unknown_fields(benchmark, seeds):
    with pytest.raises(ValidationError, match="logic is written by an LLM"):
        actions.do_generate_variants(benchmark, BOTH, ["logic"], "domain")
    with pytest.raises(ValidationError, match="not a field"):
        actions.do_generate_variants(benchmark, BOTH, ["order"], "colour")
    with pytest.raises(ValidationError, match="Choose multiple choice"):
        actions.do_generate_variants(benchmark, ["open"], ["order"], "domain")
    assert not ItemVariant.objects.exists()


def test_a_large_selection_is_generated_by_a_worker_task(
    benchmark, seeds, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(actions, "IN_REQUEST_LIMIT", 1)
    with django_capture_on_commit_callbacks() as queued:
        made = actions.do_generate_variants(benchmark, BOTH, ["order"], "domain")
    assert made.queued and len(queued) == 1
    assert not ItemVariant.objects.exists()  # nothing in the request
    tasks.generate_variants(benchmark.pk, BOTH, ["order"], "domain")
    tasks.generate_variants(benchmark.pk, BOTH, ["order"], "domain")
    assert list(links()) == [("MC-1", "order")]


def test_sectors_come_from_a_label_dimension(benchmark, seeds):
    from benchmark.actions import do_set_final_label
    from benchmark.models import Label

    industry = Label.objects.filter(dimension__code="industry").first()
    do_set_final_label(seeds["tf"], industry, provenance="manual")
    actions.do_generate_variants(
        benchmark, [formats.TRUE_FALSE], ["general_context"], "industry"
    )
    link = links()["TF-1", "general_context"]
    assert link.sector == industry.name
    assert link.item.renderings.get().question.startswith(f"在{industry.name}行业中")


# -- resources --------------------------------------------------------------------


def resources_url(benchmark):
    return reverse("judging:robustness_resources", args=[benchmark.slug])


def stored(benchmark):
    return sorted(
        Resource.objects.filter(benchmark=benchmark).values_list(
            "kind", "language", "key", "value"
        )
    )


def test_resources_save_from_the_form_and_from_a_file(benchmark, client_for):
    manager = client_for("manager")
    response = manager.post(resources_url(benchmark), {"text": RESOURCES})
    assert response.status_code == 302
    assert ("irrelevant", "zh", "一只橘猫", "一只橘猫") in stored(benchmark)
    upload = io.BytesIO(
        "\ufeffkind,language,key,value\nsynonym,en,PLC,controller\n".encode()
    )
    upload.name = "glossary.csv"
    response = manager.post(resources_url(benchmark), {"text": "", "file": upload})
    assert response.status_code == 302
    assert stored(benchmark) == [("synonym", "en", "PLC", "controller")]
    page = manager.get(reverse("judging:robustness", args=[benchmark.slug]))
    assert "synonym,en,PLC,controller" in page.content.decode()


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        (
            "kind,language,key,value\nsynonym,zh,USB,U盘\ncolour,zh,a,b\n"
            "law,fr,*,x\nsynonym,zh,USB,优盘\nindustry,zh,电力,\n",
            [
                "line 3, kind: 'colour' is not one of synonym, industry, law, "
                "irrelevant",
                "line 4, language: 'fr' is not one of zh, en, ru, vi",
                "line 5, key: 'USB' is already given on line 2",
                "line 6, value: empty",
            ],
        ),
        (
            "term,synonym\nUSB,U盘\n",
            ["line 1: the header must be kind,language,key,value, not term,synonym"],
        ),
        ("kind,language,key,value\nsynonym,zh,USB\n", ["line 2: 3 cells; expected 4"]),
    ],
)
def test_bad_resources_change_nothing_and_say_where(
    benchmark, client_for, text, problems
):
    actions.do_replace_resources(benchmark, RESOURCES)
    before = stored(benchmark)
    response = client_for("manager").post(resources_url(benchmark), {"text": text})
    assert response.status_code == 400
    assert [str(p) for p in response.context["problems"].problems] == problems
    assert "nothing was changed" in response.content.decode()
    assert stored(benchmark) == before


def test_a_file_that_is_not_utf8_is_refused(benchmark, client_for):
    upload = io.BytesIO("kind,language,key,value\nsynonym,zh,USB,U盘\n".encode("gbk"))
    upload.name = "glossary.csv"
    response = client_for("manager").post(
        resources_url(benchmark), {"text": "", "file": upload}
    )
    assert response.status_code == 400
    assert "not UTF-8" in response.content.decode()
    assert not Resource.objects.exists()


# -- LLM-written variants and their review ------------------------------------------


def negate(body):
    prompt = first_user_text(body)
    if "TF-2" in prompt:
        return ""  # an empty reply: retried, then pending
    return prompt.split("Statement: ")[1].replace("为", "不是", 1)


@pytest.fixture
def drafted(benchmark, seeds, monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "k")
    make_seed(benchmark, "TF-2", "TF-2 插座额定电流为16 A。", correct_answer=False)
    with OpenAIStub(responder=negate) as stub:
        endpoint = stub_endpoint(stub)
        run = actions.do_start_variant_run(
            benchmark,
            relation="logic",
            endpoint=endpoint,
            template=default_template("variant_writing"),
            sector_field="domain",
            item_formats=BOTH,
        )
        run_in_process(run)
        asked = len(stub.requests)
        again = actions.do_start_variant_run(
            benchmark,
            relation="logic",
            endpoint=endpoint,
            template=default_template("variant_writing"),
            sector_field="domain",
            item_formats=BOTH,
        )
        run_in_process(again)
        # Nothing new is paid for: the awaiting draft is not asked again, and the
        # unparseable reply is served from the gateway's record.
        assert len(stub.requests) == asked
        assert again.status == VariantRun.Status.ATTENTION
    return run


def test_a_variant_run_drafts_for_review_and_keeps_failures_pending(drafted):
    assert drafted.status == VariantRun.Status.ATTENTION
    assert drafted.seed_ids == sorted(drafted.seed_ids) and len(drafted.seed_ids) == 2
    awaiting = VariantDraft.objects.get(status="awaiting")
    assert awaiting.text == "USB接口的额定电压不是5 V。"
    pending = VariantDraft.objects.get(status="pending")
    assert pending.reason.startswith("Unparseable reply")
    assert not ItemVariant.objects.exists()  # nothing before a person approves


def test_the_prompt_template_is_the_relations_prompt(seeds):
    item = relations.Item("USB接口的额定电压为5 V。", answer=True, language="zh")
    template = default_template("variant_writing")
    assert template.purpose == "variant_writing"
    filled = render_text(template.text, {"language": "Chinese", "text": item.text})
    assert filled == relations.prompt("logic", item)


def review_url(benchmark):
    return reverse("judging:variant_review", args=[benchmark.slug])


@pytest.mark.parametrize("persona", ["expert", "adjudicator", "outsider"])
def test_only_reviewers_and_managers_review_variants(
    benchmark, drafted, client_for, persona
):
    draft = VariantDraft.objects.get(status="awaiting")
    client = client_for(persona)
    assert client.get(review_url(benchmark)).status_code == 403
    response = client.post(
        review_url(benchmark), {"draft": draft.pk, "decision": "approved"}
    )
    assert response.status_code == 403
    draft.refresh_from_db()
    assert draft.status == "awaiting"


@pytest.mark.parametrize("persona", ["reviewer", "manager"])
def test_reviewers_and_managers_approve(benchmark, drafted, client_for, persona):
    draft = VariantDraft.objects.get(status="awaiting")
    client = client_for(persona)
    assert client.get(review_url(benchmark)).context["draft"] is None  # no lease
    page = client.post(review_url(benchmark), {"action": "next"})
    assert page.status_code == 200
    assert page.context["draft"] == draft
    response = client.post(
        review_url(benchmark), {"draft": draft.pk, "decision": "approved"}
    )
    assert response.status_code == 302
    draft.refresh_from_db()
    assert (draft.status, draft.reviewed_by.username) == ("approved", persona)
    link = links()["TF-1", "logic"]
    assert draft.variant == link.item
    assert link.item.correct_answer is False
    assert client.get(review_url(benchmark)).context["draft"] is None


def test_an_edit_is_the_variant_and_a_rejection_needs_a_reason(
    benchmark, drafted, client_for
):
    draft = VariantDraft.objects.get(status="awaiting")
    reviewer = client_for("reviewer")
    response = reviewer.post(
        review_url(benchmark),
        {"draft": draft.pk, "decision": "rejected", "reason": " "},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 400
    assert "Say why" in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == "awaiting"

    reviewer.post(
        review_url(benchmark),
        {"draft": draft.pk, "decision": "edited", "text": "USB接口的额定电压并非5 V。"},
    )
    draft.refresh_from_db()
    assert (draft.status, draft.reviewed_text) == (
        "approved",
        "USB接口的额定电压并非5 V。",
    )
    assert links()["TF-1", "logic"].item.renderings.get().question == (
        "USB接口的额定电压并非5 V。"
    )
    again = reviewer.post(
        review_url(benchmark),
        {"draft": draft.pk, "decision": "rejected", "reason": "late"},
    )
    assert again.status_code == 400
    assert "already approved" in again.content.decode()


def test_a_rejected_draft_makes_no_variant(benchmark, drafted, personas):
    draft = VariantDraft.objects.get(status="awaiting")
    actions.do_review_draft(
        draft.pk, "rejected", user=personas["reviewer"], reason="not a negation"
    )
    draft.refresh_from_db()
    assert (draft.status, draft.reason) == ("rejected", "not a negation")
    assert not ItemVariant.objects.exists()


def test_resume_asks_pending_seeds_afresh_and_cancel_stops(
    benchmark, drafted, client_for, monkeypatch
):
    from judging.robustness import pipeline

    # The second run of the fixture re-asked TF-2: its pending draft is there.
    drafted = VariantDraft.objects.get(status="pending").run
    manager = client_for("manager")
    run_url = reverse("judging:variant_run", args=[drafted.pk])
    assert "Unparseable reply" in manager.get(run_url).content.decode()
    with OpenAIStub(responder=lambda body: "TF-2 插座额定电流不为16 A。") as stub:
        stub_endpoint(stub)  # the same endpoint, now at this stub
        response = manager.post(
            reverse("judging:run_control", args=["variants", drafted.pk, "resume"])
        )
        assert response.status_code == 302
        drafted.refresh_from_db()
        assert (drafted.retry_round, drafted.total_units) == (1, 1)
        for run_id, seeds in pipeline.open_chunks(drafted):
            pipeline.variant_chunk(run_id, seeds)
        assert len(stub.requests) == 1  # asked again, not served from the record
    drafted.refresh_from_db()
    assert drafted.status == VariantRun.Status.COMPLETE
    assert VariantDraft.objects.filter(status="awaiting").count() == 2

    fresh = VariantRun.objects.create(
        benchmark=benchmark,
        relation="logic",
        sector_field="domain",
        endpoint=drafted.endpoint,
        template=drafted.template,
        seed_ids=drafted.seed_ids,
    )
    cancel = reverse("judging:run_control", args=["variants", fresh.pk, "cancel"])
    manager.post(cancel)
    fresh.refresh_from_db()
    assert fresh.status == VariantRun.Status.CANCELLED
    again = manager.post(cancel, follow=True)
    assert "is cancelled" in again.content.decode()
    assert client_for("reviewer").post(cancel).status_code == 403
