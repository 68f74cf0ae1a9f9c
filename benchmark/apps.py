from django.apps import AppConfig


class BenchmarkConfig(AppConfig):
    name = "benchmark"
    verbose_name = "Benchmarks and items"

    def ready(self):
        # Code queues this app's tasks by name (assay.celery.enqueue): every process
        # registers them.
        from benchmark import tasks  # noqa: F401
        from benchmark.audit import register_audited_models

        register_audited_models()
