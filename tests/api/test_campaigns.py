"""Campaigns through the API: the progress the queue list and the campaign page show,
and the label export's rows in keyset pages that add up to the whole export."""

import pytest

from annotation.actions import do_create_grading_campaign, do_submit_grading
from annotation.dashboard import export_rows
from annotation.queue import do_claim_next
from tests.annotation.factories import make_items, make_run
from tests.api.helpers import BASE, token_client


@pytest.fixture
def campaign(benchmark, personas):
    make_run(benchmark, make_items(benchmark, 6))
    campaign = do_create_grading_campaign(
        benchmark,
        name="Calibration",
        size=6,
        seed=7,
        overlap=2,
        assignees=[personas["expert"], personas["manager"]],
    )
    # Both grade the same first task (complete at overlap 2), the expert a second
    # one too and then corrects nothing: three labels, one complete task.
    for user in (personas["expert"], personas["manager"], personas["expert"]):
        assignment = do_claim_next(campaign, user)
        do_submit_grading(assignment.task, user, score=2, seconds=4)
    return campaign


@pytest.fixture
def manager_api(personas):
    return token_client(personas["manager"])


def test_list_counts_tasks_and_labels(benchmark, campaign, manager_api):
    listed = manager_api.get(f"{BASE}/benchmarks/{benchmark.slug}/campaigns").json()
    assert len(listed) == 1
    row = listed[0]
    assert (row["id"], row["name"], row["kind"], row["scale"]) == (
        campaign.pk,
        "Calibration",
        "grading",
        "rubric",
    )
    assert (row["status"], row["overlap"]) == ("open", 2)
    assert (row["tasks_total"], row["tasks_done"]) == (6, 1)
    assert row["progress"] == {"done": 3, "needed": 12, "people": 2}


def test_detail_shows_the_pages_progress(campaign, manager_api):
    detail = manager_api.get(f"{BASE}/campaigns/{campaign.pk}").json()
    assert (detail["tasks_total"], detail["tasks_done"]) == (6, 1)
    assert detail["progress"]["done"] == 3
    assert detail["median_seconds"] == 4
    people = {p["username"]: p for p in detail["people"]}
    assert people["expert"]["submitted"] == 2
    assert people["manager"]["submitted"] == 1
    assert detail["majority"] is None


def test_labels_page_through_the_whole_export(campaign, manager_api):
    url = f"{BASE}/campaigns/{campaign.pk}/labels"
    first = manager_api.get(url, {"limit": 2}).json()
    assert len(first["labels"]) == 2 and first["next_cursor"]
    rest = manager_api.get(url, {"limit": 2, "cursor": first["next_cursor"]}).json()
    assert rest["next_cursor"] is None
    assert first["labels"] + rest["labels"] == list(export_rows(campaign))


def test_a_bad_cursor_is_a_422_naming_it(campaign, manager_api):
    response = manager_api.get(
        f"{BASE}/campaigns/{campaign.pk}/labels", {"cursor": "nonsense"}
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["query", "cursor"]
