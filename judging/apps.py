from importlib import import_module

from django.apps import AppConfig

DOMAINS_WITH_TASKS = (
    "llm",
    "runs",
    "labelling",
    "evaluation",
    "leaderboard",
    "translation",
    "robustness",
)


class JudgingConfig(AppConfig):
    name = "judging"

    def ready(self):
        # The judging domains meet here. Each domain's Celery tasks are registered
        # in every process, web included, because pipelines and actions queue them
        # by name (assay.celery.enqueue); and the run kinds are handed to the
        # stalled-run sweep (judging.runs); the audited models are registered
        # (judging.auditlog).
        from judging.auditlog import register_audited_models
        from judging.evaluation.pipeline import EVALUATION
        from judging.labelling.runs import LABELLING
        from judging.robustness.pipeline import VARIANTS
        from judging.runs import lifecycle
        from judging.translation.pipeline import TRANSLATION

        for domain in DOMAINS_WITH_TASKS:
            import_module(f"judging.{domain}.tasks")
        lifecycle.register(LABELLING, EVALUATION, TRANSLATION, VARIANTS)
        register_audited_models()
