"""A rejected run file on the import page, in the reader's language (#30): the
evaluate.py columns, an Inspect log and lm-eval samples each list their problems in
Chinese for a zh-hans reader and in English for an English one; nothing is written
either way, and the command line and the REST API keep the English."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from benchmark.validation import ImportRejected
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import EvaluationRun, Judgment, Response
from tests.judging.factories import make_items

ZH = {"accept-language": "zh-hans"}

RUN_CSV = (
    b"id,model_response,model_name,score,judge_reason,safety_violation,"
    b"safety_review_reason,final_score\n"
    b"item-000,an answer,m,2,ok,false,,2\n"
    b"nope,an answer,m,2,ok,false,,2\n"
    b"item-001,an answer,m,2,ok,maybe,,2\n"
)

INSPECT_LOG = json.dumps(
    {
        "eval": {"task": "t", "model": "m", "created": "2025-01-01T00:00:00+00:00"},
        "samples": [
            {
                "id": "item-000",
                "epoch": 1,
                "output": "a bare string",
                "scores": {"rubric": {"value": 2}},
            }
        ],
    }
).encode()

LM_EVAL_LINE = {
    "doc_id": 3,
    "doc": {"question": "q?"},
    "filter": "none",
    "metrics": ["exact_match"],
    "filtered_resps": ["42"],
    "exact_match": 1.0,
}

# (file name, bytes, form fields, Chinese on the page, the same problem in English)
FILES = {
    "evaluate.py columns": (
        "run.csv",
        RUN_CSV,
        {},
        [
            "第 3 行（id nope）：本基准中没有 id 为 &#x27;nope&#x27; 的题目。",
            "safety_violation &#x27;maybe&#x27; 不是布尔值（true/false、1/0）。",
        ],
        "line 3 (id nope): unknown item id &#x27;nope&#x27; in this benchmark.",
    ),
    "Inspect log": (
        "log.json",
        INSPECT_LOG,
        {},
        ["第 1 行（id item-000），samples[0]：`output` 是 str，不是对象。"],
        "line 1 (id item-000), samples[0]: `output` is str, not an object.",
    ),
    "lm-eval samples": (
        "samples_t_2025-01-01T00-00-00.jsonl",
        (json.dumps(LM_EVAL_LINE) + "\n").encode(),
        {"scorer": "exact_match", "map_for": "exact_match", "full": "3"},
        ["第 1 行，doc.id：没有题目 id（doc_id 3）。"],
        "line 1, doc.id: no item id (doc_id 3).",
    ),
}


@pytest.mark.parametrize("kind", FILES)
def test_a_rejected_run_file_lists_its_problems_in_the_readers_language(
    client_for, benchmark, kind
):
    make_items(benchmark, 2)
    name, data, fields, chinese, english = FILES[kind]
    client = client_for("manager")
    url = reverse("judging:import_evaluation_run", args=[benchmark.slug])

    def post(**headers):
        upload = SimpleUploadedFile(name, data)
        form = {"file": upload, "language": "zh", "model_name": "m", **fields}
        return client.post(url, form, headers=headers).content.decode()

    page = post(**ZH)
    assert "文件未导入。" in page
    for problem in chinese:
        assert problem in page
    assert english not in page
    assert english in post()
    assert not EvaluationRun.objects.exists()
    assert not Response.objects.exists() and not Judgment.objects.exists()


def test_the_mapping_preview_is_in_the_readers_language(client_for, benchmark):
    """The letters' meanings, the id choices and an unmapped value's problem."""
    make_items(benchmark, 2)
    log = json.loads(INSPECT_LOG)
    log["samples"][0]["scores"] = {"match": {"value": "C"}, "other": {"value": "x"}}
    url = reverse("judging:import_evaluation_run", args=[benchmark.slug])
    client = client_for("manager")

    def preview(scorer):
        upload = SimpleUploadedFile("log.json", json.dumps(log).encode())
        form = {"file": upload, "language": "zh", "scorer": scorer}
        headers = {"HX-Request": "true", **ZH}
        return client.post(url, form, headers=headers).content.decode()

    page = preview("other")
    assert "样本 id" in page  # the sample id
    assert "得分 &#x27;x&#x27; 未映射；请选择它的含义。" in page
    page = preview("match")
    assert '<span class="muted">正确</span>' in page  # C: correct
    assert "Inspect AI 日志" in page
    assert not EvaluationRun.objects.exists()


def test_the_api_and_the_command_line_keep_english(benchmark):
    """A Note is its English text: what ImportRejected's problems say when no page
    translates them."""
    make_items(benchmark, 2)
    with pytest.raises(ImportRejected) as rejected:
        do_import_run(
            benchmark, RUN_CSV, filename="run.csv", model_name="m", language="zh"
        )
    assert [str(problem) for problem in rejected.value.problems] == [
        "line 3 (id nope): unknown item id 'nope' in this benchmark.",
        "line 4 (id item-001): safety_violation 'maybe' is not a boolean "
        "(true/false, 1/0).",
    ]
