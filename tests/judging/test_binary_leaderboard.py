"""The pages of a binary benchmark on the LPFQA-style demo: the accuracy
leaderboard (also on a saved subset, and as a download), a run's page with each
answer read and its outcome, an item's results, and LPFQA⁻ derived from binary
runs (solved: right in at least one trial)."""

import io

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from benchmark.models import ItemSubset
from judging.demo import lpfqa as lpfqa_demo
from judging.evaluation.actions import check_derive_subset, do_derive_subset
from judging.evaluation.grades import load_binary
from judging.evaluation.models import EvaluationRun
from judging.leaderboard.building import build_report
from tests.api.helpers import BASE, token_client


@pytest.fixture
def demo(db):
    return lpfqa_demo.seed()


def test_leaderboard_shows_accuracy_trials_and_flags(demo, client_for):
    page = client_for("manager").get(reverse("judging:leaderboard", args=[demo.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Accuracy (%)" in html and "Min trial" in html and "Refusals" in html
    assert "Accuracy by item format" in html
    assert "Final (SV)" not in html and "Panel-derived difficulty" not in html
    report = page.context["report"]
    assert report.binary
    rows = report.tables["formats"].rows
    assert {column.key for column in report.tables["formats"].columns} == {
        "model",
        "multiple_choice",
        "short_answer",
    }
    assert len(rows) == len(lpfqa_demo.MODELS)


def test_subset_changes_the_accuracy_and_is_named(demo, client_for, personas):
    runs = list(EvaluationRun.objects.filter(benchmark=demo))
    derivation = check_derive_subset(demo, rule="lpfqa-equal", runs=runs, solved_at=1)
    matrix = load_binary(runs)
    right_once = (matrix.score == 1).any(axis=2)  # runs × items
    scored = ~np.isnan(matrix.score).all(axis=2)
    expected = matrix.item_ids[
        right_once.any(axis=0) & ~(right_once | ~scored).all(axis=0)
    ]
    assert derivation.item_ids == expected.tolist()
    subset = do_derive_subset(
        demo,
        name="lpfqa-equal",
        rule="lpfqa-equal",
        runs=runs,
        solved_at=1,
        user=personas["manager"],
    )
    client = client_for("manager")
    url = reverse("judging:leaderboard", args=[demo.slug])
    page = client.get(url, {"subset": subset.pk})
    assert page.status_code == 200
    assert "Every table below is computed on the subset" in page.content.decode()
    on_subset = page.context["report"]
    assert on_subset.subset == subset
    whole = build_report(demo, resamples=200)
    by_model = {
        m: r[3] for m, r in ((r[1], r) for r in whole.tables["leaderboard"].rows)
    }
    changed = [
        row[3] != by_model[row[1]] for row in on_subset.tables["leaderboard"].rows
    ]
    assert any(changed)
    csv = client.get(
        reverse("judging:table_download", args=[demo.slug, "leaderboard", "csv"]),
        {"subset": subset.pk},
    )
    assert csv.status_code == 200 and "Accuracy (%)" in csv.content.decode()


def test_the_command_derives_a_binary_subset_at_correct_by_default(demo):
    """On a binary benchmark a run solves an item when it is right (final score
    1), as the subsets page proposes; a default of 3 solved nothing."""
    runs = list(EvaluationRun.objects.filter(benchmark=demo).order_by("pk"))
    expected = check_derive_subset(demo, rule="lpfqa-equal", runs=runs, solved_at=1)
    assert 0 < len(expected.item_ids) < demo.items.count()
    call_command(
        "derive_subset",
        "--benchmark",
        demo.slug,
        "--rule",
        "lpfqa-equal",
        "--name",
        "equal",
        stdout=io.StringIO(),
    )
    saved = ItemSubset.objects.get(benchmark=demo, name="equal")
    assert sorted(saved.item_ids) == sorted(expected.item_ids)


def test_the_api_and_the_page_derive_a_binary_subset_at_correct_by_default(
    demo, client_for, personas
):
    """A script or a form that does not say what solved means gets the same
    default as the command: correct, on a binary benchmark."""
    runs = list(EvaluationRun.objects.filter(benchmark=demo).order_by("pk"))
    expected = check_derive_subset(demo, rule="lpfqa-equal", runs=runs, solved_at=1)
    call = {"name": "by-api", "rule": "lpfqa-equal", "runs": [r.pk for r in runs]}
    answer = token_client(personas["manager"]).post(
        f"{BASE}/benchmarks/{demo.slug}/subsets", call, "application/json"
    )
    assert answer.status_code == 201, answer.content
    assert sorted(answer.json()["item_ids"]) == sorted(expected.item_ids)
    form = {"rule": "lpfqa-equal", "run": call["runs"], "name": "by-page"}
    client_for("manager").post(
        reverse("judging:item_subsets", args=[demo.slug]), {**form, "confirm": "1"}
    )
    saved = ItemSubset.objects.get(benchmark=demo, name="by-page")
    assert sorted(saved.item_ids) == sorted(expected.item_ids)


def test_run_and_item_pages(demo, client_for):
    client = client_for("manager")
    run = EvaluationRun.objects.filter(benchmark=demo).order_by("pk").first()
    page = client.get(reverse("judging:evaluation_run", args=[run.pk]))
    html = page.content.decode()
    assert (
        "3 trials per item" in html and "Multiple-choice and true/false answers" in html
    )
    outcomes = page.context["outcomes"]
    assert outcomes.total == len(lpfqa_demo.MULTIPLE_CHOICE) * 3
    assert sum(n for _, _, n in outcomes.counts) == outcomes.total
    item = client.get(reverse("judging:item_results", args=[demo.slug, "LP-MC-01"]))
    assert item.status_code == 200
    assert 'data-testid="answer-key"' in item.content.decode()
    assert len(item.context["rows"]) == len(lpfqa_demo.MODELS) * 3
    short = client.get(reverse("judging:item_results", args=[demo.slug, "LP-SA-01"]))
    assert "Every key point is met (simulated)." in short.content.decode() or (
        "Misses a key point (simulated)." in short.content.decode()
    )
