"""Statement counts of the hot and polled pages stay bounded (STYLE.md §5)."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import progress
from annotation.actions import do_create_grading_campaign
from benchmark.models import Rendering
from tests.annotation.factories import HTMX, make_items, make_run, take_next_task

pytestmark = pytest.mark.django_db
# The user with their roles (one statement, benchmark/auth_backends.py), campaign,
# posted task; lock + submit + label insert; pick + lease (two transactions); the
# next task's content, its other languages and my count. BEGIN/COMMIT included. The
# session comes from the cache.
SUBMIT_AND_NEXT_STATEMENTS = 15


@pytest.fixture
def responses(benchmark):
    items = make_items(benchmark, 8)
    responses = make_run(benchmark, items)[1]
    # As in real runs, each response names the rendering its question came from.
    for response in responses:
        response.rendering = Rendering.objects.get(item=response.item, is_current=True)
        response.save(update_fields=["rendering"])
    return responses


def grading(benchmark, people, name="Calibration"):
    return do_create_grading_campaign(
        benchmark, name=name, size=8, seed=3, ask_safety=True, assignees=people
    )


def shown_task(response) -> str:
    html = response.content.decode()
    start = html.index('data-task="') + len('data-task="')
    return html[start : html.index('"', start)]


def test_submit_and_next_stays_within_its_statement_budget(
    benchmark, responses, personas, client_for, monkeypatch
):
    # Progress and pace come from the cache; keep them there however slow the
    # machine, so the count is the hot path's own.
    monkeypatch.setattr(progress, "PROGRESS_CACHE_SECONDS", 600)
    campaign = grading(benchmark, [personas["expert"]])
    client = client_for("expert")
    url = reverse("annotation:grade", args=[campaign.pk])
    task = shown_task(take_next_task(client, url))
    for _ in range(3):
        with CaptureQueriesContext(connection) as queries:
            response = client.post(
                url, {"task": task, "score": "1", "safety": "s"}, **HTMX
            )
        assert response.status_code == 200
        assert shown_task(response) not in ("", task)
        task = shown_task(response)
        assert len(queries) <= SUBMIT_AND_NEXT_STATEMENTS, [
            q["sql"][:80] for q in queries
        ]


def test_queue_page_queries_do_not_grow_with_campaigns(
    benchmark, responses, personas, client_for
):
    client = client_for("expert")
    client.get(reverse("annotation:queues"))  # one-time per-process lookups
    counts = []
    for name in ("First", "Second", "Third"):
        grading(benchmark, [personas["expert"]], name=name)
        cache.clear()
        with CaptureQueriesContext(connection) as queries:
            page = client.get(reverse("annotation:queues"))
        assert page.status_code == 200 and name in page.content.decode()
        counts.append(len(queries))
    assert counts[0] == counts[1] == counts[2]


def test_dashboard_reads_the_labels_once_per_poll(
    benchmark, responses, personas, client_for
):
    campaign = grading(benchmark, [personas["expert"]])
    expert = client_for("expert")
    url = reverse("annotation:grade", args=[campaign.pk])
    task = shown_task(take_next_task(expert, url))
    expert.post(url, {"task": task, "score": "3", "safety": "s"}, **HTMX)
    with CaptureQueriesContext(connection) as queries:
        page = client_for("manager").get(
            reverse("annotation:campaign", args=[campaign.pk]), **HTMX
        )
    assert page.status_code == 200
    every_label = [
        q["sql"]
        for q in queries
        if 'FROM "annotation_gradinglabel"' in q["sql"] and "LIMIT" not in q["sql"]
    ]
    assert len(every_label) == 1, every_label
