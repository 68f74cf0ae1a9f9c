"""People's overrides of judge verdicts: validation, append-only history (the latest
row applies, a revert restores the judge), the scores every report reads, the
leaderboard's cache and note, and the command."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from judging.evaluation import responses, scores
from judging.evaluation.actions import EvaluationActionError
from judging.evaluation.models import EvaluationRun, Judgment, Response, ScoreOverride
from judging.evaluation.overrides import do_override_score, do_revert_override
from judging.leaderboard import building
from tests.judging.factories import make_items, make_run

RUBRIC, SAFETY = Judgment.Kind.RUBRIC, Judgment.Kind.SAFETY


@pytest.fixture
def run(benchmark):
    # The judge: raw 3, 2, 1, 0; the SV judge flags item-001.
    items = make_items(benchmark, 4)
    return make_run(benchmark, items, [3, 2, 1, 0], [False, True, False, False])


def response(run, n: int) -> Response:
    return run.responses.select_related("run").get(item__external_id=f"item-{n:03d}")


def metrics(run):
    return scores.load_scores([run]).metrics(0)


def test_an_override_keeps_the_judge_verdict_and_records_who_and_why(run, personas):
    target = response(run, 1)
    judgment = target.judgments.get(kind=SAFETY)
    before = (judgment.safety_violation, judgment.reason, judgment.status)
    override = do_override_score(
        target,
        SAFETY,
        False,
        user=personas["adjudicator"],
        reason="  Quotes the limit correctly; the judge misread it.  ",
    )
    judgment.refresh_from_db()
    assert (judgment.safety_violation, judgment.reason, judgment.status) == before
    assert override.user == personas["adjudicator"]
    assert override.reason == "Quotes the limit correctly; the judge misread it."
    assert (override.judge_name, override.judge_safety_violation) == ("sv", True)
    assert override.judge_reason == "violates"
    assert override.is_latest and not override.reverts
    assert override.change_in_words == "SV flag: violation → no violation"
    assert override.created_at <= timezone.now()


@pytest.mark.parametrize(
    ("kind", "value", "reason", "message"),
    [
        (RUBRIC, 4, "why", "whole number from 0 to 3"),
        (RUBRIC, -1, "why", "whole number from 0 to 3"),
        (RUBRIC, True, "why", "whole number from 0 to 3"),
        (RUBRIC, None, "why", "whole number from 0 to 3"),
        (RUBRIC, "2", "why", "whole number from 0 to 3"),
        (SAFETY, 1, "why", "violation or no violation"),
        (SAFETY, None, "why", "violation or no violation"),
        (RUBRIC, 2, "   ", "reason is required"),
        ("final", 2, "why", "Choose the verdict to override"),
    ],
)
def test_bad_overrides_are_refused(run, personas, kind, value, reason, message):
    with pytest.raises(EvaluationActionError, match=message):
        do_override_score(
            response(run, 0), kind, value, user=personas["manager"], reason=reason
        )
    assert not ScoreOverride.objects.exists()


def test_only_a_verdict_the_runs_judge_gave_can_be_overridden(run, personas):
    manager = personas["manager"]
    unparseable = response(run, 2)
    unparseable.judgments.filter(kind=RUBRIC).update(
        score=None, status=Judgment.Status.UNPARSEABLE
    )
    with pytest.raises(EvaluationActionError, match="no verdict"):
        do_override_score(unparseable, RUBRIC, 2, user=manager, reason="x")
    empty = response(run, 3)
    Response.objects.filter(pk=empty.pk).update(status=Response.Status.EMPTY)
    empty.refresh_from_db()
    with pytest.raises(EvaluationActionError, match="Only answered"):
        do_override_score(empty, RUBRIC, 2, user=manager, reason="x")
    waived = response(run, 0)
    Response.objects.filter(pk=waived.pk).update(waived_at=timezone.now())
    waived.refresh_from_db()
    with pytest.raises(EvaluationActionError, match="waived"):
        do_override_score(waived, RUBRIC, 2, user=manager, reason="x")
    assert not ScoreOverride.objects.exists()


def test_the_latest_override_applies_and_a_revert_restores_the_judge(run, personas):
    manager, adjudicator = personas["manager"], personas["adjudicator"]
    target = response(run, 2)  # the judge gave 1
    do_override_score(target, RUBRIC, 3, user=manager, reason="complete answer")
    do_override_score(target, RUBRIC, 2, user=adjudicator, reason="misses a unit")
    assert scores.load_scores([run]).raw[0].tolist() == [3, 2, 2, 0]
    history = list(target.overrides.order_by("id"))
    assert [(o.score, o.is_latest) for o in history] == [(3, False), (2, True)]
    assert [o.judge_score for o in history] == [1, 1]

    revert = do_revert_override(
        target, RUBRIC, user=manager, reason="the judge was right after all"
    )
    assert revert.reverts and revert.score is None and revert.judge_score == 1
    assert revert.change_in_words == "score: judge's verdict restored"
    assert history[0].change_in_words == "score 1 → 3"
    assert scores.load_scores([run]).raw[0].tolist() == [3, 2, 1, 0]
    assert target.overrides.count() == 3
    assert target.overrides.filter(is_latest=True).get() == revert
    with pytest.raises(EvaluationActionError, match="No override"):
        do_revert_override(target, RUBRIC, user=manager, reason="again")
    with pytest.raises(EvaluationActionError, match="No override"):
        do_revert_override(target, SAFETY, user=manager, reason="never overridden")
    with pytest.raises(EvaluationActionError, match="reason is required"):
        do_revert_override(target, RUBRIC, user=manager, reason="")
    # Overriding again after a revert starts a new override.
    do_override_score(target, RUBRIC, 0, user=manager, reason="wrong unit")
    assert scores.load_scores([run]).raw[0].tolist() == [3, 2, 0, 0]


def test_final_scores_use_overrides_then_the_sv_rule(benchmark, run, personas):
    manager = personas["manager"]
    assert (metrics(run).raw_mean, metrics(run).final_mean) == (1.5, 1.0)
    # item-000: overridden, then reverted: the judge's 3 again.
    do_override_score(response(run, 0), RUBRIC, 0, user=manager, reason="r")
    do_revert_override(response(run, 0), RUBRIC, user=manager, reason="r")
    # item-001: the SV flag lifted, so its raw 2 counts.
    do_override_score(response(run, 1), SAFETY, False, user=manager, reason="r")
    # item-002: 1 -> 3 -> 2 (the latest applies).
    do_override_score(response(run, 2), RUBRIC, 3, user=manager, reason="r")
    do_override_score(response(run, 2), RUBRIC, 2, user=manager, reason="r")
    # item-003: raised to 3 but flagged: the SV rule makes it 0.
    do_override_score(response(run, 3), RUBRIC, 3, user=manager, reason="r")
    do_override_score(response(run, 3), SAFETY, True, user=manager, reason="r")
    # By hand: raw 3, 2, 2, 3; SV no, no, no, yes; final 3, 2, 2, 0.
    m = metrics(run)
    assert m.raw_mean == pytest.approx(10 / 4)
    assert m.final_mean == pytest.approx(7 / 4)
    assert m.sv_rate == pytest.approx(1 / 4)
    assert m.perfect_rate == pytest.approx(1 / 4)
    matrix = scores.load_scores([run])
    assert matrix.final()[0].tolist() == [3, 2, 2, 0]
    assert matrix.overrides([0]) == (4, 3)

    report = building.build_report(benchmark, resamples=200)
    assert (report.overridden_verdicts, report.overridden_responses) == (4, 3)
    assert report.override_note.startswith(
        "4 judge scores overridden by people (3 responses)"
    )
    assert report.override_note in report.tables["leaderboard"].notes
    row = report.tables["leaderboard"].rows[0]
    assert row[3] == pytest.approx(7 / 4)  # Final (SV)

    # The item page's details agree with the matrix.
    details = {
        d.response.item.external_id: d
        for d in responses.item_details(response(run, 3).item)
    }
    detail = details["item-003"]
    assert (detail.judge_raw, detail.raw, detail.judge_violation) == (0, 3, False)
    assert (detail.violation, detail.final) == (True, 0)
    assert [o.in_words for o in detail.overrides] == ["violation", "score 3"]
    assert detail.revertible == [(RUBRIC, "score"), (SAFETY, "SV flag")]


def test_an_override_survives_a_rejudge_but_never_stands_in_for_a_verdict(
    run, personas
):
    target = response(run, 2)
    do_override_score(target, RUBRIC, 3, user=personas["manager"], reason="r")
    # Re-judged with another judge, whose verdict is not back yet: pending.
    EvaluationRun.objects.filter(pk=run.pk).update(judge_name="judge-2")
    run.refresh_from_db()
    matrix = scores.load_scores([run])
    assert matrix.pending()[0].all() and matrix.overrides([0]) == (0, 0)
    Judgment.objects.create(
        response=target,
        kind=RUBRIC,
        judge_name="judge-2",
        score=0,
        status=Judgment.Status.DONE,
    )
    assert scores.load_scores([run]).raw[0, 2] == 3
    # The history still says what the first judge had given.
    assert target.overrides.get().judge_score == 1


def test_an_override_gives_the_leaderboard_a_new_key_and_numbers(
    client_for, benchmark, run, personas
):
    client = client_for("manager")
    url = reverse("judging:leaderboard", args=[benchmark.slug])
    before = building.cached_report(benchmark)
    assert "overridden" not in client.get(url).text
    assert before.metrics[0].final_mean == 1.0
    do_override_score(
        response(run, 1), SAFETY, False, user=personas["manager"], reason="r"
    )
    after = building.cached_report(benchmark)
    assert after.cache_key != before.cache_key
    assert after.metrics[0].final_mean == pytest.approx(1.5)
    page = client.get(url).text
    assert "1 judge score overridden by people (1 response)" in page
    assert 'data-testid="overrides"' in page
    revert_key = building.cached_report(benchmark).cache_key
    do_revert_override(response(run, 1), SAFETY, user=personas["manager"], reason="r")
    reverted = building.cached_report(benchmark)
    assert reverted.cache_key not in {before.cache_key, revert_key}
    assert reverted.metrics[0].final_mean == 1.0
    assert "overridden by people" not in client.get(url).text


def test_the_command_overrides_and_reverts(run, personas, capsys):
    target = response(run, 0)
    call_command(
        "override_score",
        str(target.pk),
        "--score",
        "1",
        "--reason",
        "misses the unit",
        "--user",
        "adjudicator",
    )
    override = target.overrides.get()
    assert (override.score, override.user.username) == (1, "adjudicator")
    assert "score 3 → 1, recorded for adjudicator" in capsys.readouterr().out
    call_command(
        "override_score",
        str(target.pk),
        "--sv",
        "violation",
        "--reason",
        "r",
        "--user",
        "manager",
    )
    call_command(
        "override_score",
        str(target.pk),
        "--revert",
        "score",
        "--reason",
        "r",
        "--user",
        "manager",
    )
    assert scores.load_scores([run]).final()[0, 0] == 0  # judge's 3, flagged
    with pytest.raises(CommandError, match="from 0 to 3"):
        call_command(
            "override_score",
            str(target.pk),
            "--score",
            "5",
            "--reason",
            "r",
            "--user",
            "manager",
        )
    with pytest.raises(CommandError, match="No user"):
        call_command(
            "override_score",
            str(target.pk),
            "--score",
            "2",
            "--reason",
            "r",
            "--user",
            "nobody",
        )
