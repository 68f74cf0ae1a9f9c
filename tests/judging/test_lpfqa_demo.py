"""The LPFQA-style demo: a binary benchmark of MC and short-answer items in four
fields with simulated 3-trial runs, graded by the same rules as a real run; load_demo
adds it once."""

import io

import numpy as np
import pytest
from django.core.management import call_command

from benchmark.models import Benchmark
from judging.demo import lpfqa as lpfqa_demo
from judging.evaluation.choices import answer_key, read_answer
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.leaderboard.building import build_report


@pytest.mark.smoke  # also on SQLite: the demo's default database
def test_demo_benchmark_runs_and_leaderboard(db):
    benchmark = lpfqa_demo.seed()
    lpfqa_demo.seed()  # idempotent
    assert benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
    items = benchmark.items.all()
    formats = set(items.values_list("format", flat=True))
    assert formats == {"multiple_choice", "short_answer"}
    assert len(set(items.values_list("domain", flat=True))) == 4
    runs = EvaluationRun.objects.filter(benchmark=benchmark)
    assert runs.count() == len(lpfqa_demo.MODELS)
    assert all(run.trials == 3 and run.binary for run in runs)
    n_items = items.count()
    assert Response.objects.filter(run__benchmark=benchmark).count() == (
        len(lpfqa_demo.MODELS) * n_items * 3
    )
    # Every stored MC outcome is what the rules read from the stored reply.
    for response in Response.objects.filter(
        run__benchmark=benchmark, item__format="multiple_choice"
    ).select_related("item", "rendering", "grade")[:60]:
        key = answer_key(
            "multiple_choice",
            n_options=len(response.rendering.options),
            correct_options=response.item.correct_options,
            correct_answer=None,
        )
        assert read_answer(response.text, key) == (
            response.grade.extracted,
            response.grade.grade,
        )
    flagged = Response.objects.filter(
        run__benchmark=benchmark, grade__grade__gte=2
    ).count()
    assert flagged > 0
    assert (
        Judgment.objects.filter(
            response__run__benchmark=benchmark, kind=Judgment.Kind.KEYPOINT
        ).count()
        == len(lpfqa_demo.MODELS) * len(lpfqa_demo.SHORT_ANSWER) * 3
    )

    report = build_report(benchmark, resamples=200)
    board = report.tables["leaderboard"]
    assert len(board.rows) == len(lpfqa_demo.MODELS)
    accuracy = [row[3] for row in board.rows]
    assert accuracy == sorted(accuracy, reverse=True)
    assert board.rows[0][1] == "atlas-pro"
    assert sum(m.flagged for m in report.metrics) == flagged
    assert all(not np.isnan(m.trial_sd) for m in report.metrics)


def test_load_demo_adds_it(db):
    call_command("load_demo", "--allow-without-debug", stdout=io.StringIO())
    assert Benchmark.objects.filter(slug=lpfqa_demo.SLUG, is_demo=True).exists()
