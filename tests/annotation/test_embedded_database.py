"""The demo's embedded database under ordinary concurrent use: several people
submitting while a background worker writes (#18). On SQLite, `make test`'s smoke run,
this goes through the ORM path of `reviewqueue.overlap`; the same test runs on
PostgreSQL."""

import io
import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections

from annotation.actions import do_create_grading_campaign, do_submit_grading
from annotation.models import GradingLabel
from annotation.queue import do_claim_next
from benchmark.importing import do_import_items
from benchmark.models import Item
from tests.annotation.factories import make_items, make_run
from tests.benchmark.importing_helpers import industrybench_csv, industrybench_row

PEOPLE = 4
TASKS = 24
IMPORTS = 6
ITEMS_PER_IMPORT = 40


@pytest.mark.smoke
@pytest.mark.django_db(transaction=True)
def test_people_submit_while_a_worker_writes_and_nobody_sees_a_locked_database(
    benchmark,
):
    items = make_items(benchmark, TASKS)
    make_run(benchmark, items)
    people = [get_user_model().objects.create_user(f"p{i}") for i in range(PEOPLE)]
    campaign = do_create_grading_campaign(
        benchmark, name="Busy", size=TASKS, seed=1, overlap=2, assignees=people
    )
    errors: list[str] = []
    start = threading.Barrier(PEOPLE + 1)

    def annotate(user):
        try:
            start.wait()
            while (assignment := do_claim_next(campaign, user)) is not None:
                do_submit_grading(assignment.task, user, score=2, seconds=1)
        except Exception as error:  # surfaced by the assertion below
            errors.append(f"{user.username}: {error!r}")
        finally:
            connections.close_all()

    def background_imports():
        # What a worker does during a background import: long write transactions.
        try:
            start.wait()
            for batch in range(IMPORTS):
                rows = [
                    industrybench_row(f"W{batch}-{index}")
                    for index in range(ITEMS_PER_IMPORT)
                ]
                do_import_items(io.BytesIO(industrybench_csv(rows)), slug=f"w{batch}")
        except Exception as error:  # surfaced by the assertion below
            errors.append(f"worker: {error!r}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=annotate, args=(user,)) for user in people]
    threads.append(threading.Thread(target=background_imports))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert all(not thread.is_alive() for thread in threads)
    assert errors == [], f"{connection.vendor}: {errors}"
    assert GradingLabel.objects.count() == TASKS * 2
    assert (
        Item.objects.exclude(benchmark=benchmark).count() == IMPORTS * ITEMS_PER_IMPORT
    )
