"""The paper set in the IndustryBench paper's own set-up — one rubric judge — and on
a benchmark of the binary scale: Tables 11 and 12 against hand counts, Table 6's
confusion matrix, Table 3's adjudication count, the paper's precision in LaTeX,
and every report page and the archive answering without an error."""

import csv
import io
import json
import zipfile

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse
from sklearn.metrics import confusion_matrix

from annotation.agreement.consensus import consensus_report
from annotation.agreement.loading import REPORT_TITLES
from annotation.agreement.tables import SCORE_SCALE, calibration_report
from annotation.paper.collect import TABLES, paper_set
from benchmark.models import Item
from judging.evaluation.models import EvaluationRun, Response
from judging.evaluation.pipeline import grade_stored_answers
from judging.leaderboard.building import build_report
from tests.annotation.report_factories import (
    labelling_consensus,
    one_judge_set_up,
)
from tests.api.helpers import token_client
from tests.judging.factories import make_format_items, make_items, make_run
from tests.latex import assert_compiles


def csv_rows(result, name: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(result.files[name].decode("utf-8-sig"))))


@pytest.fixture
def one_judge(benchmark, personas):
    return one_judge_set_up(benchmark, personas["expert"])


def test_one_judge_writes_every_table_3_to_20(benchmark, one_judge, tmp_path, capsys):
    call_command(
        "paper_tables",
        "--benchmark",
        benchmark.slug,
        "--out",
        str(tmp_path),
        "--preset",
        "industrybench",
    )
    assert f"Wrote {len(TABLES)} tables" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert set(manifest["tables"]) == {entry.name for entry in TABLES}
    assert {entry.number for entry in TABLES} == set(range(3, 21))
    assert "Table 6 (confusion matrix)" in manifest["tables"]
    assert manifest["tables_not_generated"] == {}
    for name, entry in manifest["tables"].items():
        for file in entry["files"]:
            assert (tmp_path / file).exists(), name
    # Judges cannot be compared with one judge: the tables say so, empty.
    for name in ("Table 5", "Table 15"):
        entry = manifest["tables"][name]
        assert entry["rows"] == 0
        assert any("One rubric judge" in note for note in entry["notes"]), name
    latex = (tmp_path / manifest["tables"]["Table 5"]["files"][1]).read_text()
    assert "One rubric judge scored these responses (judge-a)" in latex
    # Table 6 with the one judge against the human.
    (row,) = csv.DictReader(
        io.StringIO(
            (tmp_path / "tables/table06_agreement.csv").read_text(encoding="utf-8-sig")
        )
    )
    assert row["Rater"] == "judge-a" and int(row["n"]) == 30


def test_one_judge_pages_and_archive_answer(benchmark, one_judge, client_for, personas):
    client = client_for("manager")
    assert client.get(reverse("annotation:report_index")).status_code == 200
    for name in REPORT_TITLES:
        response = client.get(reverse("annotation:report", args=[benchmark.slug, name]))
        assert response.status_code == 200, name
        for fmt in ("json", "latex", "text", "csv"):
            download = client.get(
                reverse("annotation:report_download", args=[benchmark.slug, name, fmt])
            )
            assert download.status_code == 200, (name, fmt)
    page = client.get(
        reverse("annotation:report", args=[benchmark.slug, "cross-judge"])
    )
    assert "One rubric judge scored these responses (judge-a)" in page.content.decode()
    calibration = client.get(
        reverse("annotation:report", args=[benchmark.slug, "calibration"])
    ).content.decode()
    assert 'data-table="confusion"' in calibration
    for kind in ("judges", "human"):
        browser = client.get(
            reverse("annotation:report_disagreements", args=[benchmark.slug])
            + f"?kind={kind}"
        )
        assert browser.status_code == 200
    archive = client.get(
        reverse("annotation:paper_archive", args=[benchmark.slug])
        + "?preset=industrybench"
    )
    assert archive.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(archive.getvalue())).namelist()
    assert "tables/table05_models.csv" in names
    # The REST API answers the same reports.
    api = token_client(personas["manager"])
    for name in REPORT_TITLES:
        answer = api.get(f"/api/v1/benchmarks/{benchmark.slug}/reports/{name}")
        assert answer.status_code == 200, name
    assert (
        api.get(f"/api/v1/benchmarks/{benchmark.slug}/reports/cross-judge").json()[
            "tables"
        ][0]["rows"]
        == []
    )
    assert "tables/table06_confusion.csv" in names


def test_confusion_matrix_is_sklearns(benchmark, one_judge):
    judge, human = one_judge
    result = paper_set(benchmark, preset="industrybench")
    rows = csv_rows(result, "tables/table06_confusion.csv")
    assert [int(row["Human score"]) for row in rows] == SCORE_SCALE
    assert {(row["Judge"], row["Human"]) for row in rows} == {("judge-a", "expert")}
    ours = np.array(
        [[int(row[f"Judge {s}"]) for s in SCORE_SCALE] for row in rows], dtype=int
    )
    expected = confusion_matrix(human, judge, labels=SCORE_SCALE)
    assert (ours == expected).all()
    assert [int(row["Total"]) for row in rows] == expected.sum(axis=1).tolist()
    # The diagonal is Table 6's exact agreement.
    (agreement,) = csv_rows(result, "tables/table06_agreement.csv")
    exact = float(agreement["Exact (%)"])
    assert exact == pytest.approx(100 * np.trace(expected) / 30, abs=1e-3)


def test_confusion_matrix_per_judge_and_human():
    """Two judges and two humans: a block per (judge or median, human), humans on
    the rows; a response one side did not score is in no cell."""
    judges = np.array([[0, 1, 2, 3, 3, np.nan], [0, 1, 1, 3, 2, 3]], dtype=float)
    humans = np.array([[0, 1, 2, 3, 2, 3], [1, np.nan, 2, 3, 3, 0]], dtype=float)
    report = calibration_report(["j1", "j2"], judges, ["h1", "h2"], humans)
    table = report.table("confusion")
    blocks = {}
    for row in table.rows:
        blocks.setdefault((row[0], row[1]), []).append(row[3:7])
    assert list(blocks) == [
        ("j1", "h1"),
        ("j2", "h1"),
        ("Median of judges", "h1"),
        ("j1", "h2"),
        ("j2", "h2"),
        ("Median of judges", "h2"),
    ]
    assert blocks[("j1", "h1")] == [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 1, 1],
        [0, 0, 0, 1],
    ]
    # h2 left response 1 ungraded, j1 response 5 unscored: 4 pairs.
    assert sum(map(sum, blocks[("j1", "h2")])) == 4


def test_table_3_gives_the_adjudicated_items_as_a_count_and_a_rate():
    """The paper's wording: 150 questions with no majority in at least one of the
    two dimensions go to a person."""
    data = {
        "units": 2049,
        "adjudication": 150,
        "dimensions": [
            {
                "name": name,
                "units": 2049,
                "full": full,
                "majority": majority,
                "none": none,
                "fleiss_units": 2049,
                "fleiss_kappa": None,
                "krippendorff_alpha": None,
                "pairwise": [],
            }
            for name, full, majority, none in (
                ("Industry", 1414, 556, 79),
                ("Capability", 1322, 659, 68),
            )
        ],
    }
    table = consensus_report(data).table("outcomes")
    keys = [column.key for column in table.columns]
    union = dict(zip(keys, table.rows[-1], strict=True))
    assert union["none_n"] == 150
    assert union["none"] == pytest.approx(150 / 2049)
    text = table.formatted_rows()[-1]
    assert "7.3%" in text and "150" in text
    industry = dict(zip(keys, table.rows[0], strict=True))
    assert industry["none_n"] == 79
    assert table.formatted_rows()[0][keys.index("none")] == "3.9%"


@pytest.fixture
def hand_counted(benchmark):
    """Six items (difficulty easy, easy, medium, medium, hard, none) and three
    models scored by one judge:

    Model-A raw 3 3 2 1 0 0, SV – ✗ – – – (item 5 empty, not reviewed):
        final 3 0 2 1 0 0 → Raw 1.500, Final 1.000, SV 1 of 5 = 20.0%
    Model-B raw 2 2 2 2 2 2, no SV flag: Raw 2.000, Final 2.000, SV 0 of 6
    Model-C raw 3 3 3 3 3 1, SV ✗ ✗ – – – –:
        final 0 0 3 3 3 1 → Raw 2.667, Final 1.667, SV 2 of 6 = 33.3%
    Raw ranks C 1, B 2, A 3; final ranks B 1, C 2, A 3."""
    items = make_items(benchmark, 6, languages=("zh",))
    for item, difficulty in zip(
        items, ["easy", "easy", "medium", "medium", "hard", ""], strict=True
    ):
        item.difficulty = difficulty
    Item.objects.bulk_update(items, ["difficulty"])
    answered = Response.Status.ANSWERED
    make_run(
        benchmark,
        items,
        [3, 3, 2, 1, 0, 0],
        [False, True, False, False, False, None],
        model="Model-A",
        statuses=[answered] * 5 + [Response.Status.EMPTY],
    )
    make_run(benchmark, items, [2] * 6, [False] * 6, model="Model-B")
    make_run(
        benchmark,
        items,
        [3, 3, 3, 3, 3, 1],
        [True, True, False, False, False, False],
        model="Model-C",
    )
    return items


def test_table_11_by_hand(benchmark, hand_counted):
    result = paper_set(benchmark, preset="industrybench")
    rows = csv_rows(result, "tables/table11_sv_impact.csv")
    got = [
        (
            row["Rank"],
            row["Model"],
            row["SV rate (%)"],
            row["SV flagged"],
            row["SV checked"],
            row["Raw Mean"],
            row["Final (SV)"],
            row["Delta"],
            row["Raw rank"],
            row["Rank change"],
        )
        for row in rows
    ]
    assert got == [
        ("1", "Model-B", "0.0", "0", "6", "2.0", "2.0", "0.0", "2", "1.0"),
        (
            "2",
            "Model-C",
            "33.3333",
            "2",
            "6",
            "2.666667",
            "1.666667",
            "-1.0",
            "1",
            "-1.0",
        ),
        ("3", "Model-A", "20.0", "1", "5", "1.5", "1.0", "-0.5", "3", "0.0"),
    ]
    entry = result.manifest["tables"]["Table 11"]
    assert "SV rate over every run: 3 of 17 (17.6%)." in entry["notes"]
    latex = result.files["tables/table11_sv_impact.tex"].decode()
    assert (
        "2 & Model-C & uncategorised & 33.3\\% & 2 & 6 & 2.667 & 1.667 & -1.000 & 1 "
        "& -1 \\\\"
    ) in latex
    assert (
        "1 & Model-B & uncategorised & 0.0\\% & 0 & 6 & 2.000 & 2.000 & +0.000" in latex
    )


def test_table_12_by_hand(benchmark, hand_counted):
    result = paper_set(benchmark, preset="industrybench")
    rows = csv_rows(result, "tables/table12_difficulty_composition.csv")
    assert [(row["Difficulty"], row["Count"], row["Share (%)"]) for row in rows] == [
        ("Easy", "2", "33.3333"),
        ("Medium", "2", "33.3333"),
        ("Hard", "1", "16.6667"),
        ("No difficulty", "1", "16.6667"),
        ("Total", "6", "100.0"),
    ]
    latex = result.files["tables/table12_difficulty_composition.tex"].decode()
    assert "Easy & 2 & 33.3\\% \\\\" in latex and "Total & 6 & 100.0\\%" in latex
    assert_compiles(latex)


def test_table_12_falls_back_on_the_panels_terciles(benchmark, hand_counted):
    Item.objects.filter(benchmark=benchmark).update(difficulty="")
    result = paper_set(benchmark)
    rows = csv_rows(result, "tables/table12_difficulty_composition.csv")
    counts = [int(row["Count"]) for row in rows]
    assert counts[-1] == 6 == sum(counts[:-1]) and len(rows) == 4
    assert "panel-derived" in result.manifest["tables"]["Table 12"]["notes"][0]
    # The same terciles as Table 9's.
    nine = result.manifest["tables"]["Table 9"]["notes"][0]
    assert ", ".join(f"{row['Difficulty']} {row['Count']}" for row in rows[:3]) in nine


def latex_cells(latex: str, first: str) -> list[str]:
    """The cells of the row that starts with `first`, low-support marks removed."""
    line = next(row for row in latex.splitlines() if row.startswith(first))
    return [
        cell.replace("$^{\\dagger}$", "").strip()
        for cell in line.removesuffix("\\\\").split("&")
    ]


def test_latex_has_the_papers_precision(benchmark, hand_counted):
    """Means with 3 decimals (the heatmaps too, which the page shows with 2),
    percentages with 1."""
    result = paper_set(benchmark, preset="industrybench")
    files = result.files
    # Model-B scores 2 on every item: a 2.000 mean and a 0.0% Perfect rate in
    # every tercile.
    difficulty = files["tables/table09_difficulty.tex"].decode()
    assert latex_cells(difficulty, "Model-B")[1:] == ["2.000", "0.0\\%"] * 3
    for number in (17, 20):
        name = result.manifest["tables"][f"Table {number}"]["files"][1]
        cells = latex_cells(files[name].decode(), "Model-B")[1:]
        assert cells and all(cell in {"2.000", "--"} for cell in cells), cells
    # The page keeps its compact 2 decimals.
    screen = build_report(benchmark).tables["difficulty"].formatted_rows()
    assert screen[1][1:3] == ["2.00", "0.0%"]
    leaderboard = latex_cells(files["tables/table07_leaderboard.tex"].decode(), "2 &")
    # Rank, model, category, Final, CI, items, Raw, Delta, Perfect, Pass, SV rate
    assert leaderboard[3] == "1.667" and leaderboard[6] == "2.667"
    assert leaderboard[7] == "-1.000"
    assert leaderboard[8:11] == ["50.0\\%", "50.0\\%", "33.3\\%"]
    for entry in result.manifest["tables"].values():
        assert_compiles(files[entry["files"][1]].decode())


@pytest.fixture
def binary_benchmark(benchmark):
    """A benchmark on the binary scale: a run's MC/TF answers graded by the
    rules, and a labelling run."""
    items = make_format_items(benchmark, mc=4, tf=2)
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name="Model-Bin",
        language="zh",
        binary=True,
        origin=EvaluationRun.Origin.IMPORTED,
        status=EvaluationRun.Status.COMPLETE,
        total_items=len(items),
    )
    replies = ["答案：B", "答案：C", "答案：B", "答案：B", "正确。", "错误。"]
    Response.objects.bulk_create(
        Response(
            run=run,
            item=item,
            rendering=item.renderings.get(),
            text=reply,
            status=Response.Status.ANSWERED,
        )
        for item, reply in zip(items, replies, strict=True)
    )
    assert grade_stored_answers(run.responses.all()) == 6
    labelling_consensus(benchmark, items)
    return run


def test_binary_benchmark_writes_what_applies(
    benchmark, binary_benchmark, tmp_path, capsys
):
    call_command(
        "paper_tables",
        "--benchmark",
        benchmark.slug,
        "--out",
        str(tmp_path),
        "--preset",
        "industrybench",
    )
    out = capsys.readouterr().out
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["scale"] == "binary"
    assert set(manifest["tables"]) == {"Table 3", "Table 12", "Table 13", "Table 14"}
    skipped = manifest["tables_not_generated"]
    assert set(skipped) | set(manifest["tables"]) == {e.name for e in TABLES}
    assert all("binary scale" in why for why in skipped.values())
    assert "Not generated: Table 7: the benchmark is on the binary scale" in out
    assert set(manifest["figures"]) == {"Figure 2"}
    assert set(manifest["figures_not_generated"]) == {
        "Figure 1",
        "Figure 3",
        "Figure 4",
        "Figure 5",
        "Figure 6",
    }
    assert manifest["runs"][0]["model"] == "Model-Bin"
    assert manifest["runs"][0]["trials"] == 1
    for entry in manifest["tables"].values():
        assert_compiles((tmp_path / entry["files"][1]).read_text(encoding="utf-8"))


def test_binary_benchmark_pages_and_archive_answer(
    benchmark, binary_benchmark, client_for
):
    client = client_for("manager")
    for name in REPORT_TITLES:
        response = client.get(reverse("annotation:report", args=[benchmark.slug, name]))
        assert response.status_code == 200, name
    archive = client.get(reverse("annotation:paper_archive", args=[benchmark.slug]))
    assert archive.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(archive.getvalue())).namelist()
    assert "tables/table03_outcomes.csv" in names
    assert "tables/table12_difficulty_composition.csv" in names
    assert not any(name.startswith("tables/table07") for name in names)
