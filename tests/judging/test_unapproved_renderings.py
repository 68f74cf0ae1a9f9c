"""An evaluation run in a target language asks approved translations unless the
manager chooses otherwise, and the leaderboard says when a run did (#19)."""

import pytest

from benchmark.models import Rendering
from judging.evaluation.actions import evaluation_items
from judging.evaluation.preview import run_preview
from judging.leaderboard import building
from tests.judging.factories import make_items, make_run

pytestmark = pytest.mark.django_db

EVERYTHING = {"external_ids": [], "difficulty": "", "labels": [], "limit": None}


@pytest.fixture
def items(benchmark):
    items = make_items(benchmark, 4)
    statuses = ["approved", "flagged", "pending", "rejected"]
    for item, status in zip(items, statuses, strict=True):
        Rendering.objects.filter(item=item, language="en").update(review_status=status)
    return items


def test_only_approved_translations_are_asked_unless_chosen(benchmark, items):
    asked = {pk for pk, _ in evaluation_items(benchmark, "en", EVERYTHING)}
    assert asked == {items[0].pk}
    wider = {**EVERYTHING, "include_unapproved": True}
    asked = {pk for pk, _ in evaluation_items(benchmark, "en", wider)}
    assert asked == {items[0].pk, items[1].pk, items[2].pk}  # never a rejected one
    zh = {pk for pk, _ in evaluation_items(benchmark, "zh", EVERYTHING)}
    assert zh == {item.pk for item in items}


def test_the_preview_counts_what_is_left_out(benchmark, items):
    endpoints = {"tested": None, "judge": None, "sv_judge": None}
    preview = run_preview(
        benchmark, language="en", item_filter=EVERYTHING, endpoints=endpoints
    )
    assert (preview.items, preview.unapproved) == (1, 2)
    wider = {**EVERYTHING, "include_unapproved": True}
    preview = run_preview(
        benchmark, language="en", item_filter=wider, endpoints=endpoints
    )
    assert (preview.items, preview.unapproved) == (3, 0)


def test_the_leaderboard_names_runs_that_asked_unapproved_translations(
    benchmark, items
):
    strict = make_run(benchmark, items, [3, 2, 1, 0], [False] * 4, language="en")
    loose = make_run(
        benchmark, items, [3, 3, 3, 3], [False] * 4, model="loose", language="en"
    )
    loose.item_filter = {"include_unapproved": True}
    loose.save(update_fields=["item_filter"])
    notes = building.build_report(benchmark, language="en").tables["leaderboard"].notes
    named = [note for note in notes if "not approved in review" in note]
    assert len(named) == 1
    assert "loose" in named[0] and strict.model_name not in named[0]
