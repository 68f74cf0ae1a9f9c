"""The weighted κ the agreement reports headline is the benchmark's setting: linear
(the IndustryBench paper's κw) for new benchmarks, chosen by a manager on the report
page, stated in every footnote and carried by the CI columns."""

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotation.agreement.loading import build_report
from benchmark.models import Benchmark
from tests.annotation.report_factories import bulk_items, human_grades, judged_runs


def test_new_benchmarks_headline_linear_kappa(benchmark):
    assert benchmark.kappa_weights == Benchmark.KappaWeights.LINEAR


@pytest.fixture
def calibrated(benchmark, personas):
    judged = judged_runs(benchmark, bulk_items(benchmark, 40))
    responses, scores, _ = judged["Model-A"]
    rng = np.random.default_rng(4)
    expert = np.clip(scores["judge-a"] + rng.choice([-1, 0, 0, 1], 40), 0, 3)
    human_grades(benchmark, responses, {personas["expert"]: expert})
    return scores["judge-a"], expert


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_every_report_headlines_the_benchmarks_weights(benchmark, calibrated, weights):
    benchmark.kappa_weights = weights
    benchmark.save(update_fields=["kappa_weights"])
    for name in ("cross-judge", "judge-pairs", "calibration"):
        report = build_report(benchmark, name)
        assert any(f"Headline (with CI): {weights}" in n for n in report.footnotes)
        labels = [c.label for t in report.tables for c in t.columns]
        assert f"κ {weights} CI low" in labels, name
    judge, expert = calibrated
    table = build_report(benchmark, "calibration").table("agreement")
    row = next(
        dict(zip([c.key for c in table.columns], r, strict=True))
        for r in table.rows
        if r[0] == "judge-a" and r[1] == "expert"
    )
    headline = cohen_kappa_score(judge, expert, weights=weights, labels=[0, 1, 2, 3])
    assert row[f"kappa_{weights}"] == pytest.approx(headline)
    assert row["kappa_ci_low"] <= headline <= row["kappa_ci_high"]


def test_manager_chooses_the_weights_on_the_report_page(
    benchmark, calibrated, client_for
):
    url = reverse("annotation:report", args=[benchmark.slug, "calibration"])
    manager = client_for("manager")
    assert "Headline (with CI): linear" in manager.get(url).content.decode()
    response = manager.post(
        reverse("annotation:report_weights", args=[benchmark.slug, "calibration"]),
        {"kappa_weights": "quadratic"},
        follow=True,
    )
    page = response.content.decode()
    assert "now headlines quadratic-weighted κ" in page
    assert "Headline (with CI): quadratic" in page
    benchmark.refresh_from_db()
    assert benchmark.kappa_weights == "quadratic"
    refused = manager.post(
        reverse("annotation:report_weights", args=[benchmark.slug, "calibration"]),
        {"kappa_weights": "cubic"},
        follow=True,
    )
    assert "κ weights must be one of linear, quadratic." in refused.content.decode()
    benchmark.refresh_from_db()
    assert benchmark.kappa_weights == "quadratic"
    expert = client_for("expert").post(
        reverse("annotation:report_weights", args=[benchmark.slug, "calibration"]),
        {"kappa_weights": "linear"},
    )
    assert expert.status_code in (302, 403)
    benchmark.refresh_from_db()
    assert benchmark.kappa_weights == "quadratic"


@pytest.mark.django_db(transaction=True)
def test_benchmarks_made_before_the_setting_keep_quadratic():
    executor = MigrationExecutor(connection)
    before = [("benchmark", "0007_paper_label_names")]
    executor.migrate(before)
    old_apps = executor.loader.project_state(before).apps
    old_apps.get_model("benchmark", "Benchmark").objects.create(name="Old", slug="old")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert Benchmark.objects.get(slug="old").kappa_weights == "quadratic"
    assert Benchmark.objects.create(name="New", slug="new").kappa_weights == "linear"
