"""What the audit log records of this app: search services, which decide where
workers send candidates' queries. Like an endpoint, a service holds the *name* of
its key's environment variable, never the key, so no field is secret."""

from auditlog.registry import auditlog

from construction.models import SearchService


def register_audited_models():
    auditlog.register(SearchService)
