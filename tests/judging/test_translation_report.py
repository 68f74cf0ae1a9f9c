"""The translation report's counts per language, its formats and its command."""

import csv
import io
import json

import pytest
from django.core.management import call_command

from benchmark.actions import do_add_rendering_version, do_set_rendering_review_status
from benchmark.models import Rendering
from judging.translation.pipeline import do_record_review
from judging.translation.report import (
    HumanOutcome,
    PairOutcome,
    as_csv,
    summarise,
    translation_report,
)
from tests.judging.translation_fixtures import ENGLISH, SOURCES, add_items


def machine(item, language, question, answer):
    return do_add_rendering_version(
        item,
        language,
        question=question,
        answer=answer,
        origin=Rendering.Origin.MACHINE,
        review_status=Rendering.ReviewStatus.PENDING,
    )


def review(item, rendering, score):
    return do_record_review(
        rendering,
        item.renderings.get(language="zh", is_current=True),
        run=None,
        reviewer_name="simulated",
        prompt_version="",
        score=score,
        reason="",
        status="done",
        threshold=5,
    )


def test_summarise_counts_flag_reasons_and_outcomes():
    pairs = [
        PairOutcome("en", 5, False, False, ""),
        PairOutcome("en", 5, False, False, ""),
        PairOutcome("en", 3, True, False, HumanOutcome.APPROVED),
        PairOutcome("en", 4, True, True, HumanOutcome.EDITED),
        PairOutcome("ru", None, True, False, HumanOutcome.PENDING),
        PairOutcome("ru", 5, False, True, HumanOutcome.REJECTED),
    ]
    en, ru = summarise(pairs, {"en": [12.0, 30.5]})
    assert (en.translated, en.auto_approved, en.flagged) == (4, 2, 2)
    assert en.flagged_percent == 50.0
    assert (en.flagged_by_score, en.flagged_by_preservation, en.flagged_by_both) == (
        2,
        1,
        1,
    )
    assert (en.approved, en.edited, en.rejected, en.awaiting_review) == (1, 1, 0, 0)
    assert en.mean_score == pytest.approx(17 / 4)
    assert (en.reviewer_seconds, en.reviewer_decisions) == (42.5, 2)
    assert (ru.scored, ru.mean_score, ru.rejected, ru.awaiting_review) == (1, 5.0, 1, 1)
    assert ru.reviewer_seconds is None


def test_report_reads_latest_reviews_and_human_decisions(benchmark, personas):
    items = add_items(benchmark)
    for key, item in items.items():
        review(item, machine(item, "en", *ENGLISH[key]), 5 if key != "cable" else 3)
    # bolt: auto-approved. cable: flagged by score, then edited by a person.
    do_add_rendering_version(
        items["cable"],
        "en",
        question="Fixed",
        answer="95 mm².",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.APPROVED,
        user=personas["reviewer"],
    )
    # ip: first version flagged by the check, re-translated and approved.
    ip = items["ip"]
    review(ip, machine(ip, "ru", "Корпус IP67?", "2 м, 30 мин."), 5)
    second = machine(ip, "ru", "Корпус IP67?", "1 м, 30 мин.")
    review(ip, second, 5)
    # motor: flagged by the check and rejected by a reviewer.
    motor = items["motor"]
    flagged = machine(motor, "ru", "Какова мощность YE3-132M-4?", "75 кВт.")
    review(motor, flagged, 5)
    do_set_rendering_review_status(
        flagged, Rendering.ReviewStatus.REJECTED, user=personas["reviewer"]
    )

    en, ru = translation_report(benchmark)
    assert (en.language, en.translated, en.auto_approved, en.flagged) == ("en", 4, 3, 1)
    assert (en.flagged_by_score, en.flagged_by_preservation, en.edited) == (1, 0, 1)
    assert en.mean_score == 4.5
    assert (ru.translated, ru.auto_approved, ru.flagged) == (2, 1, 1)
    assert (ru.flagged_by_preservation, ru.rejected) == (1, 1)

    rows = list(csv.DictReader(io.StringIO(as_csv([en, ru]))))
    assert rows[0]["language"] == "en" and rows[0]["flagged_percent"] == "25.0"
    assert rows[1]["mean_score"] == "5.0" and rows[1]["reviewer_seconds"] == ""


def test_report_command_formats(benchmark, capsys):
    items = add_items(benchmark)
    item = items["bolt"]
    review(item, machine(item, "en", *ENGLISH["bolt"]), 4)
    call_command(
        "translation_report", "--benchmark", benchmark.slug, "--format", "json"
    )
    data = json.loads(capsys.readouterr().out)
    assert data[0]["language"] == "en" and data[0]["flagged_by_score"] == 1
    call_command("translation_report", "--benchmark", benchmark.slug)
    text = capsys.readouterr().out
    assert text.splitlines()[1].split()[:4] == ["en", "1", "0", "1"]
    call_command("translation_report", "--benchmark", benchmark.slug, "--format", "csv")
    assert capsys.readouterr().out.startswith("language,translated,auto_approved")
    assert len(SOURCES) == 4


def test_report_counts_reviewer_decisions_and_time(benchmark, personas):
    from annotation.actions import do_create_review_campaign, do_submit_review
    from annotation.queue import do_claim_next

    items = add_items(benchmark)
    for key in ("bolt", "cable"):
        item = items[key]
        review(item, machine(item, "en", *ENGLISH[key]), 3)
    campaign = do_create_review_campaign(benchmark, name="Review", languages=["en"])
    reviewer = personas["reviewer"]
    first = do_claim_next(campaign, reviewer)
    do_submit_review(
        first.task,
        reviewer,
        decision="approved",
        seconds=12.0,
        flags_acknowledged=True,
    )
    second = do_claim_next(campaign, reviewer)
    do_submit_review(
        second.task,
        reviewer,
        decision="edited",
        question="Edited question",
        answer="Edited answer",
        seconds=30.5,
    )
    (en,) = translation_report(benchmark)
    assert (en.flagged, en.approved, en.edited, en.awaiting_review) == (2, 1, 1, 0)
    assert (en.reviewer_seconds, en.reviewer_decisions) == (42.5, 2)
