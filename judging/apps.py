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
        register_run_controls()
        register_audited_models()


def register_run_controls():
    """Each run kind's cancel and resume actions, for the one run-control view."""
    from judging.evaluation import actions as evaluation
    from judging.labelling import actions as labelling
    from judging.robustness import actions as robustness
    from judging.runs.controls import register_controls
    from judging.translation import actions as translation

    register_controls(
        "labelling", cancel=labelling.do_cancel_run, resume=labelling.do_resume_run
    )
    register_controls(
        "evaluation",
        cancel=evaluation.do_cancel_evaluation,
        resume=evaluation.do_resume_evaluation,
    )
    register_controls(
        "translation",
        cancel=translation.do_cancel_translation,
        resume=translation.do_resume_translation,
    )
    register_controls(
        "variants",
        cancel=robustness.do_cancel_variant_run,
        resume=robustness.do_resume_variant_run,
    )
