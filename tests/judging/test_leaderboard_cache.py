"""The leaderboard is cached under a version of everything it reads: repeat views
skip the score query, and any write that changes a table gives a new key."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmark.models import FinalLabel, Label
from judging.evaluation.actions import do_set_model_category, do_waive_pending
from judging.evaluation.models import EvaluationRun, Judgment
from judging.evaluation.overrides import do_override_score, do_revert_override
from judging.evaluation.pipeline import scores_changed
from judging.leaderboard import building
from tests.judging.factories import make_items, make_run


@pytest.fixture(autouse=True)
def clear_cache():
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def runs(benchmark):
    items = make_items(benchmark, 12)
    return [
        make_run(benchmark, items, [3] * 12, [False] * 12, model="alpha"),
        make_run(benchmark, items, [2] * 11 + [None], [False] * 12, model="beta"),
    ]


def key(benchmark):
    return building.cached_report(benchmark).cache_key


def test_repeat_view_is_served_from_the_cache(client_for, benchmark, runs):
    client = client_for("manager")
    url = reverse("judging:leaderboard", args=[benchmark.slug])
    first = client.get(url)
    with CaptureQueriesContext(connection) as queries:
        again = client.get(url)

    def tables(page):  # the report, without the forms and their CSRF tokens
        return page[page.index("<h1>") : page.index('class="report-section grid"')]

    assert tables(again.text) == tables(first.text)
    assert 'data-table="capability"' in again.text
    assert not any("judging_judgment" in q["sql"] for q in queries.captured_queries)


def test_every_kind_of_change_gives_a_new_key(benchmark, runs, personas):
    alpha, beta = runs
    seen = {key(benchmark)}

    def changed():
        new = key(benchmark)
        assert new not in seen
        seen.add(new)

    # A verdict written by the pipeline (the write bumps the run's version).
    judgment = Judgment.objects.get(
        response__run=beta, kind="rubric", score__isnull=True
    )
    Judgment.objects.filter(pk=judgment.pk).update(score=1, status="done")
    assert key(benchmark) in seen  # the write alone is not seen …
    scores_changed(beta)  # … its transaction bumps the version
    changed()
    beta.refresh_from_db()
    # A waiver.
    beta.status = EvaluationRun.Status.RUNNING
    beta.save(update_fields=["status"])
    changed()
    Judgment.objects.filter(pk=judgment.pk).update(score=None, status="failed")
    scores_changed(beta)
    changed()
    do_waive_pending(beta, [judgment.response_id], user=None, note="judge down")
    changed()
    # A person's override of a judge verdict, and its revert.
    answer = alpha.responses.get(item__external_id="item-000")
    do_override_score(answer, "rubric", 1, user=personas["manager"], reason="unit")
    changed()
    do_revert_override(answer, "rubric", user=personas["manager"], reason="fine")
    changed()
    # A category, from the action and from the command.
    do_set_model_category(benchmark, "alpha", "closed")
    changed()
    call_command(
        "set_model_category",
        "--benchmark",
        benchmark.slug,
        "--model",
        "alpha",
        "--category",
        "open dense",
    )
    changed()
    assert EvaluationRun.objects.get(pk=alpha.pk).model_category == "open dense"
    # A final label, a label's name, an item's stored difficulty.
    final = FinalLabel.objects.filter(item__benchmark=benchmark).first()
    other = Label.objects.filter(dimension=final.dimension).exclude(pk=final.label_id)
    final.label = other.first()
    final.save(update_fields=["label"])
    changed()
    Label.objects.filter(pk=final.label_id).update(name="Renamed")
    changed()
    benchmark.items.filter(external_id="item-000").update(difficulty="hard")
    changed()
    # A new run.
    make_run(
        benchmark,
        list(benchmark.items.order_by("external_id")),
        [1] * 12,
        [False] * 12,
        model="gamma",
    )
    changed()


def test_cached_report_matches_a_fresh_build(benchmark, runs):
    cached = building.cached_report(benchmark)
    fresh = building.build_report(benchmark)
    for slug, table in fresh.tables.items():
        assert cached.tables[slug].to_csv() == table.to_csv()


def test_leaderboard_without_runs(client_for, benchmark):
    page = client_for("manager").get(
        reverse("judging:leaderboard", args=[benchmark.slug])
    )
    assert page.status_code == 200 and "No evaluation runs" in page.text
