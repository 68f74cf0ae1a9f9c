"""Release in IndustryBench's order: the verified pool opened as draft items
(labels imported from the source, or given by labelling), a seeded release
sample stratified by capability × industry, then — after the sample's checks —
the items made active, with provenance in their history; each step again
changes nothing."""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from django.forms.models import model_to_dict
from django.urls import reverse

from benchmark.actions import (
    do_add_rendering_version,
    do_create_benchmark,
    do_set_final_labels,
)
from benchmark.models import FinalLabel, Item, ItemEvent, Label, Rendering
from construction.models import Candidate, StageDecision
from construction.release import (
    _draft_item,
    candidate_strata,
    do_draw_release_sample,
    do_open_pool,
    do_release,
)
from construction.sampling import allocate
from tests.construction.factories import make_candidate, make_source
from tests.construction.test_sample_checks import run_check

PASSED = [("dedup", "pass", ""), ("quality", "pass", "")]


@pytest.fixture
def pool(benchmark):
    standard = make_source(benchmark, "gbt_standard", "插座额定电压 250 V")
    standard.fields = {"industry": "electrical_power"}
    standard.save()
    product = make_source(benchmark, "product_record", "螺栓 A2-70")
    product.fields = {"industry": "machinery_hardware", "capability": "no_such"}
    product.save()
    passed = [make_candidate(standard, f"标准问题 {i}？", PASSED) for i in range(6)]
    passed += [make_candidate(product, f"产品问题 {i}？", PASSED) for i in range(3)]
    make_candidate(standard, "重复？", [("dedup", "reject", "dup")])
    make_candidate(
        product, "模糊？", [("dedup", "pass", ""), ("quality", "reject", "")]
    )
    return passed


def label_capabilities(benchmark, candidates, codes):
    labels = {
        label.code: label
        for label in Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code="capability"
        )
    }
    do_set_final_labels(
        [
            (c.item_id, labels[code], "full_consensus")
            for c, code in zip(candidates, codes, strict=True)
        ]
    )


@pytest.fixture
def labelled(benchmark, pool):
    assert do_open_pool(benchmark) == 9
    for candidate in pool:
        candidate.refresh_from_db()
    codes = ["standards_terminology"] * 4 + ["safety_compliance"] * 2
    label_capabilities(benchmark, pool, codes + ["selection_substitution"] * 3)
    return pool


def test_opening_the_pool_drafts_items_with_imported_labels(benchmark, pool):
    assert do_open_pool(benchmark) == 9
    assert do_open_pool(benchmark) == 0
    items = Item.objects.filter(benchmark=benchmark)
    assert items.count() == 9
    assert set(items.values_list("status", flat=True)) == {"draft"}
    industry = FinalLabel.objects.filter(dimension__code="industry")
    assert industry.count() == 9
    assert set(industry.values_list("provenance", flat=True)) == {"imported"}
    # "no_such" is no capability code: nothing imported for it.
    assert not FinalLabel.objects.filter(dimension__code="capability").exists()
    pool[0].refresh_from_db()
    rendering = Rendering.objects.get(item=pool[0].item_id)
    assert rendering.question == pool[0].question


def _written(item):
    """What an item's creation wrote, without ids, its benchmark and times (its
    imported labels' events come after, from do_set_final_labels)."""
    skip = {"id", "benchmark", "item_id", "created_at", "updated_at"}
    item = Item.objects.get(pk=item.pk)
    return (
        {k: v for k, v in model_to_dict(item).items() if k not in skip},
        [
            {k: v for k, v in row.items() if k not in skip}
            for row in Rendering.objects.filter(item=item).values()
        ],
        list(
            ItemEvent.objects.filter(item=item)
            .exclude(kind="label")
            .order_by("id")
            .values_list("kind", "summary", "summary_note", "before", "after", "user")
        ),
    )


def _one_by_one(benchmark, new, user):
    """The rows do_create_item wrote one item at a time before #29."""
    item = Item.objects.create(
        benchmark=benchmark,
        external_id=new.external_id,
        source_kind=new.source_kind,
        source_reference=new.source_reference,
        knowledge_text=new.knowledge_text,
        status=new.status,
    )
    ItemEvent.objects.create(
        item=item,
        kind="created",
        **ItemEvent.summary_fields(new.summary),
        after=new.provenance,
        user=user,
    )
    do_add_rendering_version(
        item,
        benchmark.source_language,
        question=new.question,
        answer=new.answer,
        origin=Rendering.Origin.SOURCE,
        review_status=Rendering.ReviewStatus.APPROVED,
        user=user,
        options=[],
        key_points=[],
    )
    return item


def test_batched_opening_writes_what_one_item_at_a_time_wrote(
    benchmark, pool, personas, monkeypatch
):
    # Batches of 4 over the 9 candidates: the last batch is partial.
    monkeypatch.setattr("benchmark.creating.CREATE_BATCH", 4)
    monkeypatch.setattr("construction.release.CREATE_BATCH", 4)
    user = personas["manager"]
    assert do_open_pool(benchmark, user=user) == 9
    reference = do_create_benchmark(name="Reference", slug="reference")
    for candidate in Candidate.objects.filter(pk__in=[c.pk for c in pool]):
        expected = _one_by_one(reference, _draft_item(candidate), user)
        assert _written(candidate.item) == _written(expected)
        assert candidate.item.external_id == f"CAND-{candidate.pk}"
        assert candidate.item.status == "draft"
        kinds = [event[0] for event in _written(candidate.item)[2]]
        assert kinds == ["created", "rendering"]


@pytest.mark.django_db(transaction=True)
def test_two_opens_at_once_draft_each_candidate_once(benchmark, pool):
    start = threading.Barrier(2)
    opened = []

    def open_pool():
        try:
            start.wait()
            opened.append(do_open_pool(benchmark))
        finally:
            connection.close()

    threads = [threading.Thread(target=open_pool) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(opened) == [0, 9]
    assert Item.objects.filter(benchmark=benchmark).count() == 9
    assert FinalLabel.objects.filter(dimension__code="industry").count() == 9


def test_opening_a_taken_external_id_writes_nothing(benchmark, pool):
    first = pool[0]
    Item.objects.create(benchmark=benchmark, external_id=f"CAND-{first.pk}")
    with pytest.raises(ValidationError, match=f"already has an item CAND-{first.pk}"):
        do_open_pool(benchmark)
    assert Item.objects.filter(benchmark=benchmark).count() == 1
    assert not Candidate.objects.filter(item__isnull=False).exists()


def test_the_sample_needs_labels(benchmark, pool):
    with pytest.raises(ValidationError, match="open the pool for labelling"):
        do_draw_release_sample(benchmark, 4, seed=0)
    do_open_pool(benchmark)
    with pytest.raises(ValidationError, match="9 candidate.*lack a capability"):
        do_draw_release_sample(benchmark, 4, seed=0)
    assert not StageDecision.objects.filter(stage="release").exists()


def test_the_sample_is_stratified_by_capability_and_industry(benchmark, labelled):
    sample = do_draw_release_sample(benchmark, 5, seed=3)
    assert (sample.pool, sample.drawn, sample.new) == (9, 5, True)
    strata = candidate_strata(labelled)
    names = sorted(set(strata.values()))
    sizes = [list(strata.values()).count(name) for name in names]
    assert sizes == [2, 3, 4]
    drawn = StageDecision.objects.filter(stage="release", outcome="pass")
    taken = [
        sum(strata[pk] == name for pk in drawn.values_list("candidate", flat=True))
        for name in names
    ]
    assert taken == list(allocate(sizes, 5)) == [1, 2, 2]
    for size, n in zip(sizes, taken, strict=True):
        assert abs(n - size * 5 / 9) < 1
    rest = StageDecision.objects.filter(stage="release", outcome="reject")
    assert rest.count() == 4
    assert set(rest.values_list("reason", flat=True)) == {
        "Not drawn in the release sample"
    }
    again = do_draw_release_sample(benchmark, 5, seed=3)
    assert (again.drawn, again.new) == (5, False)
    assert StageDecision.objects.filter(stage="release").count() == 9
    with pytest.raises(ValidationError, match="already drawn"):
        do_draw_release_sample(benchmark, 6, seed=3)


def test_release_needs_the_sample_checks(benchmark, labelled):
    with pytest.raises(ValidationError, match="Draw the release sample first"):
        do_release(benchmark)
    do_draw_release_sample(benchmark, 5, seed=3)
    with pytest.raises(ValidationError, match="exact dedup check"):
        do_release(benchmark)


def test_release_activates_the_sample_with_provenance(benchmark, labelled, personas):
    do_draw_release_sample(benchmark, 5, seed=3)
    run_check(benchmark, "exact_dedup")
    run_check(benchmark, "dangling")
    result = do_release(benchmark, user=personas["manager"])
    assert (result.released, result.already) == (5, 0)
    released = list(
        Candidate.objects.filter(item__status="active").select_related("item")
    )
    assert len(released) == 5
    candidate = released[0]
    item = candidate.item
    assert item.external_id == f"CAND-{candidate.pk}"
    assert item.source_reference == candidate.source.reference
    created = ItemEvent.objects.get(item=item, kind="created")
    assert created.after["candidate"] == candidate.pk
    assert created.after["source"] == candidate.source_id
    decision = StageDecision.objects.get(candidate=candidate, stage="released")
    assert decision.evidence["item"] == item.pk
    assert decision.decided_by == personas["manager"]
    assert " × " in decision.evidence["stratum"]
    # Not drawn: still drafts.
    assert Item.objects.filter(benchmark=benchmark, status="draft").count() == 4
    again = do_release(benchmark)
    assert (again.released, again.already) == (0, 5)
    assert "Nothing added" in str(again)


def test_command_and_forms(benchmark, labelled, client_for, capsys):
    call_command(
        "release_candidates", "sample", "--benchmark", benchmark.slug, "--size", "2"
    )
    assert "Release sample of 2" in capsys.readouterr().out
    run_check(benchmark, "exact_dedup")
    run_check(benchmark, "dangling")
    client = client_for("manager")
    response = client.post(reverse("construction:release", args=[benchmark.slug]))
    assert response.status_code == 302
    assert Item.objects.filter(benchmark=benchmark, status="active").count() == 2
    bad = client.post(
        reverse("construction:draw_sample", args=[benchmark.slug]),
        {"size": 3, "seed": 0},
    )
    assert bad.status_code == 400
    assert "already drawn" in bad.content.decode()


def test_item_history_names_the_candidate(benchmark, labelled, client_for):
    candidate = labelled[0]
    page = client_for("expert").get(
        reverse("benchmark:item_detail", args=[benchmark.slug, candidate.item_id])
    )
    assert f"Drafted from construction candidate {candidate.pk}" in (
        page.content.decode()
    )
