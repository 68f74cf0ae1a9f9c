"""Translation pages: role checks, the start form, the live run page and the report,
in the test client and in chromium."""

import contextlib
from functools import partial

import pytest
from django.urls import reverse

from annotation.actions import do_open_translation_review
from judging.llm.prompts import install_default_templates
from judging.translation import pipeline, tasks
from judging.translation.models import FaithfulnessReview, TranslationRun
from judging.translation.pipeline import do_record_review
from tests.judging.test_translation_report import machine
from tests.judging.translation_fixtures import (
    ENGLISH,
    add_items,
    make_endpoints,
    make_responder,
)
from tests.openai_stub import OpenAIStub


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    with OpenAIStub(api_key="test-key") as running:
        yield running


@pytest.fixture
def queued(monkeypatch):
    """Celery calls recorded instead of sent: the test runs them itself."""
    calls = []
    for task in (tasks.start_translation_run, tasks.translate_chunk):
        monkeypatch.setattr(
            task, "delay", lambda *args, _name=task.name: calls.append((_name, args))
        )
    return calls


def run_queued(calls, capture=contextlib.nullcontext):
    """Run the recorded Celery calls, and those they queue, until none is left.
    `capture` makes commit callbacks fire inside a test's wrapping transaction."""
    while calls:
        name, args = calls.pop(0)
        with capture():
            if name.endswith("start_translation_run"):
                pipeline.start_run(*args)
            elif name.endswith("open_translation_review"):
                do_open_translation_review(*args)
            elif name.endswith("translate_chunk"):
                pipeline.translate_chunk(*args)


@pytest.mark.parametrize("persona", ["expert", "reviewer", "adjudicator", "outsider"])
def test_only_managers_see_translation_pages(persona, client_for, benchmark):
    client = client_for(persona)
    for url in (
        reverse("judging:translation_runs"),
        reverse("judging:translation_report", args=[benchmark.slug]),
    ):
        assert client.get(url).status_code == 403


def test_start_form_refuses_bad_input_and_creates_nothing(
    client_for, benchmark, stub, queued
):
    add_items(benchmark)
    translator, reviewer = make_endpoints(stub)
    response = client_for("manager").post(
        reverse("judging:translation_runs"),
        {
            "benchmark": benchmark.pk,
            "translator": translator.pk,
            "reviewer": reviewer.pk,
            "approve_threshold": 5,
        },
    )
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert not TranslationRun.objects.exists() and not queued


def test_run_page_polls_until_done_then_stops(
    client_for, benchmark, stub, queued, django_capture_on_commit_callbacks
):
    add_items(benchmark)
    stub.responder = make_responder(changed={"ip"})
    translator, reviewer = make_endpoints(stub)
    client = client_for("manager")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("judging:translation_runs"),
            {
                "benchmark": benchmark.pk,
                "languages": ["en"],
                "translator": translator.pk,
                "reviewer": reviewer.pk,
                "approve_threshold": 5,
            },
        )
    run = TranslationRun.objects.get()
    assert response.url == reverse("judging:translation_run", args=[run.pk])
    url = reverse("judging:translation_run", args=[run.pk])
    polled = client.get(url, headers={"HX-Request": "true"})
    assert polled.status_code == 200 and b"every 1500ms" in polled.content
    run_queued(queued, partial(django_capture_on_commit_callbacks, execute=True))
    done = client.get(url, headers={"HX-Request": "true"})
    assert done.headers["HX-Refresh"] == "true"
    page = client.get(url).content.decode()
    assert "Flagged for human review (1)" in page and "token-missing" in page
    csv = client.get(
        reverse("judging:translation_report", args=[benchmark.slug]), {"format": "csv"}
    )
    assert csv["Content-Type"] == "text/csv; charset=utf-8"
    assert (
        csv.content.decode("utf-8-sig")
        .splitlines()[1]
        .startswith("en,4,3,1,25.0,0,1,0")
    )


@pytest.mark.browser
def test_manager_starts_a_run_and_reads_the_report(
    transactional_db, login, benchmark, stub, queued
):
    add_items(benchmark)
    stub.responder = make_responder(scores={"cable": 3}, changed={"ip"})
    translator, reviewer = make_endpoints(stub)
    page = login("manager")
    page.goto("/judging/translation/")
    page.locator("#id_benchmark").select_option(label=str(benchmark))
    page.get_by_label("English").check()
    page.locator("#id_translator").select_option(label="translator")
    page.locator("#id_reviewer").select_option(label="reviewer")
    page.screenshot(path="/tmp/translation_runs.png", full_page=True)
    page.get_by_role("button", name="Start translation").click()
    page.wait_for_url("**/judging/translation/*/")
    assert "Pending" in page.locator("#progress").inner_text()

    run_queued(queued)
    # The progress partial polls every 1.5 s and shows the finished counts.
    page.locator("#progress", has_text="Complete").wait_for()
    assert page.locator("[data-count=flagged]").inner_text() == "2"
    page.reload()
    page.get_by_text("Flagged for human review (2)").wait_for()
    page.screenshot(path="/tmp/translation_run.png", full_page=True)

    page.get_by_role("link", name=f"Report for {benchmark.name}").click()
    row = page.locator("tr[data-language=en]")
    assert row.locator("td").nth(1).inner_text() == "4"
    assert row.locator("td").nth(4).inner_text() == "50.0%"
    page.screenshot(path="/tmp/translation_report.png", full_page=True)
    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV").click()
    assert (
        download.value.suggested_filename == f"{benchmark.slug}-translation-report.csv"
    )


def test_pages_use_a_bounded_number_of_queries(
    client_for, benchmark, django_assert_max_num_queries
):
    items = add_items(benchmark)
    run = TranslationRun.objects.create(
        benchmark=benchmark, languages=["en"], status="complete"
    )
    for key, item in items.items():
        question, answer = ENGLISH[key]
        rendering = machine(item, "en", question, answer.replace("0", "9"))
        do_record_review(
            rendering,
            item.renderings.get(language="zh", is_current=True),
            run=run,
            reviewer_name="reviewer",
            prompt_version="v1",
            score=3,
            reason="",
            status=FaithfulnessReview.Status.DONE,
            threshold=5,
        )
    for _ in range(5):
        TranslationRun.objects.create(benchmark=benchmark, languages=["ru"])
    client = client_for("manager")
    # The start form offers the shipped prompts: a first visit installs them once.
    install_default_templates()
    with django_assert_max_num_queries(12):
        assert client.get(reverse("judging:translation_runs")).status_code == 200
    with django_assert_max_num_queries(12):
        page = client.get(reverse("judging:translation_run", args=[run.pk]))
    assert f"Flagged for human review ({len(items)})" in page.content.decode()
    with django_assert_max_num_queries(12):
        client.get(reverse("judging:translation_report", args=[benchmark.slug]))
