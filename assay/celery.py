import os
from functools import partial
from pathlib import Path

from celery import Celery
from django.db import transaction

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

app = Celery("assay")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def enqueue(task_name: str, *args, countdown: float | None = None) -> None:
    """Queue a registered task by name once the current transaction commits, to run
    at once or `countdown` seconds later (a retry's back-off).

    By name, so that code which queues a task never imports the tasks module that
    imports it back (no import cycles); every task is registered in every process
    by its app's `ready()`, and an unknown name fails here, loudly."""
    task = app.tasks[task_name]
    if countdown is None:
        transaction.on_commit(partial(task.delay, *args))
    else:
        transaction.on_commit(partial(task.apply_async, args, countdown=countdown))


@app.on_after_finalize.connect
def create_filesystem_broker_folders(sender, **kwargs):
    """The embedded filesystem broker needs its folders before the worker or the web
    process first touches a queue; the app finalizes before either does."""
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        if options.get(key):
            Path(options[key]).mkdir(parents=True, exist_ok=True)
