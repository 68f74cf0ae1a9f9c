"""lm-evaluation-harness samples_<task>_<date>.jsonl imported as a run."""

import json

import pytest
from django.core.management import call_command

from benchmark.validation import ImportRejected
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import Response
from judging.evaluation.scores import load_scores
from judging.interop.lm_eval import LmEvalReader
from judging.interop.score_maps import ScoreMap
from tests.judging.factories import make_items


def sample(doc_id, item_id, answer, exact_match, filter_key="none"):
    """One line as lm_eval/evaluator.py logs a generate_until document and
    evaluation_tracker.save_results_samples sanitizes it."""
    prompt = f"Question: {item_id}?\nAnswer:"
    return {
        "doc_id": doc_id,
        "doc": {"id": item_id, "question": f"{item_id}?", "answer": "42"},
        "target": "42",
        "arguments": {
            "gen_args_0": {
                "arg_0": prompt,
                "arg_1": {"until": ["\n\n"], "do_sample": False},
            }
        },
        "resps": [[f" {answer}\n\nmore"]],
        "filtered_resps": [answer],
        "filter": filter_key,
        "metrics": ["exact_match"],
        "doc_hash": "d" * 64,
        "prompt_hash": "p" * 64,
        "target_hash": "t" * 64,
        "exact_match": exact_match,
    }


def jsonl(lines) -> bytes:
    return "".join(
        json.dumps(line, ensure_ascii=False) + "\n" for line in lines
    ).encode()


@pytest.fixture
def items(benchmark):
    return make_items(benchmark, 3, languages=("zh",))


def import_samples(benchmark, data, full=3, **reader):
    """1.0 is a 3 on the rubric unless `full` says otherwise."""
    return do_import_run(
        benchmark,
        data,
        filename="samples_test_2025-01-01T00-00-00.jsonl",
        model_name="hf-model",
        language="zh",
        reader=LmEvalReader(
            metric="exact_match", score_map=ScoreMap(top=3, full=full), **reader
        ),
    )


def test_samples_become_a_run_with_the_metric_as_score(benchmark, items):
    data = jsonl(
        [
            sample(0, "item-000", "42", 1.0),
            sample(1, "item-001", "41", 0.0),
            sample(2, "item-002", "42", 1.0),
        ]
    )
    run = import_samples(benchmark, data, assume_no_violation=True)
    texts = dict(run.responses.values_list("item__external_id", "text"))
    assert texts == {"item-000": "42", "item-001": "41", "item-002": "42"}
    metrics = load_scores([run]).metrics(0)
    assert (metrics.n_pending, metrics.raw_mean) == (0, pytest.approx(2.0))
    pending = import_samples(benchmark, data)
    assert load_scores([pending]).metrics(0).n_pending == 3


def test_one_filter_is_chosen_from_a_file_of_several(benchmark, items):
    data = jsonl(
        [
            sample(0, "item-000", "42", 1.0, "strict-match"),
            sample(0, "item-000", "The answer is 42", 0.0, "flexible-extract"),
        ]
    )
    with pytest.raises(ImportRejected, match="1 problem"):
        import_samples(benchmark, data)
    run = import_samples(benchmark, data, filter_name="flexible-extract")
    assert run.responses.get().text == "The answer is 42"


def test_any_bad_line_rejects_the_file(benchmark, items):
    no_text = sample(2, "item-002", "42", 1.0)
    no_text["filtered_resps"] = [["-1.5", "False"]]
    no_text["resps"] = [[["-1.5", "False"]]]
    data = jsonl(
        [
            sample(0, "item-999", "42", 1.0),
            sample(1, "item-001", "42", 1.5),
            no_text,
            {"doc_id": 3, "doc": {"question": "?"}},
        ]
    )
    with pytest.raises(ImportRejected) as rejected:
        import_samples(benchmark, data)
    messages = [str(p) for p in rejected.value.problems]
    assert "line 1 (id item-999): unknown item id 'item-999' in this benchmark." in (
        messages
    )
    assert any(
        m.startswith("line 2 (id item-001)") and "1.5 × 3 = 5 is off the 0–3" in m
        for m in messages
    )
    assert any(m.startswith("line 3 (id item-002), filtered_resps") for m in messages)
    assert "line 4, doc.id: no item id (doc_id 3)." in messages
    assert not Response.objects.exists()


def test_the_command_reads_lm_eval(benchmark, items, tmp_path, capsys):
    path = tmp_path / "samples_test_2025-01-01T00-00-00.jsonl"
    path.write_bytes(jsonl([sample(0, "item-000", "42", True)]))
    call_command(
        "import_run",
        str(path),
        "--benchmark=test-bench",
        "--model=hf-model",
        "--scorer=exact_match",
        "--full=3",
        "--assume-no-violation",
    )
    assert "final 3.000" in capsys.readouterr().out
