import os
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

app = Celery("assay")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The judging app keeps its tasks with each domain (judging/<domain>/tasks.py).
app.autodiscover_tasks(
    [
        "judging.llm",
        "judging.runs",
        "judging.labelling",
        "judging.evaluation",
        "judging.translation",
    ]
)


@app.on_after_finalize.connect
def create_filesystem_broker_folders(sender, **kwargs):
    """The embedded filesystem broker needs its folders before the worker or the web
    process first touches a queue; the app finalizes before either does."""
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        if options.get(key):
            Path(options[key]).mkdir(parents=True, exist_ok=True)
