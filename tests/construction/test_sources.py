"""Source import: CSV and JSON Lines, all or nothing with row-level problems,
deduplicated by content hash; the command and the construction page's form."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from benchmark.validation import ImportRejected
from construction.actions import do_import_sources
from construction.models import Source

CSV = (
    "kind,text,standard_id,edition,clause,category,record_id,label\n"
    "gbt_standard,额定电压不应超过 250 V。,GB/T 2099.1,2021,5.2,,,electrical\n"
    "product_record,不锈钢螺栓 M8×40，材质 A2-70。,,,,fasteners,R-17,machinery\n"
).encode()


def test_csv_import_builds_references_and_keeps_other_columns(benchmark):
    result = do_import_sources(benchmark, CSV, "sources.csv")
    assert (result.added, result.already_present) == (2, 0)
    standard, product = Source.objects.filter(benchmark=benchmark).order_by("id")
    assert standard.reference == "GB/T 2099.1 2021 5.2"
    assert standard.fields["label"] == "electrical"
    assert product.kind == "product_record"
    assert product.reference == "fasteners R-17"


def test_jsonl_keeps_its_fields_object_and_not_other_top_level_keys(benchmark):
    # As the README says: a JSONL row's `fields` is kept; its reference parts
    # build the reference, and other top-level keys are left out.
    row = {
        "kind": "gbt_standard",
        "text": "额定电流不应超过 16 A。",
        "standard_id": "GB/T 2099.1",
        "edition": "2021",
        "clause": "5.3",
        "supplier": "not kept",
        "fields": {"label": "electrical", "page": 12},
    }
    do_import_sources(benchmark, json.dumps(row).encode(), "sources.jsonl")
    source = Source.objects.get(benchmark=benchmark)
    assert source.reference == "GB/T 2099.1 2021 5.3"
    assert source.fields == {"label": "electrical", "page": 12}


def test_reimporting_the_same_file_adds_nothing_and_says_so(benchmark):
    do_import_sources(benchmark, CSV, "sources.csv")
    again = do_import_sources(benchmark, CSV, "sources.csv")
    assert (again.added, again.already_present) == (0, 2)
    assert "Nothing added" in str(again)
    assert Source.objects.filter(benchmark=benchmark).count() == 2


def test_same_text_with_other_whitespace_and_width_is_one_source(benchmark):
    base = {"kind": "gbt_standard", "reference": "GB/T 1 §1"}
    lines = [
        {**base, "text": "额定电压 250 V"},
        {**base, "text": "额定电压  ２５０ V\n"},
    ]
    data = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()
    result = do_import_sources(benchmark, data, "s.jsonl")
    assert (result.added, result.already_present) == (1, 1)


def test_a_bad_row_rejects_the_whole_file_with_every_problem(benchmark):
    data = "\n".join(
        [
            json.dumps({"kind": "gbt_standard", "reference": "A", "text": "ok"}),
            json.dumps({"kind": "manual", "reference": "B", "text": "x"}),
            "{not json",
            json.dumps({"kind": "product_record", "text": "no reference"}),
            json.dumps({"kind": "gbt_standard", "reference": "C", "text": " "}),
        ]
    ).encode()
    with pytest.raises(ImportRejected) as rejected:
        do_import_sources(benchmark, data, "s.jsonl")
    found = {(p.line, p.field) for p in rejected.value.problems}
    assert found == {(2, "kind"), (3, "line"), (4, "reference"), (5, "text")}
    assert not Source.objects.exists()


def test_a_key_given_twice_is_refused(benchmark):
    data = b'{"kind": "gbt_standard", "reference": "A", "text": "a", "text": "b"}\n'
    with pytest.raises(ImportRejected) as rejected:
        do_import_sources(benchmark, data, "s.jsonl")
    (problem,) = [str(p) for p in rejected.value.problems]
    assert 'the key "text" appears twice in one object' in problem
    assert not Source.objects.exists()


def test_csv_without_the_required_columns_is_refused(benchmark):
    with pytest.raises(ImportRejected) as rejected:
        do_import_sources(benchmark, b"reference,body\nA,B\n", "s.csv")
    assert "kind, text" in rejected.value.problems[0].message


def test_command_imports_and_reports(benchmark, tmp_path, capsys):
    path = tmp_path / "sources.csv"
    path.write_bytes(CSV)
    call_command("import_sources", str(path), "--benchmark", benchmark.slug)
    call_command("import_sources", str(path), "--benchmark", benchmark.slug)
    out = capsys.readouterr().out
    assert "2 source(s) added." in out
    assert "Nothing added: all 2 source(s) were already there." in out
    path.write_bytes(b"kind,text\nmanual,x\n")
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_sources", str(path), "--benchmark", benchmark.slug)


def test_import_form_on_the_construction_page(benchmark, client_for):
    client = client_for("manager")
    url = reverse("construction:import_sources", args=[benchmark.slug])
    response = client.post(url, {"file": SimpleUploadedFile("s.csv", CSV)})
    assert response.status_code == 302
    page = client.get(reverse("construction:page", args=[benchmark.slug]))
    assert b'data-count="sources">2<' in page.content
    bad = client.post(url, {"file": SimpleUploadedFile("s.csv", b"kind,text\nx,y\n")})
    assert bad.status_code == 400
    assert b"nothing was imported" in bad.content
    assert client_for("expert").post(url, {}).status_code == 403


def _post(n: int) -> dict:
    return {"kind": "forum_post", "reference": f"forum {n}", "text": f"帖子 {n}"}


CLAUSE = {"kind": "gbt_standard", "reference": "GB/T 2099.1 5.2", "text": "额定电压"}


def _jsonl(*rows) -> bytes:
    return "\n".join(json.dumps(row, ensure_ascii=False) for row in rows).encode()


def test_one_benchmark_takes_one_pipelines_sources(benchmark):
    """Forum posts (LPFQA) and GB/T clauses or product records (IndustryBench)
    go through different stages, funnels and releases: an import that would
    mix them is refused whole, line by line, and names where they belong."""
    with pytest.raises(ImportRejected) as mixed_file:
        do_import_sources(benchmark, _jsonl(_post(1), CLAUSE, _post(2)), "mixed.jsonl")
    [problem] = mixed_file.value.problems
    assert (problem.line, problem.field) == (2, "kind")
    assert "forum posts (LPFQA's construction)" in problem.message
    assert not Source.objects.exists()

    do_import_sources(benchmark, CSV, "sources.csv")
    with pytest.raises(ImportRejected) as posts_later:
        do_import_sources(benchmark, _jsonl(_post(1), _post(2)), "posts.jsonl")
    assert [p.line for p in posts_later.value.problems] == [1, 2]
    assert "IndustryBench's construction" in posts_later.value.problems[0].message
    assert set(Source.objects.values_list("kind", flat=True)) == {
        "gbt_standard",
        "product_record",
    }


def test_a_benchmark_already_holding_both_kinds_runs_no_stage(benchmark):
    from construction.actions import do_start_stage

    do_import_sources(benchmark, CSV, "sources.csv")
    # Imported before the import refused the mix.
    Source.objects.create(
        benchmark=benchmark, kind="forum_post", reference="f 1", text="帖子"
    )
    with pytest.raises(ValidationError, match="holds both forum posts"):
        do_start_stage(benchmark, "dedup")
