"""`manage.py paper_tables` and the reports page's archive: every table the paper
numbers (CSV and LaTeX that compiles), the figures (SVG, PNG) and a manifest of
what each was computed on; the paper's own arithmetic for Table 4."""

import csv
import io
import json
import zipfile

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.agreement.tables import records, sv_validation_report
from annotation.paper.collect import FIGURES, TABLES, paper_set
from benchmark.models import FinalLabel, Label, LabelDimension
from judging.evaluation.models import EvaluationRun
from tests.annotation.report_factories import (
    SV_JUDGE,
    bulk_items,
    human_grades,
    judged_runs,
    labelling_consensus,
)
from tests.judging.factories import make_run
from tests.latex import assert_compiles


@pytest.fixture
def stored(benchmark, personas):
    items = bulk_items(benchmark, 40)
    runs = judged_runs(benchmark, items, models=("Model-A", "Model-B", "Model-C"))
    # The leaderboard reads each run's own judges: name them, as a real run does.
    EvaluationRun.objects.filter(benchmark=benchmark).update(
        judge_name="judge-a", sv_judge_name=SV_JUDGE
    )
    make_run(
        benchmark,
        items,
        [3] * 30 + [2] * 10,
        [True] * 5 + [False] * 35,
        model="Model-A",
        thinking=True,
    )
    responses, scores, flags = runs["Model-A"]
    human_grades(
        benchmark,
        responses,
        {personas["expert"]: scores["judge-b"]},
        flags={personas["expert"]: flags},
    )
    labelling_consensus(benchmark, items)
    capability = LabelDimension.objects.get(benchmark=benchmark, code="capability")
    labels = list(Label.objects.filter(dimension=capability))
    FinalLabel.objects.filter(item__benchmark=benchmark, dimension=capability).delete()
    FinalLabel.objects.bulk_create(
        FinalLabel(
            item=item,
            dimension=capability,
            label=labels[i % len(labels)],
            provenance=FinalLabel.Provenance.IMPORTED,
        )
        for i, item in enumerate(items)
    )
    return items


def test_every_numbered_table_and_figure_with_a_manifest(benchmark, stored):
    result = paper_set(benchmark, preset="industrybench")
    manifest = result.manifest
    assert set(manifest["tables"]) == {entry.name for entry in TABLES}
    assert {entry.number for entry in TABLES} == set(range(3, 21))
    assert manifest["tables_not_generated"] == {}
    # Figure 3 needs a construction ledger, which this benchmark has not.
    assert set(manifest["figures"]) == {f"Figure {n}" for n in FIGURES if n != 3}
    assert set(manifest["figures_not_generated"]) == {"Figure 3"}
    assert manifest["kappa_weights"] == "linear" and manifest["pairs_top"] == 9
    assert {run["model"] for run in manifest["runs"]} == {
        "Model-A",
        "Model-B",
        "Model-C",
    }
    thinking = next(run for run in manifest["runs"] if run["thinking"])
    assert thinking["judge"] and thinking["items_scored"] == 40
    assert all({"judge_prompt_version", "sv_judge"} <= set(r) for r in manifest["runs"])
    for name, entry in manifest["tables"].items():
        csv_name, tex_name = entry["files"]
        rows = list(csv.reader(io.StringIO(result.files[csv_name].decode("utf-8-sig"))))
        assert len(rows) - 1 == entry["rows"], name
        latex = result.files[tex_name].decode("utf-8")
        assert latex.startswith("% Needs \\usepackage{booktabs"), name
        assert_compiles(latex)
    for entry in manifest["figures"].values():
        svg, png = (result.files[name] for name in entry["files"])
        assert svg.lstrip().startswith(b"<?xml") and b"<svg" in svg
        assert png.startswith(b"\x89PNG")
    assert json.loads(result.files["manifest.json"]) == manifest
    # Table 6 and the footnotes under it headline the preset's linear κ.
    table6 = result.files["tables/table06_agreement.tex"].decode()
    assert "Headline (with CI): linear" in table6


def test_composition_tables_count_labels_and_sources(benchmark, stored):
    result = paper_set(benchmark)
    rows = list(
        csv.DictReader(
            io.StringIO(
                result.files["tables/table13_capability_composition.csv"].decode(
                    "utf-8-sig"
                )
            )
        )
    )
    assert sum(int(row["Items"]) for row in rows) == 40
    assert all(int(row["Items"]) >= 5 for row in rows)
    assert result.manifest["kappa_weights"] == benchmark.kappa_weights


def test_table_4_from_the_papers_counts():
    """TP 24, FP 3, FN 0, TN 173 give precision 0.889 and recall 1.000."""
    truth = np.array([1] * 24 + [0] * 3 + [1] * 0 + [0] * 173, dtype=float)
    judged = np.array([1] * 24 + [1] * 3 + [0] * 0 + [0] * 173, dtype=float)
    report = sv_validation_report(
        ["sv-judge"],
        judged[None, :],
        ["expert"],
        truth[None, :],
        [{"item": str(u), "model": "m"} for u in range(200)],
        [[""] * 200],
    )
    (row,) = records(report.table("confusion"))
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (24, 3, 0, 173)
    assert f"{row['precision']:.3f}" == "0.889"
    assert f"{row['recall']:.3f}" == "1.000"


def test_command_writes_the_set(benchmark, stored, tmp_path, capsys):
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
    assert f"Wrote {len(TABLES)} tables and 5 figures" in out
    assert "Not generated: Table" not in out
    assert "Not generated: Figure 3" in out
    assert (tmp_path / "tables" / "table19_pairs.tex").exists()
    assert (tmp_path / "figures" / "figure1.png").exists()
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["preset"] == "industrybench"
    with pytest.raises(CommandError, match="No benchmark"):
        call_command("paper_tables", "--benchmark", "nope", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="not a language"):
        call_command(
            "paper_tables",
            "--benchmark",
            benchmark.slug,
            "--out",
            str(tmp_path),
            "--language",
            "xx",
        )


def test_archive_download_is_for_managers(benchmark, stored, client_for):
    url = reverse("annotation:paper_archive", args=[benchmark.slug])
    response = client_for("manager").get(url + "?preset=industrybench")
    assert response["Content-Type"] == "application/zip"
    assert "paper-tables-industrybench.zip" in response["Content-Disposition"]
    names = zipfile.ZipFile(io.BytesIO(response.getvalue())).namelist()
    assert "manifest.json" in names and "tables/table03_outcomes.csv" in names
    assert client_for("manager").get(url + "?preset=nope").status_code == 404
    for persona in ("expert", "adjudicator", "reviewer", "outsider"):
        assert client_for(persona).get(url).status_code in (302, 403), persona


@pytest.mark.browser
def test_manager_downloads_the_archive_from_the_reports_page(
    transactional_db, benchmark, login, page, stored
):
    # The archive computes every table and figure in the request: on a busy
    # machine that takes longer than a page's default 10 s.
    page.set_default_timeout(90_000)
    login("manager")
    page.get_by_role("link", name="Reports").click()
    with page.expect_download() as download:
        page.get_by_role("row", name=benchmark.name).get_by_role(
            "link", name="Paper tables and figures (.zip)"
        ).click()
    assert download.value.suggested_filename == (
        f"{benchmark.slug}-paper-tables-industrybench.zip"
    )
    with zipfile.ZipFile(download.value.path()) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["benchmark"]["slug"] == benchmark.slug
    assert "Table 19" in manifest["tables"]


def test_slice_tables_can_show_a_chosen_subset_of_models(benchmark, stored):
    result = paper_set(benchmark, slice_models=["Model-A", "Model-C"])
    rows = list(
        csv.reader(
            io.StringIO(
                result.files["tables/table17_capability.csv"].decode("utf-8-sig")
            )
        )
    )[1:]
    names = [row[0] for row in rows]
    assert names == ["Model-A", "Model-A (thinking)", "Model-C", "Mean over models"]

    model_rows = np.array([[float(v) for v in row[1:]] for row in rows[:-1]])
    assert [float(v) for v in rows[-1][1:]] == pytest.approx(
        model_rows.mean(axis=0), abs=1e-5
    )
    assert result.manifest["slice_models"] == ["Model-A", "Model-C"]


def test_figure_3_is_the_construction_funnel(benchmark, stored):
    from tests.construction.factories import make_candidate, make_source

    source = make_source(benchmark)
    make_candidate(source, "额定电压最高多少？", [("dedup", "pass", "")])
    result = paper_set(benchmark)
    assert result.manifest["figures"]["Figure 3"]["files"] == [
        "figures/figure3.svg",
        "figures/figure3.png",
    ]
    assert result.manifest["figures_not_generated"] == {}
    assert result.files["figures/figure3.png"].startswith(b"\x89PNG")
