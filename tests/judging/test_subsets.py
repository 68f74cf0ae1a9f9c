"""Empirical difficulty and LPFQA subsets: the pure rules against a loop, then
saved subsets that every leaderboard table can be computed on."""

import numpy as np
import pytest

from judging.reporting.subsets import solved_counts, solved_histogram, subset_mask

NAN = float("nan")


def test_hand_case():
    final = np.array(
        [
            [3, 3, 0, NAN, 2, NAN],
            [3, 0, 0, 3, 2, NAN],
            [3, 1, 0, 3, NAN, NAN],
        ]
    )
    solved, scored = solved_counts(final, 3)
    assert solved.tolist() == [3, 1, 0, 2, 0, 0]
    assert scored.tolist() == [3, 3, 3, 2, 2, 0]
    assert subset_mask(solved, scored, "lpfqa-minus").tolist() == [
        True,
        True,
        False,
        True,
        False,
        False,
    ]
    # Item 3 was solved by both runs that scored it: every model, so dropped.
    assert subset_mask(solved, scored, "lpfqa-equal").tolist() == [
        False,
        True,
        False,
        False,
        False,
        False,
    ]
    assert solved_histogram(solved, scored, 3) == [2, 1, 1, 1]
    assert solved_counts(final, 2)[0].tolist() == [3, 1, 0, 2, 2, 0]


@pytest.mark.parametrize("seed", range(10))
def test_rules_against_a_loop(seed):
    rng = np.random.default_rng(seed)
    final = rng.choice([0.0, 1.0, 2.0, 3.0, NAN], size=(6, 50))
    solved, scored = solved_counts(final, 3)
    for rule in ("lpfqa-minus", "lpfqa-equal"):
        mask = subset_mask(solved, scored, rule)
        for item in range(50):
            column = final[:, item]
            seen = column[~np.isnan(column)]
            keep = seen.size > 0 and (seen >= 3).any()
            if rule == "lpfqa-equal":
                keep = keep and not (seen >= 3).all()
            assert mask[item] == keep, (rule, item)


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="rule must be one of"):
        subset_mask(np.zeros(1), np.ones(1), "easiest")


@pytest.fixture
def panel(benchmark):
    from tests.judging.factories import make_items, make_run

    items = make_items(benchmark, 12)
    # Item 0: no model solves it; item 1: every model does; the rest: some.
    plans = {
        "a": [0, 3, 3, 3, 0, 3, 3, 0, 3, 3, 0, 3],
        "b": [1, 3, 0, 3, 3, 0, 3, 3, 0, 0, 3, 2],
        "c": [2, 3, 3, 0, 0, 3, 0, 3, 3, 0, 0, 0],
    }
    runs = {
        name: make_run(benchmark, items, scores, [False] * 12, model=name)
        for name, scores in plans.items()
    }
    return items, runs, plans


def test_a_manager_previews_saves_and_reads_the_leaderboard_on_a_subset(
    benchmark, panel, client_for
):
    from django.urls import reverse

    from benchmark.models import ItemSubset
    from judging.leaderboard.building import build_report

    items, runs, plans = panel
    url = reverse("judging:item_subsets", args=[benchmark.slug])
    manager = client_for("manager")
    form = {
        "rule": "lpfqa-equal",
        "solved_at": "3",
        "run": [run.pk for run in runs.values()],
        "name": "LPFQA equal",
    }
    preview = manager.post(url, form).content.decode()
    # Item 0 solved by none, item 1 by all three: 10 of 12 kept.
    assert '<strong data-testid="subset-size">10</strong>' in preview
    assert not ItemSubset.objects.exists()
    saved = manager.post(url, {**form, "confirm": "1"})
    subset = ItemSubset.objects.get()
    assert subset.name == "lpfqa-equal"
    assert subset.item_ids == sorted(item.pk for item in items[2:])
    solved = (np.array(list(plans.values())) == 3).sum(axis=0)
    assert subset.derived_from["solved_by"] == np.bincount(solved, minlength=4).tolist()
    assert subset.derived_from["solved_by"][0] == 1  # item 0
    assert subset.derived_from["solved_by"][3] == 1  # item 1
    assert saved.url.endswith(f"?subset={subset.pk}")
    page = manager.get(saved.url).content.decode()
    assert "computed on the subset <strong>lpfqa-equal</strong>" in page
    report = build_report(benchmark, resamples=200, subset=subset)
    finals = {
        run.model_name: m.final_mean
        for run, m in zip(report.runs, report.metrics, strict=True)
    }
    for name in ("a", "b", "c"):
        assert finals[name] == pytest.approx(np.mean(plans[name][2:]))
    assert (
        report.tables["leaderboard"]
        .notes[0]
        .startswith("Computed on the subset lpfqa-equal")
    )
    download = manager.get(
        reverse("judging:table_download", args=[benchmark.slug, "leaderboard", "csv"])
        + f"?subset={subset.pk}"
    )
    assert "lpfqa-equal-leaderboard.csv" in download["Content-Disposition"]
    again = manager.post(url, {**form, "confirm": "1"}).content.decode()
    assert "already has a subset named" in again
    assert ItemSubset.objects.count() == 1
    assert client_for("expert").get(url).status_code == 403
    other = manager.get(
        reverse("judging:leaderboard", args=[benchmark.slug]) + "?subset=999999"
    )
    assert other.status_code == 404


def test_derive_subset_command(benchmark, panel, capsys):
    from django.core.management import CommandError, call_command

    call_command(
        "derive_subset",
        "--benchmark",
        benchmark.slug,
        "--rule",
        "lpfqa-minus",
        "--name",
        "minus",
    )
    assert "Saved minus (11 items)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="already has a subset"):
        call_command(
            "derive_subset",
            "--benchmark",
            benchmark.slug,
            "--rule",
            "lpfqa-minus",
            "--name",
            "minus",
        )
