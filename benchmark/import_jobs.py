"""Uploads too large to import in the request, imported by a Celery worker.

Flow: `do_queue_import` stores the upload in IMPORT_UPLOAD_DIR with a queued
`ImportJob` and, once that commits, queues `benchmark.tasks.run_import_job`. The task
calls `run_job`, which in one transaction locks the job row, returns unless the job is
still queued, imports the file inside a savepoint (`do_import_items`, all or nothing)
and records the outcome — done with the summary, or rejected with the problems — on
the row before committing. Summary and problems are stored as Notes' msgids and
values (benchmark.notes), so the job's page shows them in the language of whoever
reads it; the webhook event carries them in English. So:

* a second delivery of the same message waits for the row lock, then finds the job
  finished and does nothing;
* a worker killed mid-import rolls everything back, the job stays queued, and the
  broker redelivers the message (acks_late) to run it again from the start;
* the job never shows `done` without its items, nor items without `done`.

While the import runs its row changes are invisible to other sessions, so progress
(bytes read) goes to the cache; with the in-process cache of the zero-config default
the page can only say that the job waits or runs.
"""

import logging
import uuid

from celery.exceptions import SoftTimeLimitExceeded
from django.core.cache import cache
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_noop

from assay.celery import enqueue
from benchmark.importing import do_import_items
from benchmark.models import ImportJob
from benchmark.notes import Note
from benchmark.validation import ImportRejected

logger = logging.getLogger(__name__)

PROGRESS_STEP = 4 * 2**20  # bytes between two progress writes
PROGRESS_TTL = 24 * 3600


def progress_key(job_id: int) -> str:
    return f"import-job:{job_id}:bytes"


def bytes_read(job: ImportJob) -> int | None:
    """Bytes the worker has read so far, or None if it has not started (or the cache
    is not shared with the worker)."""
    return cache.get(progress_key(job.pk))


def do_queue_import(
    upload, *, slug: str, name: str, update: bool, layout: str, user
) -> ImportJob:
    with transaction.atomic():
        job = ImportJob(
            filename=upload.name[:255],
            size=upload.size,
            slug=slug,
            new_name=name,
            update=update,
            layout=layout,
            created_by=user,
        )
        job.file.save(f"{uuid.uuid4().hex}.upload", upload, save=False)
        job.save()
        enqueue("benchmark.tasks.run_import_job", job.pk)
    return job


def _announce(job: ImportJob) -> None:
    """Queue the job's `import.finished` webhook event (api sits above benchmark,
    so by task name). Done carries the summary, rejected the problem count, failed
    the error. Imports made in a request, by a command or by the REST API answer
    their caller directly and send no event."""
    payload = {
        "job": job.pk,
        "benchmark": job.slug,
        "filename": job.filename,
        "status": job.status,
        "summary": [str(line) for line in stored_notes(job.summary_lines)],
        "problems": job.problem_total,
        "error": job.error,
        "path": reverse("benchmark:import_job", args=[job.pk]),
    }
    enqueue("api.tasks.emit_event", "import.finished", payload, f"import-job:{job.pk}")


def stored_notes(lines: list) -> list:
    """A job's summary as stored: each line a Note's JSON (an older job's, plain
    English text)."""
    return [Note.from_json(line) if isinstance(line, dict) else line for line in lines]


def _counted(lines, job_id: int):
    """The file's lines, writing the bytes read so far to the cache now and then."""
    read, reported = 0, 0
    cache.set(progress_key(job_id), 0, PROGRESS_TTL)
    for line in lines:
        read += len(line)
        if read - reported >= PROGRESS_STEP:
            cache.set(progress_key(job_id), read, PROGRESS_TTL)
            reported = read
        yield line


def run_job(job_id: int) -> None:
    try:
        with transaction.atomic():
            job = (
                ImportJob.objects.select_for_update()
                .filter(pk=job_id, status=ImportJob.Status.QUEUED)
                .first()
            )
            if job is None:
                return
            with job.file.open("rb") as source:
                try:
                    summary = do_import_items(
                        _counted(source, job.pk),
                        slug=job.slug,
                        name=job.new_name,
                        update=job.update,
                        layout=job.layout,
                        user=job.created_by,
                        filename=job.filename,
                    )
                except ImportRejected as rejected:
                    job.status = ImportJob.Status.REJECTED
                    job.problems = [p.as_json() for p in rejected.problems]
                    job.problem_total = rejected.total
                else:
                    job.status = ImportJob.Status.DONE
                    job.summary_lines = [line.as_json() for line in summary.lines()]
            _finish(job, ["status", "problems", "problem_total", "summary_lines"])
    except SoftTimeLimitExceeded:
        # Stored in English and translated where it is shown (import_job.html).
        _fail(
            job_id,
            gettext_noop(
                "The import ran longer than IMPORT_TIME_LIMIT_SECONDS allows and was "
                "stopped; nothing was written. Split the file, or ask for a longer "
                "limit."
            ),
        )
    except Exception as error:
        # A bug or a lost database, not a problem in the file: say so on the page
        # rather than leave the job queued for ever.
        logger.exception("Import job %s failed", job_id)
        _fail(job_id, f"{type(error).__name__}: {error}")


def _fail(job_id: int, error: str) -> None:
    with transaction.atomic():
        job = (
            ImportJob.objects.select_for_update()
            .filter(pk=job_id, status=ImportJob.Status.QUEUED)
            .first()
        )
        if job is not None:
            job.status = ImportJob.Status.FAILED
            job.error = error[:2000]
            _finish(job, ["status", "error"])


def _finish(job: ImportJob, fields: list[str]) -> None:
    """Save the outcome and queue its webhook event; the uploaded file goes once
    that is committed."""
    name = job.file.name
    job.file = ""
    job.finished_at = timezone.now()
    job.save(update_fields=[*fields, "file", "finished_at"])
    _announce(job)
    storage = job.file.storage
    transaction.on_commit(lambda: storage.delete(name))
    transaction.on_commit(lambda: cache.delete(progress_key(job.pk)))
