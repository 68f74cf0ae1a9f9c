from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = _("REST API")

    def ready(self):
        # The apps below queue api.tasks.emit_event by name (assay.celery.enqueue):
        # every process registers it, so the name resolves wherever it is queued.
        from api import tasks  # noqa: F401
        from api.auditlog import register_audited_models

        register_audited_models()
