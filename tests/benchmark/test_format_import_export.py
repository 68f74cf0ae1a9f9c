"""Item formats through import and export: each format in CSV and JSONL, the
row-level problems, round trips, --update, and files that predate formats."""

import csv
import io
import json

import pytest

from benchmark import importing
from benchmark.actions import do_add_rendering_version
from benchmark.exporting import write_export
from benchmark.importing import do_import_items
from benchmark.models import Benchmark, Item, Rendering
from benchmark.validation import ImportRejected
from tests.benchmark.importing_helpers import (
    COLUMNS,
    DATA,
    FORMAT_COLUMNS,
    KEY_POINTS,
    OPTIONS,
    format_item,
    format_row,
    generic_item,
    industrybench_csv,
    industrybench_row,
    jsonl,
    table_counts,
)

FORMATS = ["open", "multiple_choice", "true_false", "short_answer"]


def run(content: bytes, slug="test-bench", **options):
    return do_import_items(io.BytesIO(content), slug=slug, **options)


def rejected(content: bytes, slug="test-bench", **options) -> list[str]:
    with pytest.raises(ImportRejected) as caught:
        run(content, slug=slug, **options)
    return [str(problem) for problem in caught.value.problems]


def format_csv(rows: list[dict]) -> bytes:
    return industrybench_csv(rows, columns=FORMAT_COLUMNS)


def export(slug: str, fmt: str, *, release=False) -> str:
    out = io.StringIO()
    write_export(Benchmark.objects.get(slug=slug), out, fmt, release=release)
    return out.getvalue()


def snapshot(slug: str) -> list:
    """Every item's format data and current renderings, options and key points."""
    return [
        (
            item.external_id,
            item.format,
            item.correct_options,
            item.multiple_answers,
            item.correct_answer,
            sorted(
                item.renderings.filter(is_current=True).values_list(
                    "language", "question", "answer", "options", "key_points"
                )
            ),
        )
        for item in Item.objects.filter(benchmark__slug=slug).order_by("external_id")
    ]


@pytest.mark.smoke
def test_csv_imports_each_format(benchmark):
    rows = [format_row(f"F-{n}", item_format) for n, item_format in enumerate(FORMATS)]
    assert run(format_csv(rows)).created == 4

    items = {item.format: item for item in Item.objects.all()}
    assert set(items) == set(FORMATS)
    choice = items["multiple_choice"]
    assert (choice.correct_options, choice.multiple_answers) == (["B"], False)
    assert choice.correct_answer is None
    options = dict(
        choice.renderings.values_list("language", "options").order_by("language")
    )
    assert options == OPTIONS
    assert items["true_false"].correct_answer is True
    assert items["true_false"].renderings.get(language="zh").answer == ""
    key_points = dict(
        items["short_answer"].renderings.values_list("language", "key_points")
    )
    assert key_points == KEY_POINTS
    open_item = items["open"]
    assert (open_item.correct_options, open_item.correct_answer) == ([], None)
    assert not open_item.renderings.exclude(options=[]).exists()


@pytest.mark.smoke
def test_generic_jsonl_imports_each_format(benchmark):
    lines = [format_item(f"F-{n}", fmt) for n, fmt in enumerate(FORMATS)]
    assert run(jsonl(lines)).created == 4

    choice = Item.objects.get(format="multiple_choice")
    assert choice.correct_options == ["B"]
    assert choice.renderings.get(language="en").options == OPTIONS["en"]
    assert Item.objects.get(format="true_false").correct_answer is True
    short = Item.objects.get(format="short_answer")
    assert short.renderings.get(language="zh").key_points == KEY_POINTS["zh"]


def test_a_set_of_correct_options_is_declared(benchmark):
    row = format_row(
        "A", "multiple_choice", correct_options="A、C", multiple_answers="是"
    )
    line = format_item("B", "multiple_choice", correct_options=["A", "C"])
    line["multiple_answers"] = True
    run(format_csv([row]))
    run(jsonl([line]))

    for item in Item.objects.all():
        assert (item.correct_options, item.multiple_answers) == (["A", "C"], True)


@pytest.mark.smoke
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("item_format", FORMATS[1:])
def test_export_then_import_gives_the_same_items(db, fmt, item_format):
    # An open item beside it: open QA must come back open from a file with formats.
    source = format_csv([format_row("A", item_format), format_row("B", "open")])
    run(source, slug="first")
    first = export("first", fmt)

    run(first.encode(), slug="second")
    second = export("second", fmt)

    assert second == first
    assert snapshot("second") == snapshot("first")
    assert snapshot("first")[0][1] == item_format


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_generic_jsonl_round_trips_through_either_format(db, fmt):
    run(jsonl([format_item(f"F-{n}", f) for n, f in enumerate(FORMATS)]), slug="first")
    run(export("first", fmt).encode(), slug="second")
    assert snapshot("second") == snapshot("first")


@pytest.mark.parametrize("source", ["industrybench.csv", "generic.jsonl"])
def test_files_without_format_columns_import_and_export_as_before(db, source):
    run((DATA / source).read_bytes(), slug="old")

    items = Item.objects.filter(benchmark__slug="old")
    assert {item.format for item in items} == {"open"}
    assert all(item.correct_options == [] for item in items)
    assert not Rendering.objects.exclude(options=[], key_points=[]).exists()
    text = export("old", "csv")
    assert text.splitlines()[0].split(",")[:15] == COLUMNS
    assert "item_format" not in text and "option_a" not in text
    assert "item_format" not in export("old", "jsonl")


def test_release_export_carries_the_format(benchmark):
    run(format_csv([format_row("A", "multiple_choice"), format_row("B", "true_false")]))

    lines = [
        json.loads(line)
        for line in export("test-bench", "jsonl", release=True).splitlines()
    ]
    assert lines[0]["item_format"] == "multiple_choice"
    assert lines[0]["correct_options"] == ["B"]
    assert lines[0]["renderings"]["en"]["options"] == OPTIONS["en"]
    assert (lines[1]["item_format"], lines[1]["correct_answer"]) == ("true_false", True)
    rows = list(csv.DictReader(io.StringIO(export("test-bench", "csv", release=True))))
    assert (rows[0]["item_format"], rows[0]["correct_options"]) == (
        "multiple_choice",
        "B",
    )
    assert rows[0]["option_b_en"] == "Class 8.8"
    assert rows[1]["correct_answer"] == "true"


def mc(**overrides):
    return format_row("A", "multiple_choice", **overrides)


CSV_PROBLEMS = {
    "unknown format": (
        [format_row("A", "essay")],
        [
            "line 3, item_format: 'essay' is not one of multiple_choice, open, "
            "short_answer, true_false"
        ],
    ),
    "three options": (
        [mc(option_d="", option_d_en="")],
        ["line 3, option_a…option_g: 3 options; a multiple-choice item has 4 to 7"],
    ),
    "an empty option before a filled one": (
        [mc(option_b="")],
        ["line 3, option_b: empty option"],
    ),
    "a repeated option": (
        [mc(option_c="8.8 级")],
        ["line 3, option_c: repeats an earlier option"],
    ),
    "no correct option": (
        [mc(correct_options="")],
        ["line 3, correct_options: a multiple-choice item needs its correct option(s)"],
    ),
    "a correct option out of range": (
        [mc(correct_options="E")],
        ["line 3, correct_options: E is not an option (the item has options A–D)"],
    ),
    "not a letter": (
        [mc(correct_options="B or C")],
        [
            "line 3, correct_options: 'or' is not an option letter; write A to G, "
            "several separated by commas"
        ],
    ),
    "two correct options, no set declared": (
        [mc(correct_options="B,C")],
        [
            "line 3, correct_options: 2 correct options but multiple_answers is not "
            "set; set it to true when the answer is a set of options"
        ],
    ),
    "a translation with other options": (
        [mc(option_e_en="Class 5.6")],
        [
            "line 3, option_a_en…option_g_en: 5 options where the source language "
            "has 4; a translation renders the same ones"
        ],
    ),
    "true/false without its answer": (
        [format_row("A", "true_false", correct_answer="")],
        ["line 3, correct_answer: a true/false item needs true or false"],
    ),
    "true/false answer not true or false": (
        [format_row("A", "true_false", correct_answer="maybe")],
        ["line 3, correct_answer: 'maybe' is not true or false"],
    ),
    "true/false with options": (
        [format_row("A", "true_false", option_a="对", option_b="错")],
        [
            "line 3, option_a…option_g: only a multiple-choice item has options; "
            "this item's format is true_false"
        ],
    ),
    "short answer without key points": (
        [format_row("A", "short_answer", key_point_1="", key_point_2="")],
        [
            "line 3, key_point_1…key_point_5: 0 key points; a short-answer item "
            "has 1 to 5"
        ],
    ),
    "short answer without a reference answer": (
        [format_row("A", "short_answer", answer_en=" ")],
        ["line 3, answer_en: empty answer"],
    ),
    "an open item with key points": (
        [format_row("A", "open", key_point_1="800 MPa")],
        [
            "line 3, key_point_1…key_point_5: only a short-answer item has key "
            "points; this item's format is open"
        ],
    ),
    "an open item with an answer key": (
        [format_row("A", "", correct_options="B", correct_answer="false")],
        [
            "line 3, correct_options: only a multiple-choice item has one; this "
            "item's format is open",
            "line 3, correct_answer: only a true/false item has one; this item's "
            "format is open",
        ],
    ),
    "an open item without an answer": (
        [format_row("A", "open", answer="")],
        ["line 3, answer: empty answer"],
    ),
}


@pytest.mark.parametrize("case", list(CSV_PROBLEMS))
def test_csv_format_problems_reject_the_file(benchmark, monkeypatch, case):
    # Batches of one write the good first row before the bad one is read, so the
    # test proves the rollback.
    monkeypatch.setattr(importing, "BATCH_SIZE", 1)
    rows, expected = CSV_PROBLEMS[case]
    good = format_row("GOOD", "multiple_choice")
    before = table_counts()

    assert rejected(format_csv([good, *rows])) == expected
    assert table_counts() == before


def test_format_problems_name_the_item_row(benchmark):
    rows = [format_row("A", "open"), format_row("B", "true_false", correct_answer="")]
    assert rejected(format_csv(rows)) == [
        "line 3, correct_answer: a true/false item needs true or false"
    ]


@pytest.mark.parametrize(
    ("columns", "problem"),
    [
        (["option_h"], "line 1, option_h: not an option or key-point column"),
        (["key_point_6"], "line 1, key_point_6: not an option or key-point column"),
        (
            ["option_a_zh"],
            "line 1, option_a_zh: the source language (zh) takes no suffix",
        ),
        (["option_a_de"], "line 1, option_a_de: no question_de column"),
    ],
)
def test_bad_option_columns_are_named_in_the_header(benchmark, columns, problem):
    content = industrybench_csv([industrybench_row("A")], columns=[*COLUMNS, *columns])
    problems = rejected(content)
    assert len(problems) == 1 and problems[0].startswith(problem), problems


JSONL_PROBLEMS = {
    "options not a list": (
        "multiple_choice",
        {"renderings": {"zh": {"question": "Q", "answer": "", "options": "A B C D"}}},
        ["line 1, renderings.zh.options: expected a list of texts"],
    ),
    "an option that is not text": (
        "multiple_choice",
        {
            "renderings": {
                "zh": {
                    "question": "Q",
                    "answer": "",
                    "options": ["4.6", "8.8", {}, "12.9"],
                }
            }
        },
        ["line 1, renderings.zh.options[2]: expected text"],
    ),
    "an empty key point": (
        "short_answer",
        {
            "renderings": {
                "zh": {"question": "Q", "answer": "A", "key_points": ["800 MPa", " "]}
            },
        },
        ["line 1, renderings.zh.key_points[1]: empty key point"],
    ),
    "a translation with other key points": (
        "short_answer",
        {
            "renderings": {
                "zh": {
                    "question": "Q",
                    "answer": "A",
                    "key_points": ["800 MPa", "640"],
                },
                "en": {"question": "Q", "answer": "A", "key_points": ["800 MPa"]},
            },
        },
        [
            "line 1, renderings.en.key_points: 1 key point where the source "
            "language has 2; a translation renders the same ones"
        ],
    ),
    "correct options as a number": (
        "multiple_choice",
        {"correct_options": 2},
        ["line 1, correct_options: expected option letters (A to G)"],
    ),
    "true/false as a number": (
        "true_false",
        {"correct_answer": 1},
        ["line 1, correct_answer: '1' is not true or false"],
    ),
}


@pytest.mark.parametrize("case", list(JSONL_PROBLEMS))
def test_jsonl_format_problems_reject_the_file(benchmark, case):
    item_format, overrides, expected = JSONL_PROBLEMS[case]
    line = format_item("A", item_format, **overrides)
    before = table_counts()
    assert rejected(jsonl([line])) == expected
    assert table_counts() == before


def test_the_industrybench_jsonl_takes_the_csv_columns(benchmark):
    row = format_row("A", "multiple_choice")
    run(jsonl([{**row, "multiple_answers": False}]))
    item = Item.objects.get()
    assert (item.format, item.correct_options) == ("multiple_choice", ["B"])

    bad = format_row("B", "multiple_choice", option_b="")
    assert rejected(jsonl([bad])) == ["line 1, option_b: empty option"]


def test_update_without_format_columns_keeps_the_format(benchmark):
    run(format_csv([format_row("A", "multiple_choice")]))
    # A file from before formats: its rows are read as open QA, so each rendering
    # needs an answer.
    edited = industrybench_row(
        "A",
        answer="8.8 级",
        answer_en="Class 8.8",
        question_ru="",
        answer_ru="",
        question_vi="",
        answer_vi="",
    )
    run(industrybench_csv([edited]), update=True)

    item = Item.objects.get()
    assert (item.format, item.correct_options) == ("multiple_choice", ["B"])
    for language in ("zh", "en"):
        current = item.renderings.get(language=language, is_current=True)
        assert (current.version, current.options) == (2, OPTIONS[language])
    assert item.renderings.get(language="zh", is_current=True).answer == "8.8 级"


def test_update_with_format_columns_changes_format_and_options(benchmark, personas):
    run(format_csv([format_row("A", "multiple_choice")]))
    changed = format_row(
        "A", "multiple_choice", option_e="5.6 级", option_e_en="Class 5.6"
    )

    summary = run(format_csv([changed]), update=True, user=personas["manager"])

    assert summary.renderings_added == 2
    item = Item.objects.get()
    assert item.renderings.get(language="zh", is_current=True).options[-1] == "5.6 级"
    to_true_false = format_row("A", "true_false")
    run(format_csv([to_true_false]), update=True)
    item.refresh_from_db()
    assert (item.format, item.correct_options, item.correct_answer) == (
        "true_false",
        [],
        True,
    )
    assert item.renderings.get(language="en", is_current=True).options == []
    event = item.events.filter(kind="import").first()
    assert event.before["format"] == "multiple_choice"
    assert event.after["correct_answer"] is True
    again = run(format_csv([to_true_false]), update=True)
    assert again.unchanged == 1


def test_an_edit_of_the_text_keeps_the_options(benchmark):
    run(jsonl([format_item("A", "multiple_choice")]))
    item = Item.objects.get()

    edited = do_add_rendering_version(
        item,
        "en",
        question="Which property class is 800 MPa with a yield ratio of 0.8?",
        answer="",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.APPROVED,
    )

    assert (edited.version, edited.options) == (2, OPTIONS["en"])
    event = item.events.get(kind="rendering")
    assert "options" not in event.after


def test_a_generic_line_without_format_fields_is_open_qa(benchmark):
    run(jsonl([generic_item("A")]))
    assert Item.objects.get().format == "open"
    assert rejected(
        jsonl([generic_item("B", renderings={"zh": {"question": "Q", "answer": ""}})])
    ) == ["line 1, renderings.zh.answer: empty answer"]


def test_copy_and_bulk_create_write_the_same_format_data(db, monkeypatch):
    content = jsonl([format_item(f"F-{n}", f) for n, f in enumerate(FORMATS)])
    run(content, slug="copied")
    original = importing.Writer.__init__

    def without_copy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.use_copy = False  # the path other databases take

    monkeypatch.setattr(importing.Writer, "__init__", without_copy)
    run(content, slug="created")

    assert snapshot("created") == snapshot("copied")
