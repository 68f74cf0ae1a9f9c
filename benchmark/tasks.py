"""Celery tasks of the benchmark app: thin and idempotent (see import_jobs)."""

from celery import shared_task
from django.conf import settings

from benchmark import import_jobs


@shared_task(
    name="benchmark.tasks.run_import_job",
    soft_time_limit=settings.IMPORT_TIME_LIMIT_SECONDS,
    # The hard limit kills a worker that ignored the soft one (stuck in C code).
    time_limit=settings.IMPORT_TIME_LIMIT_SECONDS + 60,
)
def run_import_job(job_id: int) -> None:
    import_jobs.run_job(job_id)
