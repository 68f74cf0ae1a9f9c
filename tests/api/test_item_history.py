"""An item's history through the API: every rendering version, the final labels with
their provenance and the item's events, as the item page shows them."""

from benchmark.actions import do_add_rendering_version
from benchmark.models import Rendering
from tests.annotation.factories import make_items
from tests.api.helpers import BASE, token_client


def test_versions_labels_and_events(benchmark, personas):
    item = make_items(benchmark, 1)[0]
    do_add_rendering_version(
        item,
        "zh",
        question="问题 0: 改写后的问题?",
        answer="参考答案 0: 8.8 级",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.PENDING,
        user=personas["expert"],
    )
    url = f"{BASE}/benchmarks/{benchmark.slug}/items/{item.external_id}/history"
    response = token_client(personas["reviewer"]).get(url)
    assert response.status_code == 200, response.content
    history = response.json()
    assert history["id"] == item.pk
    zh = next(r for r in history["renderings"] if r["language"] == "zh")
    assert [
        (v["version"], v["is_current"], v["origin"], v["review_status"])
        for v in zh["versions"]
    ] == [(2, True, "human_edited", "pending"), (1, False, "source", "approved")]
    assert zh["versions"][0]["created_by"] == "expert"
    assert [(lab["dimension"], lab["provenance"]) for lab in history["labels"]] == [
        ("capability", "imported")
    ]
    edit = next(e for e in history["events"] if e["user"] == "expert")
    changes = {change["field"]: change for change in edit["changes"]}
    assert changes["question"]["after"] == "问题 0: 改写后的问题?"


def test_an_unknown_item_is_a_404(benchmark, personas):
    url = f"{BASE}/benchmarks/{benchmark.slug}/items/NOPE/history"
    assert token_client(personas["expert"]).get(url).status_code == 404
