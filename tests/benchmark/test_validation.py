"""The import-validation core both imports share (items and evaluation runs)."""

import pytest

from benchmark import validation
from benchmark.validation import ImportRejected, Problem, Problems, json_objects


def test_a_problem_says_where_it_is():
    assert str(Problem(3, "question", "empty")) == "line 3, question: empty"
    assert str(Problem(4, "", "score 9", item_id="IB-2")) == "line 4 (id IB-2): score 9"
    assert str(Problem(0, "", "the file is empty.")) == "file: the file is empty."


def test_problems_keeps_the_first_ones_and_counts_them_all(monkeypatch):
    monkeypatch.setattr(validation, "MAX_PROBLEMS", 3)
    problems = Problems()
    assert not problems
    for line in range(1, 6):
        problems.add(line, "id", "duplicate")
    rejected = problems.rejection()
    assert isinstance(rejected, ImportRejected)
    assert [p.line for p in rejected.problems] == [1, 2, 3]
    assert rejected.total == 5 and "5 problem(s)" in str(rejected)


def test_json_lines_skip_blank_lines_and_report_the_rest():
    problems = Problems()
    lines = ['{"id": "a"}', "", "[1, 2]", '{"id": ', '{"id": "b"}']
    assert list(json_objects(lines, problems)) == [(1, {"id": "a"}), (5, {"id": "b"})]
    assert [str(p) for p in problems.kept] == [
        "line 3, line: expected a JSON object",
        "line 4, line: malformed JSON (Expecting value at column 8)",
    ]


@pytest.mark.django_db
def test_the_run_import_reports_bad_json_lines_the_same_way(benchmark):
    from judging.evaluation.importing import do_import_run

    with pytest.raises(ImportRejected) as rejected:
        do_import_run(
            benchmark,
            b'{"id": \n[1]\n',
            filename="run.jsonl",
            model_name="m",
            language="zh",
        )
    assert [str(p) for p in rejected.value.problems] == [
        "line 1, line: malformed JSON (Expecting value at column 8)",
        "line 2, line: expected a JSON object",
    ]
