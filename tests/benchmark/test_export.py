import csv
import io
import json

import pytest
from django.core.management import call_command

from benchmark.actions import do_add_rendering_version, do_set_final_label
from benchmark.exporting import release_gaps, write_export
from benchmark.importing import do_import_items
from benchmark.models import Benchmark, FinalLabel, Item, Label, Rendering
from tests.benchmark.importing_helpers import (
    DATA,
    generic_item,
    industrybench_csv,
    industrybench_row,
    jsonl,
)


def export(slug: str, fmt: str, *, release=False) -> tuple[str, object]:
    out = io.StringIO()
    report = write_export(Benchmark.objects.get(slug=slug), out, fmt, release=release)
    return out.getvalue(), report


def import_text(text: str, slug: str):
    return do_import_items(io.BytesIO(text.encode("utf-8")), slug=slug)


def item_snapshot(slug: str) -> list:
    items = Item.objects.filter(benchmark__slug=slug).order_by("external_id")
    snapshot = []
    for item in items:
        snapshot.append(
            (
                item.external_id,
                item.source_kind,
                item.source_reference,
                item.knowledge_text,
                item.domain,
                item.difficulty,
                item.status,
                item.source_format,
                sorted(
                    item.renderings.filter(is_current=True).values_list(
                        "language", "question", "answer", "origin", "review_status"
                    )
                ),
                sorted(
                    item.final_labels.values_list(
                        "dimension__code", "label__code", "provenance"
                    )
                ),
            )
        )
    return snapshot


@pytest.mark.smoke
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("source", ["industrybench.csv", "generic.jsonl"])
def test_import_export_import_round_trips(db, fmt, source):
    do_import_items((DATA / source).open("rb"), slug="first")
    first, _ = export("first", fmt)

    import_text(first, "second")
    second, _ = export("second", fmt)

    assert second == first
    if fmt == "jsonl":
        assert item_snapshot("second") == item_snapshot("first")


def test_csv_export_is_the_public_layout(db):
    do_import_items((DATA / "industrybench.csv").open("rb"), slug="first")
    text, report = export("first", "csv")

    rows = list(csv.DictReader(io.StringIO(text)))
    assert report.items == 3
    assert list(rows[0])[:15] == [
        "id",
        "question",
        "answer",
        "question_en",
        "answer_en",
        "question_ru",
        "answer_ru",
        "question_vi",
        "answer_vi",
        "difficulty",
        "_format",
        "industry_primary",
        "capability",
        "knowledge_text",
        "domain",
    ]
    assert rows[1]["capability"] == "Standards & Terminology"
    assert rows[1]["industry_primary"] == "Electronics & Sensors"
    assert rows[1]["_format"] == "product_record"
    assert rows[2]["question"] == "一根 4 mm² 铜芯电缆，多行文本\n第二行？"


def test_jsonl_export_carries_origin_review_status_and_current_version(benchmark):
    do_import_items(io.BytesIO(jsonl([generic_item("A")])), slug="test-bench")
    item = Item.objects.get()
    do_add_rendering_version(
        item,
        "en",
        question="Tensile strength of a class 8.8 bolt?",
        answer="800 MPa.",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.PENDING,
    )
    text, _ = export("test-bench", "jsonl")

    line = json.loads(text)
    assert line["renderings"]["en"] == {
        "question": "Tensile strength of a class 8.8 bolt?",
        "answer": "800 MPa.",
        "origin": "human_edited",
        "review_status": "pending",
    }
    assert line["labels"] == {
        "capability": "standards_terminology",
        "industry": "machinery_hardware",
    }


def test_release_export_writes_only_approved_renderings(benchmark, personas):
    items = [
        generic_item("A"),
        generic_item(
            "B",
            renderings={
                "zh": {"question": "问题", "answer": "答案"},
                "en": {"question": "Q", "answer": "A", "review_status": "flagged"},
                "ru": {"question": "В", "answer": "О", "review_status": "pending"},
            },
        ),
        generic_item(
            "C",
            renderings={
                "zh": {"question": "问题", "answer": "答案", "review_status": "pending"}
            },
        ),
        generic_item("D", status="retired"),
    ]
    do_import_items(io.BytesIO(jsonl(items)), slug="test-bench")
    manual = Label.objects.get(dimension__benchmark=benchmark, code="fault_diagnosis")
    do_set_final_label(
        Item.objects.get(external_id="A"),
        manual,
        provenance=FinalLabel.Provenance.MANUAL,
        user=personas["manager"],
    )

    text, report = export("test-bench", "jsonl", release=True)

    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["id"] for line in lines] == ["A", "B"]
    assert list(lines[0]["renderings"]) == ["zh", "en", "ru", "vi"]
    assert lines[0]["labels"]["capability"] == "fault_diagnosis"
    assert list(lines[1]["renderings"]) == ["zh"]
    assert report.items == 2
    assert report.skipped_unapproved_source == ["C"]
    assert report.missing_approved == {
        "zh": ["C"],
        "en": ["B", "C"],
        "ru": ["B", "C"],
        "vi": ["B", "C"],
    }
    assert release_gaps(benchmark) == {"zh": 1, "en": 2, "ru": 2, "vi": 2}
    assert "en: 2 items lack an approved rendering (B, C)" in report.lines(True)

    csv_text, _ = export("test-bench", "csv", release=True)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [(row["id"], row["question_en"]) for row in rows] == [
        ("A", "Tensile strength of class 8.8?"),
        ("B", ""),
    ]


@pytest.mark.smoke
def test_export_command_writes_file_and_reports(tmp_path, benchmark):
    do_import_items(
        io.BytesIO(industrybench_csv([industrybench_row("A")])), slug="test-bench"
    )
    output = tmp_path / "out.jsonl"
    stderr = io.StringIO()

    call_command(
        "export_items",
        "--benchmark",
        "test-bench",
        "--format",
        "jsonl",
        "--release",
        "--output",
        str(output),
        stderr=stderr,
    )

    assert json.loads(output.read_text(encoding="utf-8"))["id"] == "A"
    assert "1 item exported." in stderr.getvalue()
    assert "vi: no item lacks an approved rendering" in stderr.getvalue()


def test_export_streams_more_than_one_chunk(benchmark, monkeypatch):
    from benchmark import exporting

    monkeypatch.setattr(exporting, "CHUNK", 2)
    rows = [industrybench_row(f"ID{n:02d}") for n in range(5)]
    do_import_items(io.BytesIO(industrybench_csv(rows)), slug="test-bench")

    text, report = export("test-bench", "jsonl")

    assert [json.loads(line)["id"] for line in text.splitlines()] == [
        f"ID{n:02d}" for n in range(5)
    ]
    assert report.items == 5


def test_formula_looking_text_is_neutralised_in_the_csv_and_imports_back_unchanged(
    db,
):
    do_import_items((DATA / "industrybench.csv").open("rb"), slug="first")
    item = Item.objects.filter(benchmark__slug="first").order_by("external_id").first()
    question = '=HYPERLINK("http://evil.example","click")'
    do_add_rendering_version(
        item,
        "zh",
        question=question,
        answer="-3 N·m, then @admin",
        origin=Rendering.Origin.SOURCE,
        review_status=Rendering.ReviewStatus.APPROVED,
    )
    text, _ = export("first", "csv")
    row = next(
        r for r in csv.DictReader(io.StringIO(text)) if r["id"] == item.external_id
    )
    assert row["question"] == "'" + question
    assert row["answer"] == "'-3 N·m, then @admin"

    import_text(text, "second")
    copy = Item.objects.get(benchmark__slug="second", external_id=item.external_id)
    current = copy.renderings.get(language="zh", is_current=True)
    assert (current.question, current.answer) == (question, "-3 N·m, then @admin")
    assert export("second", "csv")[0] == text
