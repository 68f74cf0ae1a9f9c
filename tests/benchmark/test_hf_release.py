"""The Hugging Face release: the Parquet schema, the dataset card, the round trip
through the import, its row-level problems, the command and the Export page."""

import io
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from benchmark.actions import do_set_rendering_review_status
from benchmark.hf_release import (
    CARD_PATH,
    DATA_PATH,
    do_import_release,
    release_files,
    release_table,
)
from benchmark.importing import do_import_items
from benchmark.models import Benchmark, Rendering
from benchmark.validation import ImportRejected
from tests.benchmark.importing_helpers import format_item, jsonl, table_counts

FORMATS = ["open", "multiple_choice", "true_false", "short_answer"]


def seed(slug="first"):
    lines = [format_item(f"F-{n}", fmt) for n, fmt in enumerate(FORMATS)]
    lines[0]["difficulty"] = ""
    lines[2]["labels"] = {"capability": "standards_terminology"}
    do_import_items(io.BytesIO(jsonl(lines)), slug=slug)
    return Benchmark.objects.get(slug=slug)


def parquet_file(benchmark, tmp_path, name="release.parquet"):
    files, _report = release_files(benchmark)
    path = tmp_path / name
    path.write_bytes(files[DATA_PATH])
    return path


def test_export_import_export_gives_the_same_table(db, tmp_path):
    first = seed()
    path = parquet_file(first, tmp_path)

    summary = do_import_release(path, slug="second")

    assert summary.created == 4
    table, _stats = release_table(Benchmark.objects.get(slug="second"))
    assert table.equals(pq.read_table(path))
    assert sorted(table.column("item_format").to_pylist()) == sorted(FORMATS)


def test_schema_is_explicit_and_flat(db, tmp_path):
    schema = pq.read_schema(parquet_file(seed(), tmp_path))

    expected = {
        "id": pa.string(),
        "item_format": pa.string(),
        "correct_options": pa.list_(pa.string()),
        "multiple_answers": pa.bool_(),
        "correct_answer": pa.bool_(),
        "difficulty": pa.string(),
        "source_kind": pa.string(),
        "source_reference": pa.string(),
        "knowledge_text": pa.string(),
        "domain": pa.string(),
        "source_format": pa.string(),
    }
    for language in ("zh", "en", "ru", "vi"):
        expected |= {
            f"question_{language}": pa.string(),
            f"answer_{language}": pa.string(),
            f"options_{language}": pa.list_(pa.string()),
            f"key_points_{language}": pa.list_(pa.string()),
        }
    expected |= {"label_capability": pa.string(), "label_industry": pa.string()}
    assert {f.name: f.type for f in schema} == expected
    assert not schema.field("id").nullable


def test_rows_carry_the_answer_key_and_each_language(db):
    table, _stats = release_table(seed())
    rows = {row["id"]: row for row in table.to_pylist()}

    choice = rows["F-1"]
    assert choice["correct_options"] == ["B"]
    assert choice["multiple_answers"] is False
    assert choice["options_en"] == [
        "Class 4.6",
        "Class 8.8",
        "Class 10.9",
        "Class 12.9",
    ]
    assert choice["question_ru"] is None
    assert rows["F-2"]["correct_answer"] is True
    assert rows["F-2"]["label_industry"] is None
    assert rows["F-3"]["key_points_zh"][0] == "公称抗拉强度 800 MPa"
    assert rows["F-0"]["difficulty"] is None


def test_release_leaves_out_unapproved_renderings(db):
    benchmark = seed()
    english = Rendering.objects.get(
        item__external_id="F-1", language="en", is_current=True
    )
    do_set_rendering_review_status(english, Rendering.ReviewStatus.PENDING)

    table, _stats = release_table(benchmark)

    row = next(r for r in table.to_pylist() if r["id"] == "F-1")
    assert row["question_en"] is None and row["options_en"] is None


def test_dataset_card(db):
    files, _report = release_files(seed(), "cc-by-4.0")
    card = files[CARD_PATH].decode()

    header = card.split("---")[1]
    assert "license: cc-by-4.0" in header
    assert "- zh\n- en\n- ru\n- vi" in header
    assert "- question-answering\n- multiple-choice" in header
    assert "- n<1K" in header
    assert "path: data/*.parquet" in header
    assert "4 items." in card
    assert "| multiple_choice | 1 |" in card
    assert "| `standards_terminology` |" in card
    assert "| (null) | unlabelled | 1 |" in card  # F-2 has no industry
    assert "| en | 4 | 0 |" in card and "| ru | 0 | 4 |" in card
    assert "## Construction and validation" in card


def test_unknown_license_is_refused(db):
    with pytest.raises(ValueError):
        release_files(seed(), "proprietary: yes")


def test_a_bad_row_rejects_the_file_naming_row_and_column(db, tmp_path):
    table = pq.read_table(parquet_file(seed(), tmp_path))
    options = table.column("options_zh").to_pylist()
    options[1] = options[1][:3]
    broken = table.set_column(
        table.schema.get_field_index("options_zh"),
        table.schema.field("options_zh"),
        pa.array(options, pa.list_(pa.string())),
    )
    path = tmp_path / "broken.parquet"
    pq.write_table(broken, path)
    before = table_counts()

    with pytest.raises(ImportRejected) as caught:
        do_import_release(path, slug="second")

    problems = [str(problem) for problem in caught.value.problems]
    assert any(p.startswith("line 2, options_zh") for p in problems), problems
    assert table_counts() == before


def test_unknown_and_mistyped_columns_are_problems(db, tmp_path):
    table = pq.read_table(parquet_file(seed(), tmp_path))
    table = table.append_column("extra", pa.array([1, 2, 3, 4]))
    table = table.set_column(
        table.schema.get_field_index("difficulty"),
        "difficulty",
        pa.array([1, 2, 3, 4]),
    )
    path = tmp_path / "odd.parquet"
    pq.write_table(table, path)

    with pytest.raises(ImportRejected) as caught:
        do_import_release(path, slug="second")

    problems = [str(problem) for problem in caught.value.problems]
    assert "line 0, extra: unknown column" in problems
    assert "line 0, difficulty: is int64; expected string (or null)" in problems
    assert not Benchmark.objects.filter(slug="second").exists()


def test_not_a_parquet_file(db, tmp_path):
    path = tmp_path / "notes.parquet"
    path.write_text("id,question\n")

    with pytest.raises(ImportRejected) as caught:
        do_import_release(path, slug="second")

    assert "not a readable Parquet file" in str(caught.value.problems[0])


def test_commands_export_and_import(db, tmp_path):
    seed()
    out = tmp_path / "repo"
    call_command(
        "export_items", benchmark="first", fmt="hf", output=out, stderr=io.StringIO()
    )
    assert (out / "README.md").exists()

    call_command(
        "import_items",
        out / DATA_PATH,
        benchmark="second",
        stdout=io.StringIO(),
    )

    assert Benchmark.objects.get(slug="second").items.count() == 4


def test_export_page_downloads_the_repository_as_zip(client_for):
    seed()
    response = client_for("manager").get(
        "/export/first.hf", {"license": "cc-by-sa-4.0"}
    )

    assert response.status_code == 200
    # Streamed as it is written; the archive reads whole, each member checked.
    assert response.streaming
    archive = zipfile.ZipFile(io.BytesIO(response.getvalue()))
    assert archive.testzip() is None
    assert sorted(archive.namelist()) == sorted([CARD_PATH, DATA_PATH])
    assert b"license: cc-by-sa-4.0" in archive.read(CARD_PATH)
    bad = client_for("manager").get("/export/first.hf", {"license": "x\ny"})
    assert bad.status_code == 404


def with_column(table, name, values, kind):
    return table.set_column(
        table.schema.get_field_index(name),
        table.schema.field(name),
        pa.array(values, kind),
    )


def test_a_huge_cell_is_refused_whatever_the_file_size(db, tmp_path, settings):
    """A 200 MB question compresses to a few KB; it must not become an item that
    every run then sends to a provider."""
    table = pq.read_table(parquet_file(seed(), tmp_path))
    questions = table.column("question_zh").to_pylist()
    questions[2] = "问" * (settings.IMPORT_MAX_CELL_CHARS + 1)
    path = tmp_path / "bomb.parquet"
    pq.write_table(
        with_column(table, "question_zh", questions, pa.string()),
        path,
        compression="zstd",
    )
    assert path.stat().st_size < 20_000
    before = table_counts()

    with pytest.raises(ImportRejected) as caught:
        do_import_release(path, slug="second")

    (problem,) = [str(p) for p in caught.value.problems]
    assert problem == (
        f"line 3, question_zh: a cell of {settings.IMPORT_MAX_CELL_CHARS + 1:,} "
        f"characters; a cell has at most {settings.IMPORT_MAX_CELL_CHARS:,} "
        "(IMPORT_MAX_CELL_CHARS)"
    )
    assert table_counts() == before


def test_a_huge_list_element_is_refused(db, tmp_path, settings):
    settings.IMPORT_MAX_CELL_CHARS = 1000
    table = pq.read_table(parquet_file(seed(), tmp_path))
    options = table.column("options_zh").to_pylist()
    options[1] = [options[1][0] + "x" * 1000, *options[1][1:]]
    path = tmp_path / "bomb.parquet"
    pq.write_table(
        with_column(table, "options_zh", options, pa.list_(pa.string())), path
    )
    with pytest.raises(ImportRejected) as caught:
        do_import_release(path, slug="second")
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("line 2, options_zh: a cell of 1,0")


def test_what_a_file_expands_to_is_checked_before_it_is_read(db, tmp_path, settings):
    settings.IMPORT_MAX_MEMBER_BYTES = 50_000
    table = pq.read_table(parquet_file(seed(), tmp_path))
    knowledge = ["知" * 30_000] * table.num_rows
    path = tmp_path / "bomb.parquet"
    pq.write_table(
        with_column(table, "knowledge_text", knowledge, pa.string()),
        path,
        use_dictionary=False,
        compression="zstd",
    )
    assert path.stat().st_size < 50_000
    with pytest.raises(ImportRejected) as caught:
        do_import_release(path, slug="second")
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("line 0, knowledge_text: expands to ")
    assert problem.endswith("at most 50,000 (IMPORT_MAX_MEMBER_BYTES)")

    settings.IMPORT_MAX_MEMBER_BYTES = 10**9
    settings.IMPORT_MAX_EXPANDED_BYTES = 100_000
    with pytest.raises(ImportRejected) as caught:
        do_import_release(path, slug="second")
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.endswith("at most 100,000 (IMPORT_MAX_EXPANDED_BYTES)")
    assert not Benchmark.objects.filter(slug="second").exists()
