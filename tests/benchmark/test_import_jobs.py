"""Uploads over IMPORT_IN_REQUEST_MAX_BYTES: queued as an ImportJob, imported by a
worker (benchmark.import_jobs), all or nothing, shown on a page that polls."""

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from playwright.sync_api import expect

from benchmark import import_jobs
from benchmark.models import ImportJob, Item
from tests.benchmark.importing_helpers import (
    DATA,
    industrybench_csv,
    industrybench_row,
    table_counts,
)
from tests.judging.labelling_fixtures import wait_until

IMPORT_URL = reverse("benchmark:import_items")


@pytest.fixture(autouse=True)
def small_limit(settings, tmp_path):
    settings.IMPORT_IN_REQUEST_MAX_BYTES = 100
    settings.IMPORT_UPLOAD_DIR = tmp_path / "imports"


@pytest.fixture
def queued(monkeypatch):
    """Job ids handed to the task queue."""
    sent = []
    monkeypatch.setattr(
        "benchmark.tasks.run_import_job.delay", lambda job_id: sent.append(job_id)
    )
    return sent


def upload(client, content: bytes, headers=None, **fields):
    data = {
        "file": SimpleUploadedFile("big.csv", content),
        "layout": "auto",
        "benchmark": "test-bench",
        **fields,
    }
    return client.post(IMPORT_URL, data, headers=headers)


def job_page(client, job, **headers):
    return client.get(reverse("benchmark:import_job", args=[job.pk]), **headers)


def test_a_large_upload_is_queued_after_commit_and_imported_by_the_task(
    client_for, benchmark, queued, django_capture_on_commit_callbacks
):
    client = client_for("manager")
    content = industrybench_csv([industrybench_row("A"), industrybench_row("B")])

    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, content)

    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("benchmark:import_job", args=[job.pk])
    assert queued == [job.pk]
    assert (job.status, job.size, job.created_by.username) == (
        "queued",
        len(content),
        "manager",
    )
    assert Item.objects.count() == 0
    waiting = job_page(client, job, HTTP_HX_REQUEST="true")
    assert waiting.status_code == 200
    assert "Waiting for a worker" in waiting.content.decode()
    stored = settings.IMPORT_UPLOAD_DIR / job.file.name
    assert stored.read_bytes() == content

    with django_capture_on_commit_callbacks(execute=True):
        import_jobs.run_job(job.pk)

    job.refresh_from_db()
    assert job.status == "done"
    assert sorted(Item.objects.values_list("external_id", flat=True)) == ["A", "B"]
    assert not stored.exists() and job.file.name == ""
    page = job_page(client, job)
    assert "Imported big.csv" in page.content.decode()
    assert "Benchmark test-bench: 2 created" in page.content.decode()
    assert f"Browse {benchmark.name}" in page.content.decode()
    finished = job_page(client, job, HTTP_HX_REQUEST="true")
    assert finished.status_code == 286  # htmx stops polling
    assert 'id="import-summary"' in finished.content.decode()


def test_a_rejected_file_lists_its_problems_and_writes_nothing(
    client_for, benchmark, queued, django_capture_on_commit_callbacks
):
    client = client_for("manager")
    rows = [
        industrybench_row("A"),
        industrybench_row("B", difficulty="extreme"),
        industrybench_row("A"),
    ]
    upload(client, industrybench_csv(rows))
    job = ImportJob.objects.get()
    before = table_counts()

    with django_capture_on_commit_callbacks(execute=True):
        import_jobs.run_job(job.pk)

    job.refresh_from_db()
    assert job.status == "rejected"
    assert job.problem_total == 2
    assert table_counts() == before
    content = job_page(client, job).content.decode()
    assert "big.csv was rejected — nothing was imported" in content
    assert "duplicate id &#x27;A&#x27; (first on line 2)" in content
    assert "&#x27;extreme&#x27; is not one of easy, hard, medium" in content


def test_a_jobs_problems_and_summary_are_shown_in_the_readers_language(
    client_for, benchmark, queued
):
    """The job stores each message's msgid and values: whoever reads the page
    reads it in their language, whichever language the upload was made in."""
    client = client_for("manager")
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    rows = [industrybench_row("A"), industrybench_row("A")]
    upload(client, industrybench_csv(rows), headers={"accept-language": "zh-hans"})
    rejected = ImportJob.objects.get()
    import_jobs.run_job(rejected.pk)
    rejected.refresh_from_db()
    [problem] = rejected.problems
    assert problem["message"] == "duplicate id 'A' (first on line 2)"
    assert problem["note"] == {
        "msgid": "duplicate id %(id)s (first on line %(first)s)",
        "values": {"id": "'A'", "first": 2},
    }
    chinese = job_page(client, rejected, **zh).content.decode()
    assert "id &#x27;A&#x27; 重复（首次出现在第 2 行）" in chinese
    english = job_page(client, rejected).content.decode()
    assert "duplicate id &#x27;A&#x27; (first on line 2)" in english

    upload(client, industrybench_csv([industrybench_row("B")]))
    done = ImportJob.objects.get(status="queued")
    import_jobs.run_job(done.pk)
    done.refresh_from_db()
    assert "基准 test-bench：新建 1 道" in job_page(client, done, **zh).content.decode()
    assert "Benchmark test-bench: 1 created" in job_page(client, done).content.decode()


def test_running_a_job_twice_imports_once(client_for, benchmark, queued):
    upload(client_for("manager"), industrybench_csv([industrybench_row("A")]))
    job = ImportJob.objects.get()

    import_jobs.run_job(job.pk)
    import_jobs.run_job(job.pk)

    job.refresh_from_db()
    assert job.status == "done"
    assert Item.objects.count() == 1


def test_an_unexpected_error_fails_the_job_and_writes_nothing(
    client_for, benchmark, queued, monkeypatch
):
    upload(client_for("manager"), industrybench_csv([industrybench_row("A")]))
    job = ImportJob.objects.get()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(import_jobs, "do_import_items", broken)
    import_jobs.run_job(job.pk)

    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "RuntimeError: disk on fire")
    assert Item.objects.count() == 0
    content = job_page(client_for("manager"), job).content.decode()
    assert "The import of big.csv failed — nothing was imported" in content


def test_an_import_past_its_time_limit_is_stopped_and_writes_nothing(
    client_for, benchmark, queued, monkeypatch, settings
):
    """Celery raises SoftTimeLimitExceeded inside the task after
    IMPORT_TIME_LIMIT_SECONDS; here it comes after the import wrote an item."""
    upload(client_for("manager"), industrybench_csv([industrybench_row("A")]))
    job = ImportJob.objects.get()
    importing = import_jobs.do_import_items

    def slow(*args, **kwargs):
        importing(*args, **kwargs)
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(import_jobs, "do_import_items", slow)
    import_jobs.run_job(job.pk)

    job.refresh_from_db()
    assert job.status == "failed"
    assert "longer than IMPORT_TIME_LIMIT_SECONDS allows" in job.error
    assert Item.objects.count() == 0
    from benchmark.tasks import run_import_job

    assert run_import_job.soft_time_limit == settings.IMPORT_TIME_LIMIT_SECONDS


def test_small_files_are_still_imported_in_the_request(
    client_for, benchmark, queued, settings
):
    settings.IMPORT_IN_REQUEST_MAX_BYTES = 10 * 2**20
    content = industrybench_csv([industrybench_row("A")])
    response = upload(client_for("manager"), content)

    assert response.status_code == 200
    assert "Imported big.csv" in response.content.decode()
    assert queued == [] and ImportJob.objects.count() == 0


@pytest.mark.worker
def test_a_real_worker_imports_a_queued_upload(
    killable_worker, client_for, benchmark, settings
):
    killable_worker.env["IMPORT_UPLOAD_DIR"] = str(settings.IMPORT_UPLOAD_DIR)
    killable_worker.start()
    rows = [industrybench_row(f"W-{n:03d}") for n in range(50)]
    upload(client_for("manager"), industrybench_csv(rows))
    job = ImportJob.objects.get()

    def finished():
        job.refresh_from_db()
        return job.is_finished

    wait_until(finished, 60, "the worker never finished the import job")
    assert job.status == "done", (job.status, job.error)
    assert Item.objects.filter(benchmark=benchmark).count() == 50


@pytest.mark.browser
def test_the_job_page_polls_until_the_import_is_done(
    transactional_db, benchmark, personas, login, page, queued
):
    login("manager")
    page.get_by_role("link", name="Import", exact=True).click()
    page.get_by_label("File").set_input_files(str(DATA / "industrybench.csv"))
    page.get_by_label("Benchmark", exact=True).select_option("test-bench")
    page.get_by_role("button", name="Import").click()

    page.wait_for_url("**/import/jobs/*/")
    status = page.locator("#import-job-status")
    expect(status).to_contain_text("Waiting for a worker")
    import_jobs.run_job(queued[0])
    expect(page.locator("#import-summary")).to_contain_text("3 created")
    page.screenshot(path="/tmp/import_job_done.png", full_page=True)
    assert Item.objects.filter(benchmark=benchmark).count() == 3
