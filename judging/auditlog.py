"""What the audit log records of this app: endpoints and prompt templates.

An endpoint holds the *name* of its key's environment variable, never the key, so
no field is secret. The connection test's result is left out: the test writes it,
not a person, and the endpoint page shows it."""

from auditlog.registry import auditlog

from judging.llm.models import Endpoint, PromptTemplate


def register_audited_models():
    auditlog.register(
        Endpoint, exclude_fields=["test_status", "test_message", "tested_at"]
    )
    auditlog.register(PromptTemplate)
