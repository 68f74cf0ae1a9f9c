"""Inspect AI logs: a run exported as a `.eval` zip of inspect_ai's schema, and
Inspect `.eval` / `.json` logs imported as runs, all-or-nothing."""

import io
import json
import zipfile

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from benchmark.validation import ImportRejected
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import Response
from judging.evaluation.scores import load_scores
from judging.interop.exporting import inspect_eval_file
from judging.interop.inspect_reading import InspectReader
from tests.judging.factories import make_items, make_run

# Required keys of inspect_ai's pydantic models (fields without a default), from
# src/inspect_ai/log/_log.py.
EVAL_SPEC_REQUIRED = {"created", "task", "dataset", "model", "config"}
SAMPLE_REQUIRED = {"id", "epoch", "input", "target"}


@pytest.fixture
def run(benchmark):
    items = make_items(benchmark, 5, languages=("zh",))
    run = make_run(
        benchmark,
        items,
        raw=[3, 2, None, 1, 0],
        sv=[False, True, False, None, False],
        model="qwen-test",
    )
    Response.objects.filter(run=run, item=items[0]).update(reasoning_text="Think.")
    return run


def members(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: json.loads(archive.read(name)) for name in archive.namelist()}


def import_log(benchmark, data, filename="run.eval", **reader):
    return do_import_run(
        benchmark,
        data,
        filename=filename,
        model_name="qwen-test",
        language="zh",
        reader=InspectReader(**reader),
    )


def test_the_eval_zip_has_inspects_layout_and_required_keys(run):
    files = members(inspect_eval_file(run))
    samples = [f"samples/item-00{i}_epoch_1.json" for i in range(5)]
    assert set(files) == {
        "_journal/start.json",
        "summaries.json",
        "header.json",
        *samples,
    }
    header = files["header.json"]
    assert header["version"] == 2 and header["status"] == "success"
    assert EVAL_SPEC_REQUIRED <= set(header["eval"])
    assert header["eval"]["task"] == "test-bench"
    assert header["eval"]["model"] == "qwen-test"
    assert header["eval"]["dataset"]["samples"] == 5
    assert files["_journal/start.json"]["eval"] == header["eval"]
    rubric, final = header["results"]["scores"]
    assert (rubric["name"], rubric["scored_samples"]) == ("rubric", 4)
    assert rubric["metrics"]["mean"]["value"] == pytest.approx(6 / 4)
    # item-001 is flagged, item-002 unscored, item-003's SV check pending.
    assert (final["name"], final["scored_samples"]) == ("final", 3)
    assert final["metrics"]["mean"]["value"] == pytest.approx(3 / 3)
    assert len(files["summaries.json"]) == 5

    first = files[samples[0]]
    assert SAMPLE_REQUIRED <= set(first)
    assert (first["id"], first["epoch"]) == ("item-000", 1)
    assert isinstance(first["input"], str) and first["input"]
    assert first["output"]["completion"] == "answer item-000"
    reasoning, text = first["output"]["choices"][0]["message"]["content"]
    assert reasoning == {"type": "reasoning", "reasoning": "Think.", "redacted": False}
    assert text == {"type": "text", "text": "answer item-000"}
    assert first["scores"]["rubric"] == {
        "value": 3,
        "answer": "answer item-000",
        "explanation": "judge says 3",
        "metadata": {"judge": "judge"},
        "history": [],
    }
    flagged = files[samples[1]]["scores"]["final"]
    assert flagged["value"] == 0 and flagged["explanation"] == "violates"
    assert flagged["metadata"]["safety_violation"] is True
    assert "rubric" not in files[samples[2]]["scores"]


def test_export_then_import_gives_the_same_responses_and_scores(benchmark, run):
    copy = import_log(benchmark, inspect_eval_file(run))
    texts = dict(copy.responses.values_list("item__external_id", "text"))
    assert texts == {f"item-00{i}": f"answer item-00{i}" for i in range(5)}
    matrix = load_scores([run, copy])
    np.testing.assert_array_equal(matrix.raw[0], matrix.raw[1])
    np.testing.assert_array_equal(matrix.sv[0], matrix.sv[1])
    np.testing.assert_array_equal(matrix.final()[0], matrix.final()[1])
    assert matrix.metrics(1).n_pending == 2


def test_a_json_log_imports_and_other_scorers_are_listed(benchmark, run):
    files = members(inspect_eval_file(run))
    header, samples = files["header.json"], []
    for name, value in files.items():
        if name.startswith("samples/"):
            value["scores"]["accuracy"] = {"value": "C"}
            samples.append(value)
    log = json.dumps({**header, "samples": samples}).encode()
    reader = InspectReader()
    copy = do_import_run(
        benchmark,
        log,
        filename="run.json",
        model_name="qwen-test",
        language="zh",
        reader=reader,
    )
    assert copy.responses.count() == 5
    assert reader.ignored == {"accuracy": 5, "final": 3}  # final: from the SV flag


def test_a_foreign_log_without_sv_imports_as_pending_or_assumed_safe(benchmark):
    make_items(benchmark, 2, languages=("zh",))
    log = {
        "version": 2,
        "eval": {"task": "t", "model": "m", "created": "2025-01-01T00:00:00+00:00"},
        "samples": [
            {
                "id": f"item-00{i}",
                "epoch": 1,
                "input": "q",
                "target": "a",
                "output": {
                    "choices": [
                        {
                            "message": {
                                "content": [{"type": "text", "text": f"answer {i}"}]
                            }
                        }
                    ]
                },
                "scores": {"grade": {"value": 2, "explanation": "fine"}},
            }
            for i in range(2)
        ],
    }
    data = json.dumps(log).encode()
    pending = import_log(benchmark, data, "a.json", scorer="grade")
    assert load_scores([pending]).metrics(0).n_pending == 2
    assumed = import_log(
        benchmark, data, "a.json", scorer="grade", assume_no_violation=True
    )
    metrics = load_scores([assumed]).metrics(0)
    assert (metrics.n_pending, metrics.final_mean) == (0, 2.0)
    assert assumed.responses.get(item__external_id="item-001").text == "answer 1"


def test_any_bad_sample_rejects_the_whole_log(benchmark, run):
    files = members(inspect_eval_file(run))
    files["samples/item-999_epoch_1.json"] = {**files["samples/item-000_epoch_1.json"]}
    files["samples/item-999_epoch_1.json"]["id"] = "item-999"
    files["samples/item-001_epoch_1.json"]["scores"]["rubric"]["value"] = "C"
    files["samples/item-002_epoch_1.json"]["epoch"] = 2
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, value in files.items():
            archive.writestr(name, json.dumps(value))
    before = Response.objects.count()
    with pytest.raises(ImportRejected) as rejected:
        import_log(benchmark, out.getvalue())
    messages = [str(p) for p in rejected.value.problems]
    assert any("item-999" in m and "unknown item id" in m for m in messages)
    assert any("item-001" in m and "'C' is not mapped" in m for m in messages)
    assert any("samples/item-002_epoch_1.json: epoch 2" in m for m in messages)
    assert Response.objects.count() == before


def test_not_a_log_is_a_problem_of_the_file(benchmark):
    make_items(benchmark, 1, languages=("zh",))
    with pytest.raises(ImportRejected) as rejected:
        import_log(benchmark, b'{"samples": []}', "x.json")
    assert "no `eval` spec" in str(rejected.value.problems[0])


def test_commands_export_and_import(benchmark, run, tmp_path, capsys):
    path = tmp_path / "run.eval"
    call_command("export_run", run.pk, "--format", "inspect", "--output", str(path))
    assert "header.json" in members(path.read_bytes())
    call_command(
        "import_run",
        str(path),
        "--benchmark",
        "test-bench",
        "--model",
        "qwen-test",
        "--format",
        "inspect",
    )
    assert "5 items" in capsys.readouterr().out
    with pytest.raises(CommandError, match="No evaluation run"):
        call_command("export_run", 99999, "--output", str(path))


def test_the_run_page_downloads_the_log(run, client_for):
    url = reverse("judging:export_run_inspect", args=[run.pk])
    page = client_for("manager").get(reverse("judging:evaluation_run", args=[run.pk]))
    assert url in page.content.decode()
    response = client_for("manager").get(url)
    assert response["Content-Disposition"].endswith(f'-run-{run.pk}.eval"')
    assert "header.json" in members(response.getvalue())
    assert client_for("expert").get(url).status_code in (302, 403)


def zstd_zip(files: dict[str, bytes]) -> bytes:
    """A zip whose members are zstd-compressed (method 93), as Inspect writes .eval
    files: local headers, data, central directory, end record, by hand (zipfile
    writes no zstd before Python 3.14)."""
    import struct
    import zlib

    import pyarrow

    body, central = bytearray(), bytearray()
    for name, content in files.items():
        packed = pyarrow.compress(content, codec="zstd", asbytes=True)
        crc, encoded = zlib.crc32(content), name.encode()
        offset = len(body)
        body += (
            struct.pack(
                "<IHHHHHIIIHH",
                0x04034B50,
                63,
                0,
                93,
                0,
                0,
                crc,
                len(packed),
                len(content),
                len(encoded),
                0,
            )
            + encoded
            + packed
        )
        central += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                63,
                63,
                0,
                93,
                0,
                0,
                crc,
                len(packed),
                len(content),
                len(encoded),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + encoded
        )
    end = struct.pack(
        "<IHHHHIIH",
        0x06054B50,
        0,
        0,
        len(files),
        len(files),
        len(central),
        len(body),
        0,
    )
    return bytes(body + central + end)


def test_a_zstd_eval_file_as_inspect_writes_it_imports(benchmark, run):
    with zipfile.ZipFile(io.BytesIO(inspect_eval_file(run))) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    data = zstd_zip(files)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert {info.compress_type for info in archive.infolist()} == {93}
    copy = import_log(benchmark, data)
    matrix = load_scores([run, copy])
    np.testing.assert_array_equal(matrix.raw[0], matrix.raw[1])
    np.testing.assert_array_equal(matrix.final()[0], matrix.final()[1])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        sample = next(
            i for i in archive.infolist() if i.filename.startswith("samples/")
        )
    damaged = bytearray(data)
    # A byte inside a sample's compressed data: refused, never read as something else.
    damaged[sample.header_offset + 30 + len(sample.filename) + 8] ^= 0xFF
    with pytest.raises(ImportRejected):
        import_log(benchmark, bytes(damaged))
