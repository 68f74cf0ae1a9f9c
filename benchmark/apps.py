from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from benchmark.roles import Role


class BenchmarkConfig(AppConfig):
    name = "benchmark"
    verbose_name = _("Benchmarks and items")

    def ready(self):
        # Code queues this app's tasks by name (assay.celery.enqueue): every process
        # registers them.
        from assay import postgres
        from benchmark import tasks  # noqa: F401
        from benchmark.auditlog import register_audited_models

        register_audited_models()
        check_role_map()
        # Before any connection opens: Django copies psycopg's adapters then.
        postgres.register()
        # Every way of signing in (password, single sign-on) ends in Django's
        # login(), which sends user_logged_in: the account's interface language is
        # copied into the new session there, while login() saves the session anyway.
        from django.contrib.auth.signals import user_logged_in

        from benchmark.language import remember_on_sign_in

        user_logged_in.connect(remember_on_sign_in, dispatch_uid="interface-language")


def check_role_map():
    """Refuse to start with OIDC_ROLE_MAP naming a role Assay does not have: a
    typo would otherwise silently give the people of that group no role."""
    unknown = sorted(set(settings.OIDC_ROLE_MAP.values()) - set(Role.values))
    if unknown:
        raise ImproperlyConfigured(
            f"OIDC_ROLE_MAP names unknown roles {', '.join(unknown)}; "
            f"Assay's roles are {', '.join(Role.values)}."
        )
