"""Release: a seeded, stratified sample of the candidates that passed every stage
becomes benchmark items, all or nothing, with provenance in the item history; the
same sample again adds nothing."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse

from benchmark.models import Item, ItemEvent, Rendering
from construction.actions import do_release, release_sample
from construction.models import Candidate, StageDecision
from tests.construction.factories import make_candidate, make_source

PASSED = [("dedup", "pass", ""), ("quality", "pass", "")]


@pytest.fixture
def pool(benchmark):
    standard = make_source(benchmark, "gbt_standard", "插座额定电压 250 V")
    product = make_source(benchmark, "product_record", "螺栓 A2-70")
    passed = [make_candidate(standard, f"标准问题 {i}？", PASSED) for i in range(6)]
    passed += [make_candidate(product, f"产品问题 {i}？", PASSED) for i in range(3)]
    make_candidate(standard, "重复？", [("dedup", "reject", "dup")])
    make_candidate(
        product, "模糊？", [("dedup", "pass", ""), ("quality", "reject", "")]
    )
    return passed


def test_only_candidates_that_passed_every_stage_are_sampled(benchmark, pool):
    sample, stratum = release_sample(benchmark, 100, seed=1)
    assert sample == pool
    assert stratum == "source kind"


def test_release_creates_items_with_provenance(benchmark, pool, personas):
    result = do_release(benchmark, 3, seed=5, user=personas["manager"])
    assert (result.sampled, result.added) == (3, 3)
    released = list(Candidate.objects.exclude(item=None).select_related("item"))
    kinds = sorted(c.source.kind for c in released)
    assert kinds == ["gbt_standard", "gbt_standard", "product_record"]
    candidate = released[0]
    item = candidate.item
    assert item.external_id == f"CAND-{candidate.pk}"
    assert item.source_reference == candidate.source.reference
    assert item.knowledge_text == candidate.knowledge_text
    rendering = Rendering.objects.get(item=item, is_current=True)
    assert (rendering.language, rendering.question, rendering.origin) == (
        "zh",
        candidate.question,
        "source",
    )
    created = ItemEvent.objects.get(item=item, kind="created")
    assert created.after["candidate"] == candidate.pk
    assert created.after["source"] == candidate.source_id
    decision = StageDecision.objects.get(candidate=candidate, stage="release")
    assert decision.evidence["item"] == item.pk
    assert decision.decided_by == personas["manager"]


def test_the_same_sample_again_adds_nothing(benchmark, pool):
    first = do_release(benchmark, 4, seed=9)
    again = do_release(benchmark, 4, seed=9)
    assert (first.added, again.added, again.sampled) == (4, 0, 4)
    assert "Nothing added" in str(again)
    assert Item.objects.filter(benchmark=benchmark).count() == 4


def test_release_is_all_or_nothing(benchmark, pool):
    sample, _ = release_sample(benchmark, 3, seed=2)
    Item.objects.create(benchmark=benchmark, external_id=f"CAND-{sample[-1].pk}")
    with pytest.raises(ValidationError, match="already has an item"):
        do_release(benchmark, 3, seed=2)
    assert Item.objects.filter(benchmark=benchmark).count() == 1
    assert not StageDecision.objects.filter(stage="release").exists()
    assert not Candidate.objects.exclude(item=None).exists()


def test_strata_are_labels_when_candidates_have_them(benchmark):
    source = make_source(benchmark)
    for label in ["a"] * 4 + ["b"] * 4:
        make_candidate(source, f"{label} {Candidate.objects.count()}", label=label)
    sample, stratum = release_sample(benchmark, 4, seed=0)
    assert stratum == "label"
    assert sorted(c.label for c in sample) == ["a", "a", "b", "b"]


def test_command_and_form(benchmark, pool, client_for, capsys):
    call_command("release_candidates", "--benchmark", benchmark.slug, "--size", "2")
    assert "2 item(s) released" in capsys.readouterr().out
    response = client_for("manager").post(
        reverse("construction:release", args=[benchmark.slug]),
        {"size": 2, "seed": 0},
    )
    assert response.status_code == 302
    assert Item.objects.filter(benchmark=benchmark).count() == 2


def test_item_history_names_the_candidate(benchmark, pool, client_for):
    do_release(benchmark, 1, seed=3)
    candidate = Candidate.objects.exclude(item=None).get()
    page = client_for("expert").get(
        reverse("benchmark:item_detail", args=[benchmark.slug, candidate.item_id])
    )
    assert f"Released from construction candidate {candidate.pk}" in (
        page.content.decode()
    )
