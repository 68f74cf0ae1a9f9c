"""The demo seeder: simulated runs the leaderboard, cross-judge and calibration
reports can use without any API key."""

import numpy as np
from django.urls import reverse

from judging.demo import runs as demo_runs
from judging.evaluation.models import EvaluationRun, Judgment
from judging.leaderboard.building import build_report
from tests.judging.factories import make_items


def test_seed_creates_simulated_runs_with_three_judges_and_sv(benchmark):
    make_items(benchmark, 90)
    demo_runs.seed(benchmark)
    demo_runs.seed(benchmark)  # idempotent
    runs = EvaluationRun.objects.filter(benchmark=benchmark)
    assert runs.count() == len(demo_runs.DEMO_MODELS) + 3
    assert set(runs.values_list("origin", flat=True)) == {"simulated"}
    assert set(runs.values_list("language", flat=True)) == {"zh", "en"}
    assert set(runs.values_list("model_category", flat=True)) == {
        "closed",
        "open MoE",
        "open dense",
    }
    judges = set(
        Judgment.objects.filter(kind="rubric").values_list("judge_name", flat=True)
    )
    assert judges == set(demo_runs.RUBRIC_JUDGES)

    # Judges agree most of the time, not always; scores concentrate on 3.
    a, b = (
        np.array(
            Judgment.objects.filter(kind="rubric", judge_name=name)
            .order_by("response_id")
            .values_list("score", flat=True)
        )
        for name in ("judge-a", "judge-b")
    )
    assert 0.7 < np.mean(a == b) < 0.98
    assert np.bincount(a, minlength=4).argmax() == 3

    report = build_report(benchmark, resamples=200)
    assert len(report.tables["mode"].rows) == 1
    assert len(report.tables["multilingual"].rows) == 3
    assert sum(m.n_pending for m in report.metrics) == 2
    assert all(m.n_sv_flagged > 0 for m in report.metrics)


def test_demo_run_pages_count_what_is_stored(benchmark, client_for):
    """#26: a demo run read "Complete — 0 of 54 items finished, Scored 0" beside
    "Answered 54 / Judged 54"."""
    make_items(benchmark, 30)
    demo_runs.seed(benchmark)
    for run in EvaluationRun.objects.filter(benchmark=benchmark):
        assert run.answered_count == run.judged_count == run.total_items > 0
        assert run.scored_count + run.failed_count == run.total_items
        assert run.finished_items == run.total_items
        page = client_for("manager").get(
            reverse("judging:evaluation_run", args=[run.pk])
        )
        html = page.content.decode()
        assert f"{run.total_items} of {run.total_items} items finished" in html
        assert f'data-count="scored">{run.scored_count}<' in html
        assert run.scored_count > 0


def test_simulated_answers_name_no_model(benchmark):
    """Experts grade them blind (issue 13: the demo's answers began with the model's
    name)."""
    make_items(benchmark, 30)
    demo_runs.seed(benchmark)
    for run in EvaluationRun.objects.filter(benchmark=benchmark):
        texts = " ".join(run.responses.values_list("text", flat=True)).lower()
        assert texts, run
        for name in {run.model_name, *run.model_name.split("-")}:
            if len(name) > 3:
                assert name.lower() not in texts, (run.model_name, name)
