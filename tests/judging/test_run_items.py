"""Every run start covers the same items for the same filter: "at most N items" is
the first N by external id for labelling, translation and evaluation alike."""

from benchmark.models import Rendering
from judging.evaluation.actions import evaluation_items
from judging.runs.items import filtered_items
from tests.judging.labelling_fixtures import add_items


def test_at_most_n_items_is_the_first_n_by_external_id_for_every_run(db, benchmark):
    # Made in an order that is not the external ids' order.
    made = add_items(benchmark, ["GB-0003", "GB-0001", "GB-0004", "GB-0002"])
    Rendering.objects.update(review_status=Rendering.ReviewStatus.APPROVED)
    by_id = {item.pk: item.external_id for item in made}
    spec = {"limit": 2}
    labelled = [by_id[item.pk] for item in filtered_items(benchmark.pk, spec)]
    evaluated = [by_id[pk] for pk, _ in evaluation_items(benchmark, "zh", spec)]
    assert labelled == evaluated == ["GB-0001", "GB-0002"]
    narrowed = {"external_ids": ["GB-0004", "GB-0003"], "limit": 1}
    assert [i.external_id for i in filtered_items(benchmark.pk, narrowed)] == [
        "GB-0003"
    ]
    assert [by_id[pk] for pk, _ in evaluation_items(benchmark, "zh", narrowed)] == [
        "GB-0003"
    ]
