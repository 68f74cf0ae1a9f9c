"""Celery tasks of the benchmark app: thin and idempotent (see import_jobs)."""

from celery import shared_task

from benchmark import import_jobs


@shared_task(name="benchmark.tasks.run_import_job")
def run_import_job(job_id: int) -> None:
    import_jobs.run_job(job_id)
