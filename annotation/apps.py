from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        # Other apps queue this app's tasks by name (assay.celery.enqueue): every
        # process registers them.
        from annotation import tasks  # noqa: F401
        from annotation.auditlog import register_audited_models

        register_audited_models()
