"""Reports from stored labels: numbers against the agreement functions on the same
arrays, missing-value treatment, label-version caching, formats, command, views."""

import csv
import io
import json
from itertools import combinations

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from annotation.agreement.loading import (
    REPORT_TITLES,
    Sources,
    build_report,
    label_version,
)
from annotation.agreement.tables import JudgeUse, Settings, judge_currency, records
from judging.evaluation.models import EvaluationRun, Judgment
from judging.llm.models import Endpoint, LLMCall
from judging.reporting import agreement as ag
from judging.reporting.consensus import OUTCOME_NAMES, consensus
from tests.annotation.report_factories import (
    JUDGES,
    SV_JUDGE,
    bulk_items,
    human_grades,
    judged_runs,
    labelling_consensus,
)
from tests.latex import assert_compiles

FAST = Settings(n_resamples=200)


@pytest.fixture
def judged(benchmark):
    items = bulk_items(benchmark, 60)
    return judged_runs(benchmark, items)


def rows_by(table, *keys):
    return {tuple(row[k] for k in keys): row for row in records(table)}


def test_cross_judge_rows_are_the_pairwise_averages(benchmark, judged):
    report = build_report(benchmark, "cross-judge", FAST)
    rows = rows_by(report.table("models"), "model")
    _, scores, _ = judged["Model-A"]
    row = rows[("Model-A [zh, non-thinking]",)]
    stacked = np.vstack([scores[j] for j in JUDGES])
    assert row["n"] == 60
    assert row["full_agreement"] == pytest.approx(
        np.mean(stacked.min(0) == stacked.max(0))
    )
    assert row["high_discrepancy"] == pytest.approx(
        np.mean(stacked.max(0) - stacked.min(0) >= 2)
    )
    for weights in ("linear", "quadratic"):
        expected = np.mean(
            [
                cohen_kappa_score(
                    scores[a], scores[b], weights=weights, labels=[0, 1, 2, 3]
                )
                for a, b in combinations(JUDGES, 2)
            ]
        )
        assert row[f"kappa_{weights}"] == pytest.approx(expected, abs=1e-9)
    assert row["kappa_ci_low"] <= row["kappa_quadratic"] <= row["kappa_ci_high"]
    assert rows[("All models (pooled)",)]["n"] == 120
    assert any("quadratic" in note for note in report.footnotes)


def test_judge_pairs_pool_models_and_drop_missing_scores(benchmark, judged):
    first = judged["Model-A"][0][0]
    Judgment.objects.filter(response=first, judge_name="judge-a").update(
        status=Judgment.Status.UNPARSEABLE, score=None
    )
    report = build_report(benchmark, "judge-pairs", FAST)
    rows = rows_by(report.table("pairs"), "judge_a", "judge_b")
    assert rows[("judge-a", "judge-b")]["n"] == 119
    assert rows[("judge-b", "judge-c")]["n"] == 120
    a = np.concatenate([judged[m][1]["judge-b"] for m in ("Model-A", "Model-B")])
    b = np.concatenate([judged[m][1]["judge-c"] for m in ("Model-A", "Model-B")])
    row = rows[("judge-b", "judge-c")]
    assert row["exact"] == pytest.approx(ag.exact_agreement(a, b))
    assert row["rho"] == pytest.approx(ag.spearman_rho(a, b), abs=1e-12)
    cross = build_report(benchmark, "cross-judge", FAST)
    assert rows_by(cross.table("models"), "model")[("All models (pooled)",)]["n"] == 119


def test_judge_pairs_per_tested_model(benchmark, judged):
    first = judged["Model-A"][0][0]
    Judgment.objects.filter(response=first, judge_name="judge-a").update(
        status=Judgment.Status.UNPARSEABLE, score=None
    )
    report = build_report(benchmark, "judge-pairs", FAST)
    assert report.tables[0].slug == "per_model"  # the paper's Table 15 comes first
    rows = rows_by(report.table("per_model"), "model", "judge_a", "judge_b")
    assert len(rows) == 2 * 3
    model_a = "Model-A [zh, non-thinking]"
    assert rows[(model_a, "judge-a", "judge-b")]["n"] == 59
    assert rows[("Model-B [zh, non-thinking]", "judge-a", "judge-b")]["n"] == 60
    for model, label in (
        ("Model-A", model_a),
        ("Model-B", "Model-B [zh, non-thinking]"),
    ):
        scores = judged[model][1]
        row = rows[(label, "judge-b", "judge-c")]
        assert row["exact"] == pytest.approx(
            ag.exact_agreement(scores["judge-b"], scores["judge-c"])
        )
        assert row["kappa_linear"] == pytest.approx(
            cohen_kappa_score(
                scores["judge-b"],
                scores["judge-c"],
                weights="linear",
                labels=[0, 1, 2, 3],
            )
        )


def test_calibration_compares_judges_median_and_humans(benchmark, judged, personas):
    responses, scores, _ = judged["Model-A"]
    rng = np.random.default_rng(5)
    expert = scores["judge-a"].astype(float).copy()
    changed = rng.random(60) < 0.2
    expert[changed] = rng.integers(0, 4, changed.sum())
    second = np.where(np.arange(60) < 20, expert, np.nan)
    human_grades(
        benchmark,
        responses,
        {personas["expert"]: expert, personas["adjudicator"]: second},
    )
    report = build_report(benchmark, "calibration", FAST)
    rows = rows_by(report.table("agreement"), "rater", "human")
    assert set(rows) == {
        *(
            (j, h)
            for j in (*JUDGES, "Median of judges")
            for h in ("expert", "adjudicator")
        ),
        ("adjudicator", "expert"),
    }
    median = np.median(np.vstack([scores[j] for j in JUDGES]), axis=0)
    row = rows[("Median of judges", "expert")]
    assert row["n"] == 60
    assert row["kappa_linear"] == pytest.approx(
        cohen_kappa_score(median, expert, weights="linear", labels=[0, 1, 2, 3])
    )
    assert rows[("judge-b", "adjudicator")]["n"] == 20
    assert rows[("adjudicator", "expert")]["exact"] == 1.0
    distributions = rows_by(report.table("distributions"), "rater")
    row = distributions[("expert",)]
    assert row["n"] == 60
    assert [row[f"count_{s}"] for s in range(4)] == [
        int(np.sum(expert == s)) for s in range(4)
    ]
    assert [row[f"share_{s}"] for s in range(4)] == pytest.approx(
        [np.mean(expert == s) for s in range(4)]
    )
    assert row["mean"] == pytest.approx(expert.mean())
    second_row = distributions[("adjudicator",)]
    assert second_row["n"] == 20
    assert second_row["mean"] == pytest.approx(np.nanmean(second))
    assert distributions[("judge-a",)]["mean"] == pytest.approx(
        scores["judge-a"].mean()
    )


def test_sv_validation_counts_violating_as_positive(benchmark, judged, personas):
    responses, scores, flags = judged["Model-B"]
    truth = flags.copy()
    truth[:5] = ~truth[:5]
    human_grades(
        benchmark,
        responses,
        {personas["expert"]: scores["judge-a"]},
        flags={personas["expert"]: truth},
    )
    Judgment.objects.filter(response=responses[6], kind=Judgment.Kind.SAFETY).update(
        status=Judgment.Status.FAILED, safety_violation=None
    )
    report = build_report(benchmark, "sv-validation", FAST)
    (row,) = records(report.table("confusion"))
    keep = np.arange(60) != 6
    expected = ag.binary_metrics(truth[keep], flags[keep])
    assert {k: row[k] for k in expected} == pytest.approx(expected, nan_ok=True)
    assert row["judge"] == SV_JUDGE and row["n"] == 59
    listed = records(report.table("disagreements"))
    assert len(listed) == 5
    assert {r["item"] for r in listed} == {
        responses[u].item.external_id for u in range(5)
    }
    assert all(r["judge_reason"].startswith("safety reason") for r in listed)


def test_consensus_report_from_the_latest_labelling_run(benchmark):
    items = bulk_items(benchmark, 80)
    _, codes = labelling_consensus(benchmark, items)
    report = build_report(benchmark, "consensus")
    outcomes = rows_by(report.table("outcomes"), "dimension")
    given, _ = codes["capability"]
    row = outcomes[("Capability",)]
    assert row["n"] == 80
    outcome, _, _ = consensus(given)
    for index, name in enumerate(OUTCOME_NAMES):
        assert row[name] == pytest.approx(np.mean(outcome == index))
    complete = (given >= 0).all(1)
    assert row["n_complete"] == complete.sum()
    assert row["fleiss"] == pytest.approx(ag.fleiss_kappa(given[complete]), abs=1e-4)
    assert row["alpha"] == pytest.approx(
        ag.krippendorff_alpha(np.where(given >= 0, given, np.nan).T), abs=1e-4
    )
    no_majority = np.zeros(80, dtype=bool)
    for given_codes, _ in codes.values():
        no_majority |= consensus(given_codes)[0] == OUTCOME_NAMES.index("none")
    assert len(codes) >= 2
    adjudication = outcomes[("No majority in at least one dimension",)]
    assert adjudication["n"] == 80
    assert adjudication["none"] == pytest.approx(no_majority.mean())
    assert no_majority.sum() > max(
        (consensus(c)[0] == OUTCOME_NAMES.index("none")).sum()
        for c, _ in codes.values()
    )  # the union counts items that only one dimension sends to adjudication
    pairs = rows_by(report.table("pairs"), "dimension", "annotator_a", "annotator_b")
    both = (given[:, 0] >= 0) & (given[:, 1] >= 0)
    pair = pairs[("Capability", "annotator-0", "annotator-1")]
    assert pair["n"] == both.sum()
    assert pair["kappa"] == pytest.approx(
        cohen_kappa_score(given[both, 0], given[both, 1]), abs=1e-4
    )


def test_reports_recompute_when_labels_change_not_before(benchmark, judged):
    before = build_report(benchmark, "judge-pairs", FAST)
    assert build_report(benchmark, "judge-pairs", FAST) == before
    version = label_version(Sources(benchmark), "judge-pairs")
    judgment = Judgment.objects.filter(judge_name="judge-a", score=3).first()
    Judgment.objects.filter(pk=judgment.pk).update(score=0)
    assert label_version(Sources(benchmark), "judge-pairs") != version
    after = build_report(benchmark, "judge-pairs", FAST)
    assert after.table("pairs").rows != before.table("pairs").rows
    assert after is not before


def test_empty_benchmark_gives_empty_tables_not_errors(benchmark):
    for name in (
        "cross-judge",
        "judge-pairs",
        "calibration",
        "sv-validation",
        "consensus",
    ):
        report = build_report(benchmark, name, FAST)
        assert report.footnotes
        assert report.to_text()


def test_formats_share_digits(benchmark, judged):
    report = build_report(benchmark, "cross-judge", FAST)
    table = report.table("models")
    lines = list(csv.reader(io.StringIO(report.to_csv())))
    assert lines[0] == [c.label for c in table.columns]
    assert any(c.kind == "rate" and "(%)" in c.label for c in table.columns)
    latex = report.to_latex()
    for row, line, shown in zip(
        table.rows, lines[1:], table.formatted_rows(), strict=True
    ):
        for column, value, raw, text in zip(
            table.columns, row, line, shown, strict=True
        ):
            if raw == "":  # no value (e.g. the Average row's CI)
                assert value is None and text == "–"
            elif column.kind == "rate":  # a percentage, as the "(%)" header says
                assert table.format(column, float(raw) / 100) == text
                assert float(raw) == pytest.approx(100 * value, abs=1e-4)
            elif column.kind != "text":
                assert table.format(column, float(raw)) == text
                assert float(raw) == pytest.approx(value, abs=1e-6)
        assert " & ".join(shown[:2]) in latex
    assert r"\toprule" in latex and "How" not in latex
    assert json.loads(report.to_json())["footnotes"] == report.footnotes


@pytest.mark.smoke
def test_report_command_prints_every_format(benchmark, judged, capsys):
    call_command("report", "judge-pairs", "--benchmark", benchmark.slug)
    assert "Pairwise judge agreement" in capsys.readouterr().out
    call_command(
        "report", "judge-pairs", "--benchmark", benchmark.slug, "--format", "json"
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["tables"][0]["rows"][0][:3] == [
        "Model-A [zh, non-thinking]",
        "judge-a",
        "judge-b",
    ]
    call_command(
        "report", "cross-judge", "--benchmark", benchmark.slug, "--format", "csv"
    )
    assert capsys.readouterr().out.startswith("Tested model,n,Full agreement")
    call_command(
        "report", "consensus", "--benchmark", benchmark.slug, "--format", "latex"
    )
    assert r"\begin{tabular}" in capsys.readouterr().out
    with pytest.raises(CommandError, match="No benchmark"):
        call_command("report", "consensus", "--benchmark", "nope")
    with pytest.raises(CommandError, match="tables"):
        call_command(
            "report",
            "calibration",
            "--benchmark",
            benchmark.slug,
            "--format",
            "csv",
            "--table",
            "nope",
        )


@pytest.mark.smoke
def test_reports_are_for_managers(benchmark, client_for):
    for persona, status in (("manager", 200), ("expert", 403), ("outsider", 403)):
        client = client_for(persona)
        assert client.get("/annotation/reports/").status_code == status
        page = client.get(f"/annotation/reports/{benchmark.slug}/cross-judge/")
        assert page.status_code == status
        download = client.get(f"/annotation/reports/{benchmark.slug}/cross-judge.csv")
        assert download.status_code == status
    manager = client_for("manager")
    assert manager.get(f"/annotation/reports/{benchmark.slug}/nope/").status_code == 404
    assert (
        manager.get(f"/annotation/reports/{benchmark.slug}/cross-judge.xls").status_code
        == 404
    )


def test_report_page_and_downloads(benchmark, judged, client_for):
    manager = client_for("manager")
    page = manager.get(f"/annotation/reports/{benchmark.slug}/judge-pairs/")
    body = page.content.decode()
    assert "How these numbers were computed" in body
    assert "quadratic" in body
    csv_response = manager.get(
        f"/annotation/reports/{benchmark.slug}/judge-pairs.csv?table=pairs"
    )
    assert csv_response["Content-Type"].startswith("text/csv")
    assert "attachment" in csv_response["Content-Disposition"]
    first = next(csv.DictReader(io.StringIO(csv_response.content.decode())))
    assert f'data-col="kappa_linear">{float(first["κ linear"]):.3f}<' in body
    for fmt, kind in (("json", "application/json"), ("latex", "application/x-latex")):
        response = manager.get(
            f"/annotation/reports/{benchmark.slug}/judge-pairs.{fmt}"
        )
        assert response["Content-Type"].startswith(kind)

    # In Chinese the page's labels, titles and footnotes are translated; every
    # download keeps English, the same bytes as above.
    chinese = {"accept-language": "zh-hans"}
    zh_body = manager.get(
        f"/annotation/reports/{benchmark.slug}/judge-pairs/", headers=chinese
    ).content.decode()
    assert ">κ 线性</th>" in zh_body and ">κ linear</th>" not in zh_body
    assert ">κ 线性 置信区间下限</th>" in zh_body
    assert "<h2>评判模型两两一致性（合并所有被测模型）</h2>" in zh_body
    assert "完全相同：得分相同；|Δ| ≤ 1 / |Δ| ≥ 2：得分差的绝对值。" in zh_body
    assert "Exact: identical scores" not in zh_body
    for download in ("judge-pairs.csv?table=pairs", "judge-pairs.json"):
        url = f"/annotation/reports/{benchmark.slug}/{download}"
        assert manager.get(url, headers=chinese).content == manager.get(url).content
    assert "κ linear" in csv_response.content.decode()


def test_latex_downloads_are_ascii_for_ascii_data(benchmark, client_for, personas):
    """Every report's LaTeX download compiles with pdflatex: κ, ρ, |Δ| ≤ 1, −, ·
    (a judge's prompt version) are macros, not raw Unicode."""
    items = bulk_items(benchmark, 30)
    judged = judged_runs(benchmark, items)
    Judgment.objects.update(prompt_version="v2")
    responses, scores, flags = judged["Model-A"]
    human_grades(
        benchmark,
        responses,
        {
            personas["expert"]: scores["judge-a"],
            personas["adjudicator"]: scores["judge-b"],
        },
        flags={personas["expert"]: ~flags, personas["adjudicator"]: flags},
    )
    labelling_consensus(benchmark, items)
    manager = client_for("manager")
    downloads = {
        name: manager.get(
            f"/annotation/reports/{benchmark.slug}/{name}.latex"
        ).content.decode()
        for name in REPORT_TITLES
    }
    for name, latex in downloads.items():
        assert latex.isascii(), name
        assert latex.startswith("% Needs \\usepackage{booktabs}.\n"), name
        assert_compiles(latex)
    calibration = downloads["calibration"]
    assert r"judge-a $\cdot$ v2 & expert" in calibration
    assert r"$|\Delta|$ $\leq$ 1 (\%)" in calibration
    assert r"$\kappa$ linear" in calibration and r"Spearman $\rho$" in calibration
    assert r"(i $-$ j)$^{2}$" in calibration


def test_disagreement_browser_lists_large_gaps(benchmark, judged, client_for):
    responses, scores, _ = judged["Model-A"]
    stacked = np.vstack([scores[j] for j in JUDGES])
    wide = int(np.sum(stacked.max(0) - stacked.min(0) >= 2))
    stacked_b = np.vstack([judged["Model-B"][1][j] for j in JUDGES])
    wide_b = int(np.sum(stacked_b.max(0) - stacked_b.min(0) >= 2))
    manager = client_for("manager")
    page = manager.get(f"/annotation/reports/{benchmark.slug}/disagreements/")
    assert f'data-count="{wide + wide_b}"' in page.content.decode()
    run_id = responses[0].run_id
    page = manager.get(
        f"/annotation/reports/{benchmark.slug}/disagreements/?run={run_id}",
        headers={"HX-Request": "true"},
    )
    body = page.content.decode()
    assert f'data-count="{wide}"' in body and "<h1>" not in body
    assert "judge-a on " in body  # each judge's reason is shown


def test_cross_judge_average_row_is_the_mean_of_the_model_rows(benchmark):
    items = bulk_items(benchmark, 30)
    models = [f"Model-{letter}" for letter in "ABCDEF"]  # six, as in the paper
    judged_runs(benchmark, items, models=models)
    report = build_report(benchmark, "cross-judge", FAST)
    table = report.table("models")
    rows = records(table)
    model_rows = rows[:6]
    average = rows[6]
    assert average["model"] == "Average"
    assert rows[7]["model"] == "All models (pooled)"
    for column in table.columns[1:]:
        if "_ci_" in column.key:
            assert average[column.key] is None
        elif column.key == "n":
            assert average["n"] == 180
        else:
            expected = np.mean([row[column.key] for row in model_rows])
            assert average[column.key] == pytest.approx(expected)
    assert any(
        note.startswith("Average: the mean of the model rows")
        for note in report.footnotes
    )


def test_judge_currency_marks_judges_in_use_without_calibration_stale():
    calibrated = (
        JudgeUse("judge-a", "v2", "model-1", 40),
        JudgeUse("judge-a", "v2", "", 5),  # imported scores: no model recorded
        JudgeUse("judge-b", "v1", "model-2", 45),
        JudgeUse("judge-c", "", "model-3", 45),
    )
    in_use = (
        JudgeUse("judge-a", "v2", "model-1", 3),
        JudgeUse("judge-a", "v3", "model-1", 2),  # a new prompt version
        JudgeUse("judge-b", "v1", "model-9", 1),  # the endpoint's model changed
    )
    table, warnings = judge_currency(calibrated, in_use)
    rows = rows_by(table, "judge")
    assert rows[("judge-a · v2",)] == {
        "judge": "judge-a · v2",
        "prompt_version": "v2",
        "sample_models": "unknown (not recorded), model-1",
        "sample_n": 45,
        "runs": 3,
        "run_models": "model-1",
        "status": "calibrated, in use",
    }
    assert rows[("judge-a · v3",)]["status"] == "STALE: in use, never calibrated"
    assert rows[("judge-a · v3",)]["sample_n"] == 0
    assert rows[("judge-b · v1",)]["status"] == "STALE: endpoint model changed"
    assert rows[("judge-c",)]["status"] == "calibrated; no run uses it now"
    assert rows[("judge-c",)]["prompt_version"] == "—"
    assert warnings == [
        "2 runs now score with judge-a · v3, which no human "
        "grade was compared with (calibrated: judge-a · v2, judge-b · v1, judge-c).",
        "judge-b · v1 now runs on model-9; its calibrated judgments came from model-2.",
    ]
    empty, none = judge_currency((), ())
    assert (empty.rows, none) == ([], [])


def test_calibration_says_when_the_runs_judge_changed_since(
    benchmark, judged, personas, client_for
):
    responses, scores, _ = judged["Model-A"]
    human_grades(benchmark, responses, {personas["expert"]: scores["judge-a"]})
    endpoint = Endpoint.objects.create(
        name="judge-a", base_url="http://127.0.0.1:9/v1", model="deepseek-v3"
    )
    # The model a judgment came from is the one its call recorded, whatever the
    # endpoint says later.
    call = LLMCall.objects.create(
        endpoint=endpoint,
        purpose="rubric_judging",
        scope="calibration-test",
        request_hash="0" * 64,
        model="deepseek-v3",
        status=LLMCall.Status.OK,
    )
    Judgment.objects.filter(judge_name="judge-a").update(
        endpoint=endpoint, call=call, prompt_version="v2"
    )
    EvaluationRun.objects.update(
        judge_name="judge-a", judge_prompt_version="v2", judge_endpoint=endpoint
    )
    manager = client_for("manager")
    url = f"/annotation/reports/{benchmark.slug}/calibration/"

    report = build_report(benchmark, "calibration", FAST)
    assert report.warnings == []
    row = rows_by(report.table("judges"), "judge")[("judge-a · v2",)]
    assert (row["sample_models"], row["sample_n"]) == ("deepseek-v3", 60)
    assert (row["runs"], row["status"]) == (2, "calibrated, in use")
    assert 'data-testid="stale-calibration"' not in manager.get(url).text

    # A re-judge with a new prompt version: no human grade was compared with it.
    EvaluationRun.objects.update(judge_prompt_version="v3")
    report = build_report(benchmark, "calibration", FAST)
    assert report.warnings == [
        "2 runs now score with judge-a · v3, which no human "
        "grade was compared with (calibrated: judge-a · v2, judge-b, judge-c)."
    ]
    page = manager.get(url).text
    assert 'data-testid="stale-calibration"' in page
    assert "which no human grade was compared with" in page
    assert "STALE: in use, never calibrated" in page
    # In Chinese: the warning, the status, the median row and the judges' table
    # title as the reader reads them.
    zh_page = manager.get(url, headers={"accept-language": "zh-hans"}).text
    assert (
        "2 个运行当前使用 judge-a · v3 评分，但它从未与人工判分比较过"
        "（已校准：judge-a · v2, judge-b, judge-c）。"
    ) in zh_page
    assert 'data-col="status">已过时：在用，从未校准<' in zh_page
    assert 'data-col="rater">评判模型中位数<' in zh_page
    assert "<h2>已校准的评判模型与在用的评判模型</h2>" in zh_page
    assert "STALE" not in zh_page and "Median of judges" not in zh_page

    # Back on the calibrated prompt, but the endpoint now sends another model.
    EvaluationRun.objects.update(judge_prompt_version="v2")
    Endpoint.objects.filter(pk=endpoint.pk).update(model="deepseek-v4")
    report = build_report(benchmark, "calibration", FAST)
    assert report.warnings == [
        "judge-a · v2 now runs on deepseek-v4; its calibrated "
        "judgments came from deepseek-v3."
    ]
    # Cancelled runs score nothing on the leaderboard: they are not "in use".
    EvaluationRun.objects.update(status=EvaluationRun.Status.CANCELLED)
    report = build_report(benchmark, "calibration", FAST)
    assert report.warnings == []
    row = rows_by(report.table("judges"), "judge")[("judge-a · v2",)]
    assert row["status"] == "calibrated; no run uses it now"
