"""The routes a script wants beside the pages: exports as files for a token (not a
sign-in redirect), run import, subsets and the robustness report, each giving
what its page gives."""

import io
import json
import zipfile
from pathlib import Path

import pytest

from benchmark.models import ItemSubset
from judging.evaluation.models import EvaluationRun
from tests.api.helpers import BASE, token_client
from tests.judging.factories import make_items, make_run


@pytest.fixture
def manager_api(personas):
    return token_client(personas["manager"])


def test_a_token_downloads_the_items_as_jsonl_and_csv(benchmark, manager_api):
    items = make_items(benchmark, 3)
    url = f"{BASE}/benchmarks/{benchmark.slug}/export"
    jsonl = manager_api.get(url, {"format": "jsonl"})
    assert jsonl.status_code == 200
    assert (
        jsonl["Content-Disposition"] == f'attachment; filename="{benchmark.slug}.jsonl"'
    )
    lines = [
        json.loads(line) for line in b"".join(jsonl.streaming_content).splitlines()
    ]
    assert [line["id"] for line in lines] == [item.external_id for item in items]
    csv = manager_api.get(url, {"format": "csv"})
    text = b"".join(csv.streaming_content).decode("utf-8-sig")
    assert all(item.external_id in text for item in items)
    assert manager_api.get(url, {"format": "xlsx"}).status_code == 422


def test_the_hf_release_and_an_inspect_log_are_zips(benchmark, manager_api):
    items = make_items(benchmark, 2)
    run = make_run(benchmark, items, [3, 2], [False, False])
    release = manager_api.get(f"{BASE}/benchmarks/{benchmark.slug}/export/hf")
    assert release.status_code == 200
    assert "README.md" in zipfile.ZipFile(io.BytesIO(release.getvalue())).namelist()
    log = manager_api.get(f"{BASE}/runs/{run.pk}/export/inspect")
    assert log.status_code == 200
    assert zipfile.ZipFile(io.BytesIO(log.getvalue())).namelist()


def test_a_run_is_imported_from_a_file(benchmark, manager_api):
    items = make_items(benchmark, 2)
    lines = [
        {
            "id": item.external_id,
            "model_response": "An answer.",
            "model_name": "m",
            "score": score,
            "judge_reason": "r",
            "safety_violation": False,
            "safety_review_reason": "",
            "final_score": score,
        }
        for item, score in zip(items, [3, 1], strict=True)
    ]
    upload = io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    upload.name = "results.jsonl"
    url = f"{BASE}/benchmarks/{benchmark.slug}/runs/import"
    fields = {"model_name": "imported", "language": "zh", "category": "open"}
    response = manager_api.post(url, {**fields, "file": upload})
    assert response.status_code == 201, response.content
    run = EvaluationRun.objects.get(pk=response.json()["id"])
    assert (run.model_name, run.origin, run.total_items) == ("imported", "imported", 2)
    bad = io.BytesIO(b'{"id": "no-such-item"}\n')
    bad.name = "bad.jsonl"
    refused = manager_api.post(url, {**fields, "file": bad})
    assert refused.status_code == 422
    assert "nothing was imported" in refused.json()["detail"]
    assert EvaluationRun.objects.count() == 1


def test_a_subset_is_derived_and_listed(benchmark, manager_api):
    items = make_items(benchmark, 4)
    runs = [
        make_run(benchmark, items, scores, [False] * 4, model=model)
        for model, scores in (("a", [3, 1, 1, 3]), ("b", [1, 1, 3, 3]))
    ]
    url = f"{BASE}/benchmarks/{benchmark.slug}/subsets"
    call = {"name": "solved", "rule": "lpfqa-equal", "runs": [r.pk for r in runs]}
    response = manager_api.post(url, call, "application/json")
    assert response.status_code == 201, response.content
    # Solved by some model and not by every one: items 0 and 2.
    assert response.json()["item_ids"] == [items[0].pk, items[2].pk]
    assert manager_api.get(url).json()[0]["name"] == "solved"
    again = manager_api.post(
        url, call | {"name": "other", "runs": [runs[0].pk]}, "application/json"
    )
    assert again.status_code == 422
    assert ItemSubset.objects.count() == 1


def test_the_robustness_report_has_its_tables(benchmark, manager_api):
    response = manager_api.get(f"{BASE}/benchmarks/{benchmark.slug}/robustness")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"language", "runs", "seeds", "variants", "missing", "tables"}
    assert (body["language"], body["variants"]) == (benchmark.source_language, 0)
    unknown = manager_api.get(
        f"{BASE}/benchmarks/{benchmark.slug}/robustness", {"language": "xx"}
    )
    assert unknown.status_code == 404


def test_an_inspect_log_is_imported_with_a_score_map(benchmark, manager_api):
    make_items(benchmark, 4)
    log = Path(__file__).resolve().parents[1] / "fixtures/interop/inspect"
    upload = io.BytesIO((log / "open_answers.eval").read_bytes())
    upload.name = "open_answers.eval"
    url = f"{BASE}/benchmarks/{benchmark.slug}/runs/import"
    fields = {"language": "en", "scorer": "match", "assume_no_violation": "true"}
    refused = manager_api.post(url, {**fields, "score_map": "C=three", "file": upload})
    assert refused.status_code == 422
    assert "a score is a whole number" in refused.json()["detail"]
    upload.seek(0)
    response = manager_api.post(url, {**fields, "score_map": "C=2,I=0", "file": upload})
    assert response.status_code == 201, response.content
    run = EvaluationRun.objects.get(pk=response.json()["id"])
    assert (run.model_name, run.language) == ("mockllm/model", "en")
    assert run.source_metadata["score_map"]["values"] == {"C": 2, "I": 0}
