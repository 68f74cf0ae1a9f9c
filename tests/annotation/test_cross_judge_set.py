"""Cross-judge consistency (Table 5) on a chosen judge set: a fourth judge that
scored a few responses no longer empties every row; the manager can choose the set
and the footnote says which set was used."""

from itertools import combinations

import numpy as np
import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.agreement.loading import build_report
from annotation.agreement.tables import Settings, default_judge_set, records
from judging.evaluation.models import Judgment, Response
from tests.annotation.report_factories import bulk_items, judged_runs

FAST = Settings(n_resamples=200)


def brute_force(scored: np.ndarray) -> tuple[int, ...]:
    """Every subset of ≥ 2 judges, scored by judgments in common, then size, then
    the earliest judges."""
    n = scored.shape[0]
    best, best_key = None, None
    for size in range(2, n + 1):
        for subset in combinations(range(n), size):
            shared = int(scored[list(subset)].all(axis=0).sum())
            key = (shared * size, size, [-j for j in subset])
            if best_key is None or key > best_key:
                best, best_key = subset, key
    return best


@pytest.mark.parametrize("seed", range(25))
def test_default_set_matches_an_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    judges = int(rng.integers(3, 7))
    coverage = rng.uniform(0.05, 1.0, size=(judges, 1))
    scored = rng.random((judges, int(rng.integers(1, 80)))) < coverage
    chosen = default_judge_set(scored)
    assert tuple(np.flatnonzero(chosen)) == brute_force(scored)


def test_a_judge_on_a_few_responses_is_left_out_by_default():
    scored = np.ones((4, 100), dtype=bool)
    scored[3, 10:] = False
    assert default_judge_set(scored).tolist() == [True, True, True, False]
    scored[3] = True
    assert default_judge_set(scored).all()


@pytest.fixture
def fourth_judge(benchmark):
    runs = judged_runs(benchmark, bulk_items(benchmark, 30))
    responses = list(Response.objects.order_by("pk")[:3])
    Judgment.objects.bulk_create(
        Judgment(
            response=response,
            kind=Judgment.Kind.RUBRIC,
            judge_name="judge-late",
            score=2,
            status=Judgment.Status.DONE,
        )
        for response in responses
    )
    return runs


def test_default_report_keeps_its_rows_when_a_fourth_judge_joins(
    benchmark, fourth_judge
):
    report = build_report(benchmark, "cross-judge", FAST)
    rows = {row["model"]: row for row in records(report.table("models"))}
    assert rows["All models (pooled)"]["n"] == 60
    note = report.footnotes[0]
    assert note.startswith("Judges (3): judge-a, judge-b, judge-c; the judges whose")
    assert "Left out: judge-late." in note
    assert report.judge_choices == [
        ("judge-a", True, 60),
        ("judge-b", True, 60),
        ("judge-c", True, 60),
        ("judge-late", False, 3),
    ]


def test_a_chosen_set_is_used_and_named(benchmark, fourth_judge):
    report = build_report(
        benchmark, "cross-judge", FAST, judges=("judge-a", "judge-late", "nobody")
    )
    rows = {row["model"]: row for row in records(report.table("models"))}
    assert rows["All models (pooled)"]["n"] == 3
    assert report.footnotes[0].startswith(
        "Judges (2): judge-a, judge-late; chosen on the report page."
    )
    one = build_report(benchmark, "cross-judge", FAST, judges=("judge-a",))
    assert "(default)" in one.footnotes[0]  # one judge is no set: the default


def test_report_page_and_download_take_the_chosen_judges(
    benchmark, fourth_judge, client_for
):
    manager = client_for("manager")
    url = reverse("annotation:report", args=[benchmark.slug, "cross-judge"])
    page = manager.get(url + "?judge=judge-b&judge=judge-late").content.decode()
    assert "Judges (2): judge-b, judge-late; chosen on the report page." in page
    assert 'value="judge-late" checked' in page
    assert "?judge=judge-b&amp;judge=judge-late" in page  # downloads keep the set
    text = manager.get(
        reverse(
            "annotation:report_download", args=[benchmark.slug, "cross-judge", "text"]
        )
        + "?judge=judge-b&judge=judge-late"
    ).content.decode()
    assert "Judges (2): judge-b, judge-late; chosen on the report page." in text


@pytest.mark.browser
def test_manager_chooses_the_judges_compared(
    transactional_db, benchmark, personas, login, page, fourth_judge
):
    login("manager")
    page.goto(f"/annotation/reports/{benchmark.slug}/cross-judge/")
    footnotes = page.locator(".footnotes")
    expect(footnotes).to_contain_text("Left out: judge-late.")
    page.get_by_label("judge-late").check()
    page.get_by_label("judge-c").uncheck()
    page.get_by_role("button", name="Compare these judges").click()
    expect(footnotes).to_contain_text(
        "Judges (3): judge-a, judge-b, judge-late; chosen on the report page."
    )
    expect(page.locator('td[data-col="n"]').first).to_have_text("3")
    page.screenshot(path="var/cross-judge.png", full_page=True)
    page.get_by_role("link", name="Back to the default set").click()
    expect(footnotes).to_contain_text("Left out: judge-late.")
