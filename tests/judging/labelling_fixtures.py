"""Shared pieces of the labelling tests: items, a stub responder that answers as
three (or four) annotator models with planned agreement, and a real Celery worker
process pointed at the test database."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from django.conf import settings

from benchmark.models import Item, Label, Rendering
from judging.labelling.models import AnnotatorLabel, LabellingRun
from judging.llm.prompts import default_template
from tests.openai_stub import first_user_text

# item -> the (capability, industry) each annotator model answers
PLAN = {
    "IT-1": {
        "ann-a": ("fault_diagnosis", "energy_storage"),
        "ann-b": ("fault_diagnosis", "energy_storage"),
        "ann-c": ("fault_diagnosis", "energy_storage"),
    },
    "IT-2": {
        "ann-a": ("engineering_calculation", "electrical_power"),
        "ann-b": ("engineering_calculation", "machinery_hardware"),
        "ann-c": ("quality_metrology", "electrical_power"),
    },
    "IT-3": {
        "ann-a": ("safety_compliance", "chemical_coatings"),
        "ann-b": ("process_principles", "metallurgy_mining"),
        "ann-c": ("standards_terminology", "textile_leather"),
    },
    "IT-4": {
        "ann-a": ("standards_terminology", "cross_industry"),
        "ann-b": ("standards_terminology", "cross_industry"),
        "ann-c": None,  # never gives usable JSON
    },
}
FOURTH = {  # a fourth annotator, added later
    "IT-1": ("fault_diagnosis", "energy_storage"),
    "IT-2": ("quality_metrology", "machinery_hardware"),
    "IT-3": ("safety_compliance", "chemical_coatings"),
    "IT-4": ("standards_terminology", "cross_industry"),
}


def annotate(body):
    found = re.search(r"Question: (IT-\d+)", first_user_text(body))
    if found is None:
        return "OK"  # a connection test
    external_id = found.group(1)
    model = body["model"].removesuffix("-model")
    answer = FOURTH[external_id] if model == "ann-d" else PLAN[external_id][model]
    if answer is None:
        return "I would rather not say."
    capability, industry = answer
    return json.dumps(
        {
            "capability": capability,
            "industry": industry,
            "rationale": f"{model} thinks so",
        }
    )


def add_items(benchmark, external_ids):
    created = []
    for external_id in external_ids:
        item = Item.objects.create(benchmark=benchmark, external_id=external_id)
        Rendering.objects.create(
            item=item,
            language="zh",
            question=f"{external_id} 题目",
            answer="答案",
            origin=Rendering.Origin.SOURCE,
        )
        created.append(item)
    return created


ROOT = Path(__file__).resolve().parents[2]


def database_url_of_tests() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return (
        f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
        + (db["NAME"])
    )


class Worker:
    def __init__(self):
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url_of_tests(),
            "STUB_API_KEY": "k",
            "LABELLING_STALE_SECONDS": "2",
            "LLM_LEASE_SECONDS": "2",
            "LLM_BACKOFF_BASE_MS": "20",
        }
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [
                str(ROOT / ".venv/bin/celery"),
                "-A",
                "assay",
                "worker",
                "--loglevel=WARNING",
                "--concurrency=1",
                "--without-gossip",
                "--without-mingle",
                "-n",
                f"labelling-test-{os.getpid()}@%h",
            ],
            cwd=ROOT,
            env=self.env,
            start_new_session=True,
        )

    def kill(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def clear_broker() -> None:
    """Drop queued and unacknowledged messages left by earlier runs (a killed worker
    leaves its message unacknowledged; the broker would redeliver it an hour later
    to whatever worker then listens, possibly with another test database). Only
    this run's: the broker's own client puts settings.REDIS_NAMESPACE before every
    key, so another checkout's run on the same Redis keeps its messages."""
    from assay.celery import app

    app.control.purge()
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        channel.client.delete(channel.unacked_key, channel.unacked_index_key)


def wait_until(condition, timeout, message):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(message)


# (capability, industry) votes of one annotator.
FULL = ("fault_diagnosis", "energy_storage")
OTHER = ("quality_metrology", "electrical_power")
THIRD = ("safety_compliance", "chemical_coatings")


def label(dimension, code):
    return Label.objects.get(dimension__code=dimension, code=code)


def labelled_run(benchmark, annotators, votes, *, origin="pipeline"):
    """A complete run whose annotators gave `votes`: external id -> per annotator
    (capability, industry) or None for an unusable reply."""
    items = {item.external_id: item for item in add_items(benchmark, votes)}
    run = LabellingRun.objects.create(
        benchmark=benchmark,
        template=default_template("labelling"),
        status=LabellingRun.Status.COMPLETE,
        origin=origin,
    )
    run.annotators.set(annotators)
    dimensions = {d.code: d for d in benchmark.dimensions.all()}
    rows = []
    for external_id, answers in votes.items():
        for annotator, answer in zip(annotators, answers, strict=True):
            for position, code in enumerate(("capability", "industry")):
                rows.append(
                    AnnotatorLabel(
                        run=run,
                        item=items[external_id],
                        annotator=annotator,
                        dimension=dimensions[code],
                        label=label(code, answer[position]) if answer else None,
                        status="labelled" if answer else "unparseable",
                    )
                )
    AnnotatorLabel.objects.bulk_create(rows)
    return run, items
