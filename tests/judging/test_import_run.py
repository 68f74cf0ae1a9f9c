"""Importing evaluate.py-style results as a run: all-or-nothing, row-level errors."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmark.validation import ImportRejected
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.evaluation.scores import load_scores
from tests.judging.factories import make_items

COLUMNS = [
    "id",
    "model_response",
    "model_name",
    "score",
    "judge_reason",
    "safety_violation",
    "safety_review_reason",
    "final_score",
]


def row(item_id, response="An answer.", score=3, sv="False", final=None, **extra):
    violation = str(sv).lower() == "true"
    if final is None:
        final = 0 if violation else score
    values = {
        "id": item_id,
        "model_response": response,
        "model_name": "qwen-test",
        "score": score,
        "judge_reason": f"reason {item_id}",
        "safety_violation": sv,
        "safety_review_reason": "violates GB 1234" if violation else "",
        "final_score": final,
    }
    values.update(extra)
    return values


def to_csv(rows) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


@pytest.fixture
def items(benchmark):
    return make_items(benchmark, 6)


def import_csv(benchmark, rows, **kwargs):
    return do_import_run(
        benchmark,
        to_csv(rows),
        filename="results.csv",
        model_name=kwargs.pop("model_name", "Qwen test"),
        language=kwargs.pop("language", "zh"),
        **kwargs,
    )


def test_evaluate_py_csv_becomes_a_run(benchmark, items):
    rows = [
        row("item-000", score=3),
        row("item-001", score=2, sv="True", final=0),
        row("item-002", response="", score=0, sv="", final=0),
        row("item-003", score="", sv="False", final=""),  # judge gave no verdict
        row("item-004", score=1, sv="", final=""),  # SV check failed
        row("item-005", score="3.0", sv="0", final="3"),
    ]
    run = import_csv(benchmark, rows, model_category="open MoE", thinking=True)
    assert run.origin == EvaluationRun.Origin.IMPORTED
    assert (run.model_category, run.thinking, run.source_file) == (
        "open MoE",
        True,
        "results.csv",
    )
    assert run.status == EvaluationRun.Status.ATTENTION  # two items pending
    assert run.responses.count() == 6
    assert run.responses.get(item__external_id="item-002").status == "empty"
    flagged = Judgment.objects.get(
        response__run=run, response__item__external_id="item-001", kind="safety"
    )
    assert flagged.safety_violation is True and flagged.reason == "violates GB 1234"
    assert flagged.response.rendering.language == "zh"
    sv_failed = Judgment.objects.get(
        response__run=run, response__item__external_id="item-004", kind="safety"
    )
    assert sv_failed.safety_violation is None and sv_failed.status == "failed"

    metrics = load_scores([run]).metrics(0)
    assert (metrics.n_scored, metrics.n_pending, metrics.n_empty) == (4, 2, 1)
    assert metrics.final_mean == pytest.approx((3 + 0 + 0 + 3) / 4)
    assert metrics.raw_mean == pytest.approx((3 + 2 + 0 + 3) / 4)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (row("item-999"), "unknown item id 'item-999'"),
        (row("item-001", score=4, final=4), "score 4 is out of range"),
        (row("item-001", score="two", final=2), "score 'two' is not an integer 0–3"),
        (row("item-001", score=2, final=3), "final_score 3 is inconsistent"),
        (row("item-001", score=2, sv="True", final=2), "it must be 0"),
        (row("item-001", sv="maybe", final=3), "is not a boolean"),
        (row("item-000"), "duplicate id (first on line 2)"),
        (row("item-001", response="  ", score=2, final=2), "empty model_response"),
        (row("item-001", score="", final=3), "but score is blank"),
        (row("item-001", model_name="other-model"), "mixes models"),
    ],
)
def test_any_bad_row_rejects_the_whole_file(benchmark, items, bad, message):
    with pytest.raises(ImportRejected) as rejected:
        import_csv(benchmark, [row("item-000"), bad])
    text = "\n".join(str(p) for p in rejected.value.problems)
    assert message in text
    assert EvaluationRun.objects.count() == 0
    assert Response.objects.count() == 0


def test_row_errors_name_the_line_and_id(benchmark, items):
    with pytest.raises(ImportRejected) as rejected:
        import_csv(
            benchmark,
            [row("item-000"), row("nope"), row("item-002", score=9, final=9)],
        )
    assert [str(p) for p in rejected.value.problems] == [
        "line 3 (id nope): unknown item id 'nope' in this benchmark.",
        "line 4 (id item-002): score 9 is out of range: use an integer 0–3.",
        "line 4 (id item-002): final_score 9 is out of range: use an integer 0–3.",
    ]


def test_missing_columns_and_bad_language_are_rejected(benchmark, items):
    with pytest.raises(ImportRejected, match="problem") as rejected:
        do_import_run(
            benchmark,
            b"id,model_response\nitem-000,x\n",
            filename="r.csv",
            model_name="m",
            language="zh",
        )
    assert "missing column(s): score" in str(rejected.value.problems[0])
    with pytest.raises(ImportRejected) as rejected:
        import_csv(benchmark, [row("item-000")], language="fr")
    assert "not one of this benchmark's languages" in str(rejected.value.problems[0])


def test_jsonl_with_real_booleans(benchmark, items):
    lines = [
        {**row("item-000", sv=False), "safety_violation": False, "score": 3},
        {**row("item-001", sv="True", score=2, final=0), "safety_violation": True},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    run = do_import_run(
        benchmark, data, filename="r.jsonl", model_name="m", language="en"
    )
    assert run.language == "en"
    metrics = load_scores([run]).metrics(0)
    assert metrics.n_sv_flagged == 1 and metrics.final_mean == pytest.approx(1.5)


def test_import_run_command(benchmark, items, tmp_path):
    path = tmp_path / "results.csv"
    path.write_bytes(to_csv([row("item-000"), row("item-001", score=1, final=1)]))
    out = io.StringIO()
    call_command(
        "import_run",
        str(path),
        "--benchmark",
        benchmark.slug,
        "--model",
        "qwen-test",
        "--language",
        "zh",
        stdout=out,
    )
    assert "final 2.000, raw 2.000, 0 pending" in out.getvalue()
    path.write_bytes(to_csv([row("item-000", score=7, final=7)]))
    with pytest.raises(CommandError, match="score 7 is out of range"):
        call_command(
            "import_run", str(path), "--benchmark", benchmark.slug, "--model", "x"
        )
    assert EvaluationRun.objects.count() == 1


@pytest.mark.parametrize(
    "score", ["inf", "-inf", "1e309", "Infinity", "2.9999999999999999", "1e0", "0x3"]
)
def test_scores_that_are_not_plain_integers_are_refused(benchmark, items, score):
    rows = [row("item-000"), row("item-001", score=score, final=3)]
    with pytest.raises(ImportRejected) as rejected:
        import_csv(benchmark, rows)
    assert any(
        p.line == 3 and "score" in p.message and "0–3" in p.message
        for p in rejected.value.problems
    ), rejected.value.problems
    assert not EvaluationRun.objects.exists()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("Infinity", "Infinity is not a JSON number"),
        ("NaN", "NaN is not a JSON number"),
        ("1e400", "out of range"),
        ("9" * 5000, "5,000 digits is out of range"),
        ("2.9999999999999999", "not an integer 0–3"),
        ('"a\\u0000b"', "NUL"),
    ],
)
def test_jsonl_numbers_and_text_are_read_strictly(benchmark, items, value, message):
    good = json.dumps(row("item-000"))
    bad = json.dumps(row("item-001")).replace('"score": 3', f'"score": {value}')
    with pytest.raises(ImportRejected) as rejected:
        do_import_run(
            benchmark,
            f"{good}\n{bad}\n".encode(),
            filename="results.jsonl",
            model_name="m",
            language="zh",
        )
    assert any(p.line == 2 and message in str(p) for p in rejected.value.problems), (
        rejected.value.problems
    )
    assert not EvaluationRun.objects.exists()


def test_deeply_nested_json_and_lone_surrogates_are_refused(benchmark, items):
    deep = "[" * 200_000 + "]" * 200_000
    surrogate = json.dumps(row("item-001")).replace("An answer.", "\\ud800")
    data = f'{{"id": {deep}}}\n{surrogate}\n'.encode()
    with pytest.raises(ImportRejected) as rejected:
        do_import_run(
            benchmark, data, filename="results.jsonl", model_name="m", language="zh"
        )
    found = {p.line: str(p) for p in rejected.value.problems}
    assert "nested too deeply" in found[1]
    assert "lone surrogate" in found[2] and "model_response" in found[2]
    assert not EvaluationRun.objects.exists()


def test_a_key_given_twice_is_refused_not_last_one_wins(benchmark, items):
    twice = json.dumps(row("item-000", score=1))[:-1] + ', "score": 3}'
    with pytest.raises(ImportRejected) as rejected:
        do_import_run(
            benchmark,
            f"{twice}\n".encode(),
            filename="results.jsonl",
            model_name="m",
            language="zh",
        )
    (problem,) = [str(p) for p in rejected.value.problems]
    assert problem == (
        'line 1, line: malformed JSON (the key "score" appears twice in one object)'
    )
    assert not EvaluationRun.objects.exists()


def test_nul_bytes_and_overlong_names_are_refused(benchmark, items):
    rows = [row("item-000"), row("item-001", response="a\x00b")]
    with pytest.raises(ImportRejected) as rejected:
        import_csv(benchmark, rows)
    assert "NUL" in str(rejected.value.problems[0])
    with pytest.raises(ImportRejected) as rejected:
        import_csv(benchmark, [row("item-000")], model_name="m" * 201)
    assert "model_name: has more than 200 characters" in str(rejected.value.problems[0])
    with pytest.raises(ImportRejected):
        import_csv(benchmark, [row("item-000")], model_category="c" * 101)
    assert not EvaluationRun.objects.exists()


def test_a_binary_benchmark_refuses_0_3_results(benchmark, items):
    benchmark.scoring_scale = benchmark.ScoringScale.BINARY
    benchmark.save(update_fields=["scoring_scale"])
    with pytest.raises(ImportRejected) as rejected:
        import_csv(benchmark, [row("item-000")])
    assert "score 3 is out of range: use an integer 0–1" in str(
        rejected.value.problems[0]
    )
    assert not EvaluationRun.objects.exists()
