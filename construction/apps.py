from django.apps import AppConfig


class ConstructionConfig(AppConfig):
    name = "construction"

    def ready(self):
        # Tasks are registered in every process (actions queue them by name) and
        # the stage runs join the stalled-run sweep of judging.runs.
        from construction import tasks  # noqa: F401
        from construction.auditlog import register_audited_models
        from construction.pipeline import STAGES
        from judging.runs import lifecycle

        lifecycle.register(STAGES)
        register_audited_models()
