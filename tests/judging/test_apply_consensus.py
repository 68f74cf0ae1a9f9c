"""The set-based consensus step (`do_apply_consensus` → `do_set_final_labels`):
final labels with provenance and history, human decisions kept, `none` rows for
adjudication, nothing rewritten when nothing changed, and a query count that does
not grow with the number of items."""

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmark.actions import do_set_final_label
from benchmark.models import FinalLabel, ItemEvent
from judging.labelling.actions import (
    do_apply_consensus,
    do_apply_suggestions,
    do_undo_suggestions,
)
from judging.labelling.models import LabelConsensus
from judging.llm.actions import do_save_endpoint
from tests.judging.labelling_fixtures import (
    FULL,
    OTHER,
    THIRD,
    label,
    labelled_run,
)

ANNOTATORS = ("ann-a", "ann-b", "ann-c")


@pytest.fixture
def manager(personas):
    return personas["manager"]


@pytest.fixture
def annotators(db):
    return [
        do_save_endpoint(
            name,
            base_url="http://127.0.0.1:9/v1",
            model=f"{name}-model",
            api_key_env="STUB_API_KEY",
        )
        for name in ANNOTATORS
    ]


def final(item, dimension):
    return FinalLabel.objects.select_related("label").get(
        item=item, dimension__code=dimension
    )


def test_full_and_majority_set_final_labels_with_history(benchmark, annotators):
    run, items = labelled_run(
        benchmark,
        annotators,
        {"F": (FULL, FULL, FULL), "M": (OTHER, OTHER, FULL), "U": (FULL, FULL, None)},
    )
    summary = do_apply_consensus(run)
    assert summary["capability"] == {"full": 1, "majority": 2, "none": 0}
    assert final(items["F"], "capability").provenance == "full_consensus"
    assert final(items["M"], "industry").label.code == "electrical_power"
    assert final(items["M"], "industry").provenance == "majority"
    # A missing label never counts: two of three is a majority, not full agreement.
    assert final(items["U"], "capability").provenance == "majority"
    event = ItemEvent.objects.get(item=items["M"], summary__startswith="Industry")
    assert (event.kind, event.before) == ("label", None)
    assert event.after == {"label": "electrical_power", "provenance": "majority"}
    assert ItemEvent.objects.filter(kind="label").count() == 6


def test_no_majority_creates_the_adjudication_rows_and_no_label(benchmark, annotators):
    run, items = labelled_run(benchmark, annotators, {"N": (FULL, OTHER, THIRD)})
    do_apply_consensus(run)
    row = LabelConsensus.objects.get(run=run, dimension__code="capability")
    assert (row.outcome, row.label) == ("none", None)
    assert row.votes == {
        "fault_diagnosis": 1,
        "quality_metrology": 1,
        "safety_compliance": 1,
    }
    assert row.annotator_count == 3
    assert not FinalLabel.objects.filter(item=items["N"]).exists()
    assert not ItemEvent.objects.filter(item=items["N"], kind="label").exists()


@pytest.mark.parametrize("provenance", ["adjudicated", "manual"])
def test_human_decisions_are_kept(benchmark, annotators, provenance):
    run, items = labelled_run(
        benchmark, annotators, {"H": (FULL, FULL, FULL), "S": (FULL, FULL, FULL)}
    )
    human = label("capability", "quality_metrology")
    do_set_final_label(items["H"], human, provenance=provenance)
    agreeing = label("capability", "fault_diagnosis")
    do_set_final_label(items["S"], agreeing, provenance=provenance)
    events_before = ItemEvent.objects.count()
    do_apply_consensus(run)
    assert final(items["H"], "capability").label == human
    assert final(items["H"], "capability").provenance == provenance
    assert final(items["S"], "capability").provenance == provenance
    kept = dict(
        LabelConsensus.objects.filter(
            run=run, dimension__code="capability"
        ).values_list("item__external_id", "kept_final_label")
    )
    # Flagged only where the human decision differs from the machines' label.
    assert kept == {"H": True, "S": False}
    # Only the two industry labels were written.
    assert ItemEvent.objects.count() == events_before + 2


def test_an_imported_label_is_kept_and_the_consensus_becomes_a_suggestion(
    benchmark, annotators, manager
):
    run, items = labelled_run(
        benchmark, annotators, {"I": (OTHER, OTHER, FULL), "J": (FULL, FULL, FULL)}
    )
    imported = label("capability", "fault_diagnosis")
    do_set_final_label(items["I"], imported, provenance="imported")
    do_set_final_label(items["J"], imported, provenance="imported")
    history = ItemEvent.objects.count()
    do_apply_consensus(run)
    assert final(items["I"], "capability").label == imported
    assert final(items["I"], "capability").provenance == "imported"
    suggestion = LabelConsensus.objects.get(
        run=run, item=items["I"], dimension__code="capability"
    )
    assert suggestion.kept_final_label and suggestion.label.code == "quality_metrology"
    agreeing = LabelConsensus.objects.get(
        run=run, item=items["J"], dimension__code="capability"
    )
    assert not agreeing.kept_final_label
    # Only the industry labels, which had none, were written.
    assert ItemEvent.objects.count() == history + 2

    application = do_apply_suggestions(run, [suggestion.pk], manager)
    applied = final(items["I"], "capability")
    assert (applied.label.code, applied.provenance, applied.decided_by) == (
        "quality_metrology",
        "majority",
        manager,
    )
    event = ItemEvent.objects.filter(item=items["I"]).order_by("-id").first()
    assert event.before == {"label": "fault_diagnosis", "provenance": "imported"}
    assert event.after == {"label": "quality_metrology", "provenance": "majority"}
    suggestion.refresh_from_db()
    assert not suggestion.kept_final_label

    assert do_undo_suggestions(application, manager) == 1
    restored = final(items["I"], "capability")
    assert (restored.label, restored.provenance, restored.decided_by) == (
        imported,
        "imported",
        None,
    )
    undo = ItemEvent.objects.filter(item=items["I"]).order_by("-id").first()
    assert undo.after == {"label": "fault_diagnosis", "provenance": "imported"}
    suggestion.refresh_from_db()
    assert suggestion.kept_final_label
    with pytest.raises(ValidationError, match="already undone"):
        do_undo_suggestions(application, manager)


def test_undo_leaves_a_label_changed_since_and_a_person_is_never_overruled(
    benchmark, annotators, manager
):
    run, items = labelled_run(
        benchmark, annotators, {"I": (OTHER, OTHER, FULL), "H": (OTHER, OTHER, OTHER)}
    )
    imported = label("capability", "fault_diagnosis")
    do_set_final_label(items["I"], imported, provenance="imported")
    do_set_final_label(items["H"], imported, provenance="manual")
    do_apply_consensus(run)
    rows = LabelConsensus.objects.filter(run=run, kept_final_label=True)
    application = do_apply_suggestions(run, rows.values_list("pk", flat=True), manager)
    assert [change["item"] for change in application.changes] == [items["I"].pk]
    assert final(items["H"], "capability").provenance == "manual"
    later = label("capability", "safety_compliance")
    do_set_final_label(items["I"], later, provenance="manual")
    assert do_undo_suggestions(application, manager) == 0
    assert final(items["I"], "capability").label == later


def test_applying_again_writes_no_history(benchmark, annotators):
    run, _ = labelled_run(
        benchmark, annotators, {"A": (FULL, FULL, FULL), "B": (OTHER, FULL, OTHER)}
    )
    do_apply_consensus(run)
    events = ItemEvent.objects.count()
    decided = dict(FinalLabel.objects.values_list("pk", "decided_at"))
    do_apply_consensus(run)
    assert ItemEvent.objects.count() == events
    assert dict(FinalLabel.objects.values_list("pk", "decided_at")) == decided
    assert LabelConsensus.objects.filter(run=run).count() == 4


def test_a_simulated_run_never_sets_final_labels(benchmark, annotators):
    run, _ = labelled_run(
        benchmark, annotators, {"A": (FULL, FULL, FULL)}, origin="simulated"
    )
    do_apply_consensus(run)
    assert LabelConsensus.objects.filter(run=run, outcome="full").count() == 2
    assert not FinalLabel.objects.exists()


def count_queries(benchmark, annotators, n):
    votes = {f"Q{n}-{i}": (FULL, OTHER, FULL) for i in range(n)}
    run, _ = labelled_run(benchmark, annotators, votes)
    with CaptureQueriesContext(connection) as queries:
        do_apply_consensus(run)
    assert FinalLabel.objects.filter(item__external_id__startswith=f"Q{n}-").count()
    return len(queries)


def test_query_count_does_not_grow_with_the_items(benchmark, annotators):
    assert count_queries(benchmark, annotators, 3) == count_queries(
        benchmark, annotators, 40
    )
