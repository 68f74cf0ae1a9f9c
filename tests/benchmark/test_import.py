import codecs
import io

import pytest
from django.core.management import CommandError, call_command

from benchmark import importing
from benchmark.actions import do_set_final_label
from benchmark.importing import do_import_items
from benchmark.models import Benchmark, FinalLabel, Item, ItemEvent, Label, Rendering
from benchmark.validation import ImportRejected
from tests.benchmark.importing_helpers import (
    COLUMNS,
    DATA,
    generic_item,
    industrybench_csv,
    industrybench_row,
    jsonl,
    table_counts,
)


def run(content: bytes, slug="test-bench", **options):
    return do_import_items(io.BytesIO(content), slug=slug, **options)


def rejected(content: bytes, slug="test-bench", **options) -> list[str]:
    with pytest.raises(ImportRejected) as caught:
        run(content, slug=slug, **options)
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.smoke
def test_industrybench_csv_happy_path(benchmark):
    summary = run((DATA / "industrybench.csv").read_bytes())

    assert (summary.created, summary.layout) == (3, "industrybench CSV")
    item = Item.objects.get(external_id="IB-0001")
    assert item.benchmark == benchmark
    assert item.difficulty == "easy"
    assert item.difficulty_provenance == "imported"
    assert item.source_format == "standard_qa"
    assert item.source_kind == Item.SourceKind.STANDARD
    assert item.source_reference == "GB/T 3098.1-2010"
    assert item.domain == "紧固件"
    renderings = {r.language: r for r in item.renderings.all()}
    assert set(renderings) == {"zh", "en", "ru", "vi"}
    assert renderings["zh"].origin == Rendering.Origin.SOURCE
    assert renderings["en"].origin == Rendering.Origin.IMPORTED
    assert (
        renderings["ru"].answer
        == "800 МПа; отношение предела текучести 0,8, т. е. 640 МПа."
    )
    assert renderings["vi"].question.startswith("Theo GB/T 3098.1-2010, giới hạn bền")
    assert all(r.version == 1 and r.is_current for r in renderings.values())
    labels = {f.dimension.code: f for f in item.final_labels.all()}
    assert labels["capability"].label.code == "standards_terminology"
    assert labels["industry"].label.code == "machinery_hardware"
    assert labels["capability"].provenance == FinalLabel.Provenance.IMPORTED
    assert ItemEvent.objects.filter(item=item, kind="import").count() == 1

    # Codes and lower-case names both map; "Medium" is a difficulty in any case.
    second = Item.objects.get(external_id="IB-0002")
    assert second.difficulty == "medium"
    assert second.source_kind == Item.SourceKind.PRODUCT
    assert {f.label.code for f in second.final_labels.all()} == {
        "electronics_sensors",
        "standards_terminology",
    }
    # Multi-line quoted text survives; empty translations create no rendering.
    third = Item.objects.get(external_id="IB-0003")
    assert third.renderings.get().question == "一根 4 mm² 铜芯电缆，多行文本\n第二行？"
    assert third.final_labels.get().label.code == "engineering_calculation"
    assert third.difficulty == ""


@pytest.mark.smoke
def test_industrybench_jsonl_matches_csv(db):
    run((DATA / "industrybench.csv").read_bytes(), slug="from-csv")
    summary = run((DATA / "industrybench.jsonl").read_bytes(), slug="from-jsonl")

    assert summary.layout == "industrybench JSONL"

    def snapshot(slug):
        return sorted(
            Rendering.objects.filter(item__benchmark__slug=slug).values_list(
                "item__external_id", "language", "question", "answer", "origin"
            )
        )

    assert snapshot("from-csv") == snapshot("from-jsonl")
    assert len(snapshot("from-csv")) == 9


@pytest.mark.smoke
def test_generic_jsonl_happy_path(db):
    summary = run((DATA / "generic.jsonl").read_bytes(), slug="new-bench", name="New")

    assert summary.benchmark_created
    benchmark = Benchmark.objects.get(slug="new-bench")
    assert benchmark.name == "New"
    assert benchmark.dimensions.count() == 2
    item = Item.objects.get(external_id="DEMO-001")
    assert item.source_kind == "standard"
    assert item.source_reference == "GB/T 3098.1-2010"
    english = item.renderings.get(language="en")
    assert (english.origin, english.review_status) == ("machine", "pending")
    assert item.renderings.get(language="ru").review_status == "approved"
    assert Item.objects.get(external_id="DEMO-003").status == "draft"
    assert Item.objects.get(external_id="DEMO-002").renderings.count() == 2


def test_utf8_bom_is_accepted(benchmark):
    content = codecs.BOM_UTF8 + (DATA / "industrybench.csv").read_bytes()
    assert run(content).created == 3
    content = codecs.BOM_UTF8 + (DATA / "generic.jsonl").read_bytes()
    assert run(content, slug="generic").created == 3


def test_windows_line_endings(benchmark):
    content = industrybench_csv([industrybench_row("A"), industrybench_row("B")])
    assert b"\r\n" in content
    assert run(content).created == 2


def test_unknown_columns_are_ignored_and_reported(benchmark):
    columns = [*COLUMNS, "notes"]
    rows = [industrybench_row("A", notes="x")]
    summary = run(industrybench_csv(rows, columns=columns))
    assert summary.ignored_fields == ["notes"]
    assert "Ignored columns: notes" in summary.lines()


BAD_INPUTS = {
    "missing column": (
        industrybench_csv(
            [industrybench_row("A")], columns=[c for c in COLUMNS if c != "answer_ru"]
        ),
        ["line 1, answer_ru: missing column"],
    ),
    "empty question": (
        industrybench_csv(
            [industrybench_row("A"), industrybench_row("B", question=" ")]
        ),
        ["line 3, question: empty question"],
    ),
    "empty translated answer": (
        industrybench_csv([industrybench_row("A", answer_vi="")]),
        ["line 2, answer_vi: empty answer"],
    ),
    "unknown label": (
        industrybench_csv(
            [industrybench_row("A"), industrybench_row("B", capability="Telepathy")]
        ),
        ["line 3, capability: unknown capability label 'Telepathy'"],
    ),
    "duplicate id": (
        industrybench_csv(
            [industrybench_row("A"), industrybench_row("B"), industrybench_row("A")]
        ),
        ["line 4, id: duplicate id 'A' (first on line 2)"],
    ),
    "bad difficulty": (
        industrybench_csv([industrybench_row("A", difficulty="extreme")]),
        ["line 2, difficulty: 'extreme' is not one of easy, hard, medium"],
    ),
    "invalid utf-8": (
        industrybench_csv([industrybench_row("A"), industrybench_row("B")]).replace(
            "B 的".encode(), b"B \xff\xfe"
        ),
        ["line 3, file: invalid UTF-8 at byte 5"],
    ),
    "malformed json line": (
        jsonl([generic_item("A")])
        + b'{"id": "B", "renderings": \n'
        + jsonl([generic_item("C")]),
        ["line 2, line: malformed JSON (Expecting value at column 27)"],
    ),
    "unknown language": (
        jsonl(
            [
                generic_item(
                    "A",
                    renderings={
                        **generic_item("A")["renderings"],
                        "de": {"question": "Q", "answer": "A"},
                    },
                )
            ]
        ),
        [
            "line 1, renderings.de.question: unknown language 'de'; "
            "benchmark test-bench has zh, en, ru, vi"
        ],
    ),
    "unknown label dimension": (
        jsonl([generic_item("A", labels={"colour": "red"})]),
        ["line 1, labels.colour: benchmark test-bench has no label dimension 'colour'"],
    ),
    "missing source rendering": (
        jsonl([generic_item("A", renderings={"en": {"question": "Q", "answer": "A"}})]),
        ["line 1, renderings.zh: missing source-language rendering"],
    ),
    "bad review status": (
        jsonl(
            [
                generic_item(
                    "A",
                    renderings={
                        "zh": {"question": "Q", "answer": "A", "review_status": "great"}
                    },
                )
            ]
        ),
        [
            "line 1, renderings.zh.review_status: "
            "'great' is not one of approved, flagged, pending, rejected"
        ],
    ),
    "unknown field": (
        jsonl([generic_item("A", renderigs={})]),
        ["line 1, renderigs: unknown field"],
    ),
    "not an object": (
        jsonl([generic_item("A")]) + b'["A"]\n',
        ["line 2, line: expected a JSON object"],
    ),
    "ragged csv row": (
        industrybench_csv([industrybench_row("A")]) + b"B,only two\r\n",
        ["line 3, row: 2 fields where the header has 15"],
    ),
    "empty file": (b"\n\n", ["line 1, file: the file is empty"]),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_rejects_the_whole_file(benchmark, monkeypatch, case):
    # Batches of one make the valid rows before the bad one reach the database, so
    # the test proves the rollback rather than the validation order.
    monkeypatch.setattr(importing, "BATCH_SIZE", 1)
    content, expected = BAD_INPUTS[case]
    before = table_counts()

    assert rejected(content) == expected
    assert table_counts() == before


@pytest.mark.smoke
def test_rejected_file_creates_no_benchmark(db):
    content = industrybench_csv([industrybench_row("A", capability="Telepathy")])
    before = table_counts()
    rejected(content, slug="brand-new")
    assert table_counts() == before
    assert not Benchmark.objects.filter(slug="brand-new").exists()


def test_a_header_alone_is_rejected_and_creates_no_benchmark(db):
    header_only = industrybench_csv([])
    assert rejected(header_only, slug="brand-new") == [
        "file: the file holds no items (a header alone, or nothing)."
    ]
    assert not Benchmark.objects.filter(slug="brand-new").exists()


def test_a_header_of_a_million_columns_is_refused_at_once(benchmark):
    header = ",".join(COLUMNS + [f"extra_{n}" for n in range(1_000_000)])
    problems = rejected(f"{header}\nA,q,a\n".encode())
    assert (
        f"{len(COLUMNS) + 1_000_000:,} columns; an item file has at most 10,000"
        in problems[0]
    )


def test_duplicate_columns_are_named(benchmark):
    header = ",".join(COLUMNS + ["domain", "domain"])
    problems = rejected(f"{header}\n".encode())
    assert "line 1, domain: column appears more than once" in problems


def test_existing_id_without_update_is_rejected(benchmark):
    run(industrybench_csv([industrybench_row("A")]))
    before = table_counts()

    problems = rejected(
        industrybench_csv([industrybench_row("B"), industrybench_row("A")])
    )

    assert problems == [
        "line 3, id: item 'A' already exists in test-bench; to change it, import with "
        "“Update items whose id already exists” ticked (--update on the command line)"
    ]
    assert table_counts() == before


def test_every_problem_is_reported_and_the_first_hundred_kept(benchmark):
    rows = [
        industrybench_row(f"X{n}", difficulty="extreme", capability="?")
        for n in range(80)
    ]
    with pytest.raises(ImportRejected) as caught:
        run(industrybench_csv(rows))
    assert caught.value.total == 160
    assert len(caught.value.problems) == 100
    assert str(caught.value.problems[0]) == (
        "line 2, difficulty: 'extreme' is not one of easy, hard, medium"
    )
    assert (
        str(caught.value.problems[1])
        == "line 2, capability: unknown capability label '?'"
    )


def test_industrybench_jsonl_missing_field_names_its_line(benchmark):
    row = industrybench_row("B")
    del row["domain"]
    content = jsonl([industrybench_row("A"), row])
    assert rejected(content) == ["line 2, domain: missing field"]


def test_update_adds_versions_and_respects_human_labels(benchmark, personas):
    run(industrybench_csv([industrybench_row("A"), industrybench_row("B")]))
    item_a = Item.objects.get(external_id="A")
    adjudicated = Label.objects.get(
        dimension__benchmark=benchmark, code="fault_diagnosis"
    )
    do_set_final_label(
        item_a,
        adjudicated,
        provenance=FinalLabel.Provenance.ADJUDICATED,
        user=personas["adjudicator"],
    )
    changed = [
        industrybench_row(
            "A", answer_en="PN16 (1.6 MPa).", capability="Selection & Substitution"
        ),
        industrybench_row(
            "B", industry_primary="Electrical & Power", difficulty="hard"
        ),
        industrybench_row("C"),
    ]

    summary = run(industrybench_csv(changed), update=True, user=personas["manager"])

    assert (summary.created, summary.updated, summary.unchanged) == (1, 2, 0)
    assert summary.renderings_added == 1
    assert summary.labels_set == 1
    assert summary.human_labels_kept == ["A (capability)"]
    english = Rendering.objects.filter(item=item_a, language="en").order_by("version")
    assert [(r.version, r.is_current) for r in english] == [(1, False), (2, True)]
    assert english[1].answer == "PN16 (1.6 MPa)."
    assert english[1].created_by == personas["manager"]
    assert item_a.final_labels.get(dimension__code="capability").label == adjudicated
    item_b = Item.objects.get(external_id="B")
    assert item_b.difficulty == "hard"
    assert (
        item_b.final_labels.get(dimension__code="industry").label.code
        == "electrical_power"
    )
    assert item_b.events.filter(kind="import", summary__contains="difficulty").exists()
    assert item_b.renderings.filter(version=2).count() == 0

    again = run(industrybench_csv(changed), update=True)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)


def test_update_rejection_changes_nothing(benchmark):
    run(industrybench_csv([industrybench_row("A")]))
    before = table_counts()
    content = industrybench_csv(
        [
            industrybench_row("A", answer="changed"),
            industrybench_row("B", difficulty="x"),
        ]
    )
    rejected(content, update=True)
    assert table_counts() == before
    assert (
        Rendering.objects.get(item__external_id="A", language="zh").answer
        == "PN16，即 1.6 MPa。"
    )


@pytest.mark.smoke
def test_command_prints_problems_and_fails(tmp_path, benchmark):
    path = tmp_path / "bad.csv"
    path.write_bytes(industrybench_csv([industrybench_row("A", difficulty="extreme")]))
    stderr = io.StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command(
            "import_items", str(path), "--benchmark", "test-bench", stderr=stderr
        )
    assert (
        "line 2, difficulty: 'extreme' is not one of easy, hard, medium"
        in stderr.getvalue()
    )
    assert Item.objects.count() == 0


@pytest.mark.smoke
def test_command_imports_and_names_benchmark_after_file(tmp_path, db):
    path = tmp_path / "Pipe Items.jsonl"
    path.write_bytes(jsonl([generic_item("A")]))
    stdout = io.StringIO()
    call_command("import_items", str(path), stdout=stdout)
    assert "Benchmark pipe-items (new): 1 created" in stdout.getvalue()
    assert Item.objects.get().benchmark.slug == "pipe-items"


def test_command_format_option_forces_layout(tmp_path, benchmark):
    path = tmp_path / "items.jsonl"
    path.write_bytes(jsonl([industrybench_row("A")]))
    with pytest.raises(CommandError):
        call_command(
            "import_items",
            str(path),
            "--benchmark",
            "test-bench",
            "--format",
            "jsonl",
            stderr=io.StringIO(),
        )
    call_command(
        "import_items",
        str(path),
        "--benchmark",
        "test-bench",
        "--format",
        "industrybench",
        stdout=io.StringIO(),
    )
    assert Item.objects.count() == 1


def test_deleting_items_leaves_no_rows_behind(benchmark):
    # Renderings, labels and events have no database-level foreign key to their item
    # (benchmark.models ITEM_FK_NOTE): Django's collector must delete them.
    do_import_items(
        io.BytesIO(industrybench_csv([industrybench_row(n) for n in "ABC"])),
        slug="test-bench",
    )
    Item.objects.filter(external_id="A").delete()
    assert table_counts() == {
        "benchmarks": 1,
        "items": 2,
        "renderings": 8,
        "labels": 4,
        "events": 2,
    }

    Item.objects.filter(benchmark=benchmark).delete()
    assert table_counts() == {
        "benchmarks": 1,
        "items": 0,
        "renderings": 0,
        "labels": 0,
        "events": 0,
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('"id": "A", "question": "a\\u0000b"', "NUL"),
        ('"id": "A", "question": "\\ud800"', "lone surrogate"),
        ('"id": ' + "9" * 5000, "5,000 digits is out of range"),
        ('"id": 1e400', "out of range"),
        ('"id": ' + "[" * 200_000 + "]" * 200_000, "nested too deeply"),
        ('"id": "A", "id": "B"', 'the key "id" appears twice in one object'),
        (
            '"id": "A", "renderings": {"zh": {"question": "q", "question": "r"}}',
            'the key "question" appears twice',
        ),
    ],
)
def test_jsonl_items_are_read_strictly(db, line, message):
    problems = rejected(("{" + line + "}\n").encode(), slug="strict")
    assert any(message in problem for problem in problems), problems
    assert not Benchmark.objects.filter(slug="strict").exists()


def test_a_nul_in_a_csv_is_refused_with_its_line(benchmark):
    rows = [industrybench_row("A"), industrybench_row("B", question="a\x00b")]
    problems = rejected(industrybench_csv(rows))
    assert any("line 3" in p and "NUL" in p for p in problems), problems
    assert not Item.objects.exists()
