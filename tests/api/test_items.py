"""Items through the API: keyset pages that never skip or repeat an item, the item
browser's filters, and bulk writes that are all or nothing."""

import json

import pytest

from benchmark.models import FinalLabel, Item, ItemEvent, Rendering
from tests.api.helpers import BASE, generic_item, token_client
from tests.benchmark.factories import make_plain_items, make_sample_items


@pytest.fixture
def manager_api(personas):
    return token_client(personas["manager"])


def items_url(benchmark) -> str:
    return f"{BASE}/benchmarks/{benchmark.slug}/items"


def page_through(client, url, **query) -> list[dict]:
    """Every item, following next_cursor to the last page."""
    seen, cursor = [], None
    while True:
        params = {**query, **({"cursor": cursor} if cursor else {})}
        response = client.get(url, params)
        assert response.status_code == 200, response.content
        body = response.json()
        seen += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


def test_pages_hold_every_item_once_in_creation_order(benchmark, manager_api):
    items = make_plain_items(benchmark, 23)
    seen = page_through(manager_api, items_url(benchmark), limit=5)
    assert [item["id"] for item in seen] == [item.pk for item in items]


def test_items_inserted_while_paging_neither_shift_nor_repeat_a_page(
    benchmark, manager_api
):
    first = make_plain_items(benchmark, 10, prefix="A")
    url = items_url(benchmark)
    page = manager_api.get(url, {"limit": 4}).json()
    # New items land while the client is between pages, some of them with ids
    # that sort before every existing one.
    make_plain_items(benchmark, 3, prefix="0")
    rest = page_through(manager_api, url, limit=4, cursor=page["next_cursor"])
    ids = [item["id"] for item in page["items"] + rest]
    assert len(ids) == len(set(ids)) == 13
    assert ids[:10] == [item.pk for item in first]


def test_an_item_carries_its_current_renderings_and_final_labels(
    benchmark, manager_api, personas
):
    items = make_sample_items(benchmark, user=personas["manager"])
    item = items["IB-0001"]
    rendering = item.renderings.get(language="en", is_current=True)
    body = manager_api.get(items_url(benchmark), {"external_id": "IB-0001"}).json()
    (found,) = body["items"]
    assert found["id"] == item.pk
    assert set(found["renderings"]) == {"zh", "en", "ru", "vi"}
    assert found["renderings"]["en"] == {
        "question": rendering.question,
        "answer": rendering.answer,
        "version": 1,
        "origin": "imported",
        "review_status": "approved",
    }
    assert found["labels"]["capability"]["code"] == "standards_terminology"
    assert found["labels"]["industry"]["provenance"] == "imported"
    assert body["next_cursor"] is None


def test_filters_are_the_item_browsers(benchmark, manager_api, personas):
    make_sample_items(benchmark, user=personas["manager"])
    url = items_url(benchmark)

    def ids(**query):
        return {item["external_id"] for item in page_through(manager_api, url, **query)}

    everything = set(Item.objects.values_list("external_id", flat=True))
    easy = set(
        Item.objects.filter(difficulty="easy").values_list("external_id", flat=True)
    )
    assert ids(difficulty="easy") == easy
    labelled = set(
        FinalLabel.objects.filter(label__code="standards_terminology").values_list(
            "item__external_id", flat=True
        )
    )
    assert labelled and ids(label="capability:standards_terminology") == labelled
    assert ids(label="capability:none") == everything - set(
        FinalLabel.objects.filter(dimension__code="capability").values_list(
            "item__external_id", flat=True
        )
    )
    assert ids(status="retired") == set()


@pytest.mark.parametrize(
    "query, parameter",
    [
        ({"difficulty": "impossible"}, "difficulty"),
        ({"label": "colour:red"}, "label"),
        ({"label": "capability:no_such_label"}, "label"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"limit": "501"}, "limit"),
    ],
)
def test_a_bad_filter_is_a_422_naming_it(benchmark, manager_api, query, parameter):
    response = manager_api.get(items_url(benchmark), query)
    assert response.status_code == 422
    assert parameter in json.dumps(response.json()["errors"])


def test_a_page_costs_a_fixed_number_of_queries(
    benchmark, manager_api, django_assert_max_num_queries
):
    make_plain_items(benchmark, 30)
    # A token's first call of the minute also notes its use (and audits it).
    manager_api.get(items_url(benchmark), {"limit": 1})
    with django_assert_max_num_queries(9):
        manager_api.get(items_url(benchmark), {"limit": 10})
    with django_assert_max_num_queries(9):
        manager_api.get(items_url(benchmark), {"limit": 30})


# ---------------------------------------------------------------------- bulk writes


def bulk(client, benchmark, items, **fields):
    return client.post(
        f"{items_url(benchmark)}/bulk",
        {"items": items, **fields},
        content_type="application/json",
    )


def test_bulk_creates_items_with_renderings_labels_and_history(
    benchmark, manager_api, personas
):
    response = bulk(manager_api, benchmark, [generic_item("N-1"), generic_item("N-2")])
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 2
    item = Item.objects.get(external_id="N-2")
    assert item.difficulty == "medium"
    assert item.renderings.filter(is_current=True).count() == 2
    assert item.final_labels.get().label.code == "fault_diagnosis"
    event = ItemEvent.objects.get(item=item)
    assert event.user == personas["manager"]
    assert event.summary == "Imported from the REST API"


def test_one_bad_item_and_nothing_is_written(benchmark, manager_api):
    bad = generic_item("N-2")
    bad["renderings"]["en"]["answer"] = ""
    items = [generic_item("N-1"), bad, generic_item("N-3", difficulty="extreme")]
    response = bulk(manager_api, benchmark, items)
    assert response.status_code == 422
    body = response.json()
    assert body["total"] == 2
    assert {(e["row"], e["item_id"], e["field"]) for e in body["errors"]} == {
        (1, "N-2", "renderings.en.answer"),
        (2, "N-3", "difficulty"),
    }
    assert not Item.objects.exists()
    assert not Rendering.objects.exists()


def test_bulk_updates_only_when_asked(benchmark, manager_api):
    assert bulk(manager_api, benchmark, [generic_item("N-1")]).status_code == 200
    changed = generic_item("N-1", difficulty="hard")
    changed["renderings"]["en"]["answer"] = "400 V."

    refused = bulk(manager_api, benchmark, [changed])
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == "id"

    response = bulk(manager_api, benchmark, [changed], update=True)
    assert response.status_code == 200
    assert response.json() | {"human_labels_kept": []} == {
        "created": 0,
        "updated": 1,
        "unchanged": 0,
        "renderings_added": 1,
        "labels_set": 0,
        "human_labels_kept": [],
    }
    item = Item.objects.get(external_id="N-1")
    assert item.difficulty == "hard"
    assert item.renderings.get(language="en", is_current=True).version == 2


@pytest.mark.parametrize(
    "body, row, field",
    [
        (json.dumps({"items": "N-1"}), None, "items"),
        (json.dumps({"items": []}), None, "items"),
        (json.dumps({"items": [["N-1"]]}), 0, "items"),
        (
            json.dumps({"items": [{"id": "N-1", "renderings": {}, "sbuset": 1}]}),
            0,
            "sbuset",
        ),
        (json.dumps({"items": [], "udpate": True}), None, "udpate"),
    ],
)
def test_a_malformed_call_is_a_422_and_writes_nothing(
    benchmark, manager_api, body, row, field
):
    response = manager_api.post(
        f"{items_url(benchmark)}/bulk", body, content_type="application/json"
    )
    assert response.status_code == 422, response.content
    error = response.json()["errors"][0]
    assert (error["row"], error["field"]) == (row, field)
    assert not Item.objects.exists()


def test_a_body_that_is_not_json_is_a_400_saying_so(benchmark, manager_api):
    response = manager_api.post(
        f"{items_url(benchmark)}/bulk", "{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("The request body is not valid JSON")
    assert not Item.objects.exists()


def test_a_call_over_the_size_limit_is_a_413(benchmark, manager_api, settings):
    settings.API_BULK_MAX_BYTES = 2000
    items = [generic_item(f"N-{n}") for n in range(20)]
    response = bulk(manager_api, benchmark, items)
    assert response.status_code == 413
    assert "API_BULK_MAX_BYTES" in response.json()["detail"]
    assert not Item.objects.exists()


def test_bulk_takes_more_than_the_form_limit(benchmark, manager_api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = bulk(manager_api, benchmark, [generic_item(f"N-{n}") for n in range(9)])
    assert response.status_code == 200, response.content
    assert Item.objects.count() == 9
