"""Twenty people claiming and submitting at once over one campaign (PostgreSQL)."""

import random
import threading
from collections import Counter, defaultdict

import pytest
from django.contrib.auth import get_user_model
from django.db import connections

from annotation.actions import do_create_grading_campaign, do_submit_grading
from annotation.models import Assignment, GradingLabel, Task
from annotation.queue import do_claim_next
from tests.annotation.factories import make_items, make_run

WORKERS = 20
TASKS = 60
OVERLAP = 3


def max_simultaneous(intervals):
    """Largest number of [start, end) intervals covering one instant."""
    edges = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    depth = peak = 0
    for _, step in edges:
        depth += step
        peak = max(peak, depth)
    return peak


@pytest.mark.django_db(transaction=True)
def test_twenty_parallel_annotators_fill_every_task_exactly(benchmark):
    items = make_items(benchmark, TASKS)
    make_run(benchmark, items)
    people = [get_user_model().objects.create_user(f"w{i}") for i in range(WORKERS)]
    campaign = do_create_grading_campaign(
        benchmark, name="Load", size=TASKS, seed=1, overlap=OVERLAP, assignees=people
    )
    submitted = defaultdict(list)
    errors = []
    start = threading.Barrier(WORKERS)

    def work(user):
        rng = random.Random(user.pk)
        try:
            start.wait()
            while (assignment := do_claim_next(campaign, user)) is not None:
                score = rng.randrange(4)
                do_submit_grading(assignment.task, user, score=score, seconds=1)
                submitted[user.pk].append((assignment.task_id, score))
        except Exception as error:  # surfaced by the assertion below
            errors.append(repr(error))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(user,)) for user in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)

    assert errors == []
    assert all(not thread.is_alive() for thread in threads)
    # Zero lost submissions: every label a worker saw accepted is stored, and
    # nothing else is.
    expected = {
        (user_id, task_id, score)
        for user_id, rows in submitted.items()
        for task_id, score in rows
    }
    stored = set(GradingLabel.objects.values_list("user_id", "task_id", "score"))
    assert stored == expected
    # Every task has exactly OVERLAP labels, from OVERLAP different people.
    per_task = Counter(
        GradingLabel.objects.filter(is_latest=True).values_list("task_id", flat=True)
    )
    assert len(per_task) == TASKS
    assert set(per_task.values()) == {OVERLAP}
    assert set(Task.objects.values_list("label_count", flat=True)) == {OVERLAP}
    assert len(expected) == TASKS * OVERLAP
    # Never more than OVERLAP people held one task at the same time.
    leases = defaultdict(list)
    for task_id, claimed, finished in Assignment.objects.values_list(
        "task_id", "claimed_at", "finished_at"
    ):
        leases[task_id].append((claimed, finished))
    assert max(max_simultaneous(spans) for spans in leases.values()) <= OVERLAP
    assert Assignment.objects.exclude(status="submitted").count() == 0


@pytest.mark.django_db(transaction=True)
def test_one_person_claiming_from_many_tabs_at_once_holds_one_lease(benchmark):
    items = make_items(benchmark, 10)
    make_run(benchmark, items)
    person = get_user_model().objects.create_user("tabs")
    campaign = do_create_grading_campaign(
        benchmark, name="Tabs", size=10, seed=1, overlap=1, assignees=[person]
    )
    tabs = 8
    start = threading.Barrier(tabs)
    leases, errors = [], []

    def claim():
        try:
            start.wait()
            leases.append(do_claim_next(campaign, person).pk)
        except Exception as error:  # surfaced by the assertion below
            errors.append(repr(error))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=claim) for _ in range(tabs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    # Every tab resumes the one lease the first claim took.
    assert len(set(leases)) == 1 and len(leases) == tabs
    assert Assignment.objects.filter(user=person).count() == 1
