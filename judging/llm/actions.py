"""State changes for endpoints and prompt templates.

`check_…` functions validate and raise ValidationError with a message for the user;
`do_…` functions write under `transaction.atomic` and queue Celery work on commit.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from assay.celery import enqueue
from judging.llm.models import Endpoint, PromptTemplate

ENDPOINT_FIELDS = (
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "max_tokens",
    "extra_body",
    "stream",
    "thinking_switch",
    "thinking_on",
    "thinking_off",
    "thinking_model",
    "max_concurrency",
    "rpm_limit",
    "price_input_per_1k",
    "price_output_per_1k",
    "is_active",
)


# -- endpoints ---------------------------------------------------------------------


def do_save_endpoint(name: str, **fields) -> Endpoint:
    """Create the endpoint `name` or update its settings."""
    unknown = set(fields) - set(ENDPOINT_FIELDS)
    if unknown:
        raise ValidationError(
            _("Unknown endpoint settings: %(value)s")
            % {"value": ", ".join(sorted(unknown))}
        )
    endpoint = Endpoint.objects.filter(name=name).first()
    if endpoint is None:
        endpoint = Endpoint(name=name)
    for field, value in fields.items():
        setattr(endpoint, field, value)
    endpoint.full_clean()
    if endpoint.pk is None:
        endpoint.save()
    else:
        endpoint.save(update_fields=list(fields))
    return endpoint


@transaction.atomic
def do_request_endpoint_test(endpoint: Endpoint) -> Endpoint:
    """Mark the endpoint as being tested and queue the tiny test call."""
    endpoint.test_status = Endpoint.TestStatus.PENDING
    endpoint.test_message = ""
    endpoint.save(update_fields=["test_status", "test_message"])
    enqueue("judging.tasks.test_endpoint", endpoint.pk)
    return endpoint


@transaction.atomic
def do_record_endpoint_test(endpoint: Endpoint, *, ok: bool, message: str) -> None:
    endpoint.test_status = Endpoint.TestStatus.OK if ok else Endpoint.TestStatus.ERROR
    endpoint.test_message = message
    endpoint.tested_at = timezone.now()
    endpoint.save(update_fields=["test_status", "test_message", "tested_at"])


# -- prompt templates ----------------------------------------------------------------


@transaction.atomic
def do_save_prompt_version(
    template: PromptTemplate,
    *,
    text: str,
    system_text: str,
    output_schema: dict | None = None,
    note: str = "",
    user=None,
) -> PromptTemplate:
    """Edit a template: a version already used stays as it is and the edit becomes
    the next version; an unused version is changed in place."""
    if not text.strip():
        raise ValidationError(_("The prompt text must not be empty."))
    schema = template.output_schema if output_schema is None else output_schema
    if template.is_used:
        latest = PromptTemplate.objects.filter(name=template.name).aggregate(
            Max("version")
        )["version__max"]
        return PromptTemplate.objects.create(
            name=template.name,
            version=latest + 1,
            purpose=template.purpose,
            language=template.language,
            system_text=system_text,
            text=text,
            output_schema=schema,
            note=note,
            created_by=user,
        )
    template.text = text
    template.system_text = system_text
    template.output_schema = schema
    template.note = note
    template.save(update_fields=["text", "system_text", "output_schema", "note"])
    return template
