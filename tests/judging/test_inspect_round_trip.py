"""Assay's Inspect export: valid against inspect_ai's own JSON schema (made by
`inspect log schema`, inspect_ai 0.3.285; inspect_ai itself is too heavy a
dependency: boto3, s3fs, textual, fastapi…), k-trial binary runs as epochs with
verdicts, `Score.answer` set, the judge's tokens in `model_usage`; and round trips
through Inspect and lm-eval files, each listing what its format cannot hold."""

import io
import json
import zipfile
from pathlib import Path

import jsonschema
import pytest

from benchmark.validation import ImportRejected
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import AnswerGrade, Judgment, Response
from judging.interop.exporting import inspect_eval_file
from judging.interop.importing import Choices, make_reader
from judging.llm.models import Endpoint, LLMCall
from tests.judging.factories import make_format_items, make_items, make_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interop"
SCHEMA = json.loads((FIXTURES / "inspect" / "log_schema.json").read_text())
CHOICE_LOG = FIXTURES / "inspect" / "choices_2_epochs.eval"
OPEN_LOG = FIXTURES / "inspect" / "open_answers.eval"
LM_MC = FIXTURES / "lm_eval" / "samples_assay_mc.jsonl"


def validator(definition: str):
    """A validator of one of the schema's components (EvalLog, EvalSample…)."""
    schema = {**SCHEMA, "$ref": f"#/components/schemas/{definition}"}
    return jsonschema.Draft202012Validator(schema)


def members(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        assert len(names) == len(set(names)), "duplicate zip member names"
        return {name: json.loads(archive.read(name)) for name in names}


def assert_valid(files: dict) -> None:
    header = validator("EvalLog")
    errors = list(header.iter_errors(files["header.json"]))
    assert errors == [], [e.message for e in errors[:5]]
    sample = validator("EvalSample")
    for name, value in files.items():
        if name.startswith("samples/"):
            errors = list(sample.iter_errors(value))
            assert errors == [], (name, [e.message for e in errors[:5]])


def import_file(benchmark, data, name, choices, language="en"):
    return do_import_run(
        benchmark,
        data,
        filename=name,
        model_name="",
        language=language,
        reader=make_reader(benchmark, data, choices),
    )


def test_a_0_3_run_exports_a_schema_valid_log_with_answers_and_judge_usage(benchmark):
    items = make_items(benchmark, 3, languages=("zh",))
    run = make_run(benchmark, items, raw=[3, 2, None], sv=[False, True, False])
    endpoint = Endpoint.objects.create(
        name="judge", base_url="http://127.0.0.1:9/v1", model="deepseek-v3"
    )
    call = LLMCall.objects.create(
        endpoint=endpoint,
        purpose="rubric_judging",
        scope="export-test",
        request_hash="1" * 64,
        model="deepseek-v3",
        status=LLMCall.Status.OK,
        input_tokens=120,
        output_tokens=30,
    )
    Judgment.objects.filter(response__run=run, response__item=items[0]).update(
        call=call
    )
    files = members(inspect_eval_file(run))
    assert_valid(files)
    first = files["samples/item-000_epoch_1.json"]
    assert first["scores"]["rubric"]["answer"] == first["output"]["completion"]
    # The rubric and the SV judge each made this call's tokens: both counted.
    assert first["model_usage"]["deepseek-v3"] == {
        "input_tokens": 240,
        "output_tokens": 60,
        "total_tokens": 300,
    }
    usage = files["header.json"]["stats"]["model_usage"]
    assert usage["deepseek-v3"]["total_tokens"] == 300


def test_a_k_trial_binary_run_exports_every_epoch_with_its_verdict(benchmark):
    make_format_items(benchmark, mc=3)
    run = import_file(
        benchmark, CHOICE_LOG.read_bytes(), CHOICE_LOG.name, Choices(scorer="includes")
    )
    files = members(inspect_eval_file(run))
    assert_valid(files)
    samples = sorted(n for n in files if n.startswith("samples/"))
    assert samples == [
        f"samples/mc-00{i}_epoch_{e}.json" for i in range(3) for e in (1, 2)
    ]
    header = files["header.json"]
    assert header["eval"]["config"] == {"epochs": 2, "epochs_reducer": ["mean"]}
    assert header["eval"]["dataset"]["samples"] == 3
    verdict = files["samples/mc-002_epoch_2.json"]["scores"]["verdict"]
    assert verdict["value"] == "C"
    # The answer the source's scorer read is the answer exported.
    assert verdict["answer"] == "default output from mockllm/model"
    (result,) = header["results"]["scores"]
    assert result["metrics"]["accuracy"]["value"] == pytest.approx(2 / 6)
    assert result["reducer"] == "mean"
    # What the log said and Assay has no column for comes back.
    sample = files["samples/mc-000_epoch_1.json"]
    assert sample["target"] == "B"
    assert sample["metadata"]["item_id"] == "mc-000"
    assert header["eval"]["metadata"]["imported_from"]["reducer"] == "mode"


DOCS = Path(__file__).resolve().parents[2] / "docs" / "INTEROP.md"
# What each format cannot hold, as docs/INTEROP.md's "lost" column says.
INSPECT_OUT_LOSES = (
    "people's score overrides",
    "waivers",
    "a flagged MC/TF answer's kind",
    "prompt templates and endpoints",
)
INSPECT_IN_LOSES = ("the other scorers", "`reductions.json`", "`messages` and `events`")
LM_EVAL_IN_LOSES = ("the other metrics and filters", "trials", "the SV check")


def lost_rows(tool: str, direction: str) -> str:
    """The `lost` rows of docs/INTEROP.md's table for a tool (a `## ` section
    starting with its name) and direction (`### Into Assay`, `### Out of Assay`)."""
    section = tool_part = ""
    lost = []
    for line in DOCS.read_text().splitlines():
        if line.startswith("## "):
            tool_part, section = line[3:], ""
        elif line.startswith("### "):
            section = line[4:]
        elif (
            tool_part.startswith(tool)
            and section == direction
            and line.startswith("| lost |")
        ):
            lost.append(line)
    assert lost, f"no lost rows for {tool}, {direction} in docs/INTEROP.md"
    return " ".join(lost)


def test_the_docs_list_what_each_format_cannot_hold():
    lost = lost_rows("Inspect AI", "Out of Assay")
    assert all(phrase in lost for phrase in INSPECT_OUT_LOSES)
    lost = lost_rows("Inspect AI", "Into Assay")
    assert all(phrase in lost for phrase in INSPECT_IN_LOSES)
    lost = lost_rows("lm-evaluation-harness", "Into Assay")
    assert all(phrase in lost for phrase in LM_EVAL_IN_LOSES)


def test_inspect_round_trip_keeps_what_the_format_holds(benchmark):
    make_format_items(benchmark, mc=3)
    first = import_file(
        benchmark, CHOICE_LOG.read_bytes(), CHOICE_LOG.name, Choices(scorer="includes")
    )
    exported = inspect_eval_file(first)
    again = import_file(benchmark, exported, "again.eval", Choices())

    def kept(run):
        return sorted(
            (
                r.item.external_id,
                r.trial,
                r.text,
                r.grade.grade,
                r.grade.extracted,
                r.source_record["target"],
                r.source_record["metadata"]["item_id"],
                r.source_record["usage"]["output_tokens"],
            )
            for r in Response.objects.filter(run=run).select_related("item", "grade")
        )

    assert kept(again) == kept(first)
    assert (again.model_name, again.language, again.trials) == (
        "mockllm/model",
        "en",
        2,
    )
    assert again.input_tokens == first.input_tokens


def test_a_0_3_inspect_round_trip_keeps_scores_sv_and_language(benchmark):
    items = make_items(benchmark, 4, languages=("zh", "en"))
    run = make_run(
        benchmark,
        items,
        raw=[3, 2, None, 1],
        sv=[False, True, False, None],
        language="en",
    )
    again = import_file(benchmark, inspect_eval_file(run), "run.eval", Choices())
    assert again.language == "en" and again.model_name == run.model_name

    def verdicts(r):
        return sorted(
            Judgment.objects.filter(response__run=r).values_list(
                "response__item__external_id", "kind", "score", "safety_violation"
            )
        )

    assert verdicts(again) == [
        (item, kind, score, sv) for item, kind, score, sv in verdicts(run)
    ]
    # Imported under the other language, the file refuses.
    with pytest.raises(ImportRejected) as rejected:
        import_file(benchmark, inspect_eval_file(run), "run.eval", Choices(), "zh")
    assert "'en', not 'zh'" in str(rejected.value.problems[0])


def test_lm_eval_import_keeps_what_the_samples_hold(benchmark):
    make_format_items(benchmark, mc=3)
    run = import_file(
        benchmark,
        LM_MC.read_bytes(),
        LM_MC.name,
        Choices(
            scorer="acc_norm",
            full=1,
            results=(FIXTURES / "lm_eval" / "results.json").read_bytes(),
        ),
    )
    response = run.responses.select_related("grade").get(item__external_id="mc-001")
    source = response.source_record
    assert source["doc"]["choices"] == ["IP5X", "IP6X", "IP4X", "IP3X"]
    assert source["prompt"].startswith("Question: Which IP code")
    assert len(source["filtered_resps"]) == 4 and source["chosen_option"] == 1
    assert (response.text, response.grade.extracted) == ("IP6X", "B")
    assert response.grade.grade == AnswerGrade.Grade.CORRECT
    assert run.source_metadata["metric"] == "acc_norm"
    assert run.source_metadata["results"]["lm_eval_version"] == "0.4.13"
