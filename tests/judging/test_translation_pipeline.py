"""Translation runs against the OpenAI-protocol stub with the real openai client:
routing by score and preservation check, never overwriting human work, resume."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.models import Campaign
from assay.celery import app
from benchmark.actions import do_add_rendering_version
from benchmark.models import Rendering
from judging.translation.actions import do_resume_translation
from judging.translation.models import (
    FaithfulnessReview,
    TranslationRun,
    TranslationTask,
)
from judging.translation.pipeline import route, start_run
from tests.judging.translation_fixtures import (
    add_item,
    add_items,
    make_endpoints,
    make_responder,
    run_in_process,
    start,
)
from tests.openai_stub import OpenAIStub, Reply


@pytest.fixture(autouse=True)
def eager_tasks(settings, monkeypatch):
    # Celery tasks run in this process, in the order the commit callbacks queue them.
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    settings.LLM_BACKOFF_BASE_MS = 20
    settings.LLM_BACKOFF_MAX_MS = 100
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    settings.LLM_REQUEST_TIMEOUT = 2
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def stub():
    with OpenAIStub(api_key="test-key") as running:
        yield running


def current(item, language):
    return Rendering.objects.get(item=item, language=language, is_current=True)


def test_route_flags_below_threshold_missing_scores_and_failed_checks():
    assert route(5, True, 5) == (False, False)
    assert route(4, True, 5) == (True, False)
    assert route(4, True, 4) == (False, False)
    assert route(5, False, 5) == (False, True)
    assert route(None, True, 1) == (True, False)
    assert route(2, False, 3) == (True, True)


def test_run_routes_each_rendering_by_score_and_preservation_check(
    stub, benchmark, django_capture_on_commit_callbacks
):
    items = add_items(benchmark)
    stub.responder = make_responder(
        scores={"cable": 4}, changed={"ip"}, garbled_reviews={"motor"}
    )
    translator, reviewer = make_endpoints(stub)
    run = run_in_process(
        django_capture_on_commit_callbacks, benchmark, translator, reviewer
    )

    assert run.status == TranslationRun.Status.COMPLETE
    assert (run.total_tasks, run.translated, run.reviewed) == (4, 4, 4)
    assert (run.auto_approved, run.flagged, run.failed, run.unparseable) == (
        1,
        3,
        0,
        0,
    )
    bolt = current(items["bolt"], "en")
    assert bolt.origin == Rendering.Origin.MACHINE
    assert bolt.review_status == Rendering.ReviewStatus.APPROVED
    assert bolt.answer == "800 MPa."
    for key in ("cable", "ip", "motor"):
        assert current(items[key], "en").review_status == "flagged"

    reviews = {
        review.rendering.item.external_id: review
        for review in FaithfulnessReview.objects.select_related("rendering__item")
    }
    assert reviews["bolt"].score == 5 and reviews["bolt"].preservation_passed
    assert (
        reviews["cable"].flagged_by_score
        and not reviews["cable"].flagged_by_preservation
    )
    ip = reviews["ip"]
    assert ip.flagged_by_preservation and not ip.flagged_by_score
    assert ip.preservation["missing"] == {"number": ["1"]}
    assert ip.preservation["extra"] == {"number": ["2"]}
    note = items["ip"].events.filter(kind="review").first().after["note"]
    assert note == "preservation check: answer: 1 → 2"
    motor = reviews["motor"]
    assert motor.score is None and motor.status == FaithfulnessReview.Status.UNPARSEABLE
    assert motor.flagged_by_score
    assert reviews["bolt"].rendering == current(items["bolt"], "en")
    # The flagged renderings wait in a translation-review campaign.
    campaign = Campaign.objects.get(pk=run.review_campaign_id)
    assert campaign.kind == Campaign.Kind.TRANSLATION_REVIEW
    assert {task.item.external_id for task in campaign.tasks.all()} == {
        "cable",
        "ip",
        "motor",
    }
    # Four translations and four first reviews, plus the re-asks of the garbled one.
    assert stub.answered_count() >= 8
    assert stub.duplicate_answers() == {}


def test_threshold_four_approves_a_four(
    stub, benchmark, django_capture_on_commit_callbacks
):
    items = add_items(benchmark)
    stub.responder = make_responder(scores={"cable": 4, "bolt": 3})
    translator, reviewer = make_endpoints(stub)
    run = run_in_process(
        django_capture_on_commit_callbacks,
        benchmark,
        translator,
        reviewer,
        approve_threshold=4,
    )
    assert (run.auto_approved, run.flagged) == (3, 1)
    assert current(items["cable"], "en").review_status == "approved"
    assert current(items["bolt"], "en").review_status == "flagged"


def test_rerun_fills_what_is_missing_and_never_overwrites_human_work(
    stub, benchmark, django_capture_on_commit_callbacks, personas
):
    items = add_items(benchmark)
    edited = do_add_rendering_version(
        items["bolt"],
        "en",
        question="Edited question",
        answer="Edited 800 MPa.",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.APPROVED,
        user=personas["reviewer"],
    )
    imported = do_add_rendering_version(
        items["cable"],
        "en",
        question="Imported question",
        answer="95 mm².",
        origin=Rendering.Origin.IMPORTED,
        review_status=Rendering.ReviewStatus.PENDING,
    )
    flagged_before = do_add_rendering_version(
        items["ip"],
        "en",
        question="Old machine text",
        answer="1 m.",
        origin=Rendering.Origin.MACHINE,
        review_status=Rendering.ReviewStatus.FLAGGED,
    )
    stub.responder = make_responder()
    translator, reviewer = make_endpoints(stub)
    run = run_in_process(
        django_capture_on_commit_callbacks, benchmark, translator, reviewer
    )
    # Only the motor had no English: the machine text of the ip item is there.
    assert (run.kept_reviewed, run.already_present, run.translated) == (2, 1, 1)
    assert current(items["bolt"], "en") == edited
    assert current(items["cable"], "en") == imported
    assert current(items["ip"], "en") == flagged_before
    assert current(items["motor"], "en").origin == Rendering.Origin.MACHINE
    kept = TranslationTask.objects.filter(run=run, stage=TranslationTask.Stage.KEPT)
    assert {task.item.external_id for task in kept} == {"bolt", "cable"}

    # Run again: nothing is missing, so nothing is translated.
    again = run_in_process(
        django_capture_on_commit_callbacks, benchmark, translator, reviewer
    )
    assert (again.kept_reviewed, again.already_present, again.translated) == (
        2,
        2,
        0,
    )
    assert again.status == TranslationRun.Status.COMPLETE

    # Overwriting machine work translates the machine texts again, and only them.
    forced = run_in_process(
        django_capture_on_commit_callbacks,
        benchmark,
        translator,
        reviewer,
        overwrite_machine=True,
    )
    assert (forced.kept_reviewed, forced.already_present, forced.translated) == (
        2,
        0,
        2,
    )
    new_ip = current(items["ip"], "en")
    assert new_ip.version == flagged_before.version + 1
    assert new_ip.origin == Rendering.Origin.MACHINE
    assert current(items["bolt"], "en") == edited
    assert current(items["cable"], "en") == imported


def test_failed_translations_are_counted_and_retried_on_resume(
    stub, benchmark, django_capture_on_commit_callbacks, settings, client_for
):
    add_item(
        benchmark, "bolt", "M12螺栓按GB/T 3098.1-2010的抗拉强度是多少？", "800兆帕。"
    )
    translator, reviewer = make_endpoints(stub)
    stub.responder = lambda body: Reply(status=500, error_message="upstream down")
    run = run_in_process(
        django_capture_on_commit_callbacks, benchmark, translator, reviewer
    )
    assert (run.status, run.failed, run.translated) == ("attention", 1, 0)
    task = run.tasks.get()
    assert task.stage == TranslationTask.Stage.FAILED and "upstream down" in task.error
    page = client_for("manager").get(reverse("judging:translation_run", args=[run.pk]))
    listed = page.content.decode().split('id="untranslated"')[1]
    assert "Needs attention" in page.content.decode()
    assert "bolt" in listed and "upstream down" in listed

    stub.responder = make_responder()
    with django_capture_on_commit_callbacks(execute=True):
        do_resume_translation(run)
    run.refresh_from_db()
    assert (run.status, run.failed, run.translated, run.auto_approved) == (
        "complete",
        0,
        1,
        1,
    )


def test_unparseable_translation_is_never_turned_into_a_rendering(
    stub, benchmark, django_capture_on_commit_callbacks
):
    item = add_item(
        benchmark, "bolt", "M12螺栓按GB/T 3098.1-2010的抗拉强度是多少？", "800兆帕。"
    )
    translator, reviewer = make_endpoints(stub)
    stub.responder = lambda body: "Here is the translation: M12 bolt, 800 MPa"
    run = run_in_process(
        django_capture_on_commit_callbacks, benchmark, translator, reviewer
    )
    assert (run.unparseable, run.translated, run.status) == (1, 0, "complete")
    assert not Rendering.objects.filter(item=item, language="en").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"languages": []}, "at least one target language"),
        ({"languages": ["zh"]}, "source language"),
        ({"languages": ["fr"]}, "no target language fr"),
        ({"approve_threshold": 6}, "from 1 to 5"),
        ({"item_filter": {"colour": "red"}}, "Unknown item filter keys: colour"),
    ],
)
def test_bad_run_options_are_refused_and_change_nothing(
    stub, benchmark, options, message
):
    add_items(benchmark)
    translator, reviewer = make_endpoints(stub)
    languages = options.pop("languages", ["en"])
    with pytest.raises(ValidationError, match=message):
        start(benchmark, translator, reviewer, languages=languages, **options)
    assert not TranslationRun.objects.exists()


def test_stalled_runs_are_resumed(
    stub, benchmark, django_capture_on_commit_callbacks, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from judging.runs.lifecycle import resume_stalled
    from judging.translation.pipeline import TRANSLATION

    add_items(benchmark)
    stub.responder = make_responder()
    translator, reviewer = make_endpoints(stub)
    # The start task was lost: the run stays pending.
    with django_capture_on_commit_callbacks(execute=False):
        lost = start(benchmark, translator, reviewer)
    long_ago = timezone.now() - timedelta(seconds=settings.LABELLING_STALE_SECONDS + 5)
    TranslationRun.objects.filter(pk=lost.pk).update(created_at=long_ago)
    # A worker died mid-chunk: the run is running with open tasks and no heartbeat.
    with django_capture_on_commit_callbacks(execute=True):
        killed = start(benchmark, translator, reviewer, languages=["ru"])
    killed.refresh_from_db()
    assert killed.status == "complete"
    TranslationRun.objects.filter(pk=killed.pk).update(
        status="running", heartbeat_at=long_ago
    )
    killed.tasks.filter(language="ru").update(stage=TranslationTask.Stage.PENDING)

    with django_capture_on_commit_callbacks(execute=True):
        resumed = resume_stalled(TRANSLATION)
    assert sorted(resumed) == sorted([lost.pk, killed.pk])
    lost.refresh_from_db()
    assert (lost.status, lost.auto_approved) == ("complete", 4)
    killed.refresh_from_db()
    assert killed.status == "complete"
    assert not killed.tasks.filter(stage=TranslationTask.Stage.PENDING).exists()


def test_task_whose_source_text_vanished_fails_instead_of_hanging(
    stub, benchmark, django_capture_on_commit_callbacks
):
    items = add_items(benchmark)
    stub.responder = make_responder()
    translator, reviewer = make_endpoints(stub)
    with django_capture_on_commit_callbacks(execute=False):
        run = start(benchmark, translator, reviewer)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        start_run(run.pk)
    Rendering.objects.filter(item=items["bolt"], language="zh").update(is_current=False)
    for callback in callbacks:
        with django_capture_on_commit_callbacks(execute=True):
            callback()
    run.refresh_from_db()
    assert (run.status, run.failed, run.auto_approved) == ("attention", 1, 3)
    assert run.tasks.get(item=items["bolt"]).error == "No current source text."
