"""Leaderboard tasks, queued by name from evaluation (judging.evaluation.pipeline
.warm_leaderboard) and kept under their historical name."""

from celery import shared_task

from benchmark.models import Benchmark


@shared_task(name="judging.tasks.warm_leaderboard")
def warm_leaderboard(benchmark_id: int, language: str) -> None:
    """Build a changed leaderboard into the cache before anyone asks for it."""
    # Imported here: the leaderboard needs scipy, and every process imports this
    # module at start-up (judging.apps) to register the tasks.
    from judging.leaderboard import presenting

    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is not None:
        presenting.warm_leaderboard(benchmark, language)
