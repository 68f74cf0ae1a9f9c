"""Labelling and translation runs through the API: the counters and progress their
pages poll, from the same functions."""

from judging.labelling.models import LabellingRun
from judging.labelling.runs import run_progress
from judging.llm.models import Endpoint
from judging.llm.prompts import default_template
from judging.translation.models import TranslationRun
from tests.api.helpers import BASE, token_client


def test_a_labelling_runs_progress(benchmark, personas):
    run = LabellingRun.objects.create(
        benchmark=benchmark,
        template=default_template("labelling"),
        status=LabellingRun.Status.RUNNING,
        total_calls=10,
        done_calls=4,
        failed_calls=1,
    )
    run.annotators.set(
        [Endpoint.objects.create(name="ann-b", base_url="http://127.0.0.1:9/v1")]
    )
    body = token_client(personas["manager"]).get(f"{BASE}/runs/labelling/{run.pk}")
    assert body.status_code == 200, body.content
    body = body.json()
    assert (body["status"], body["annotators"]) == ("running", ["ann-b"])
    expected = run_progress(run)
    assert {k: body["progress"][k] for k in ("total", "done", "failed", "pending")} == {
        k: expected[k] for k in ("total", "done", "failed", "pending")
    }


def test_a_translation_runs_counts_per_language(benchmark, personas):
    run = TranslationRun.objects.create(
        benchmark=benchmark, languages=["en", "ru"], total_tasks=8, flagged=3
    )
    body = token_client(personas["manager"]).get(f"{BASE}/runs/translation/{run.pk}")
    assert body.status_code == 200, body.content
    body = body.json()
    assert (body["total_tasks"], body["finished_tasks"]) == (8, 3)
    assert set(body["per_language"]) == {"en", "ru"}
    assert body["totals"]["pending"] == 0


def test_an_unknown_run_is_a_404(db, personas):
    client = token_client(personas["manager"])
    assert client.get(f"{BASE}/runs/labelling/999999").status_code == 404
    assert client.get(f"{BASE}/runs/translation/999999").status_code == 404
