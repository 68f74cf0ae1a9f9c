from django.apps import AppConfig


class ConstructionConfig(AppConfig):
    name = "construction"

    def ready(self):
        # Tasks are registered in every process (actions queue them by name) and
        # the stage runs join the stalled-run sweep of judging.runs.
        from construction import tasks  # noqa: F401
        from construction.actions import do_cancel_stage_run, do_resume_stage_run
        from construction.auditlog import register_audited_models
        from construction.pipeline import STAGES
        from judging.runs import lifecycle
        from judging.runs.controls import register_controls

        lifecycle.register(STAGES)
        register_controls(
            "construction", cancel=do_cancel_stage_run, resume=do_resume_stage_run
        )
        register_audited_models()
