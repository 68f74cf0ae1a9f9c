"""State changes for endpoints and prompt templates.

`check_…` functions validate and raise ValidationError with a message for the user;
`do_…` functions write under `transaction.atomic` and queue Celery work on commit.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from assay.celery import enqueue
from judging.llm.gateway import api_key_env_allowed
from judging.llm.models import Endpoint, PromptTemplate

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENDPOINT_FIELDS = (
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "max_tokens",
    "extra_body",
    "stream",
    "max_concurrency",
    "rpm_limit",
    "price_input_per_1k",
    "price_output_per_1k",
    "is_active",
)


# -- endpoints ---------------------------------------------------------------------


def check_endpoint(fields: dict) -> None:
    env = fields.get("api_key_env", "")
    if not ENV_NAME.match(env or ""):
        raise ValidationError(
            f"{env!r} is not an environment variable name. Give the NAME of the "
            "variable holding the key (e.g. OPENAI_API_KEY), never the key itself."
        )
    if env.startswith(("sk-", "sk_")):
        raise ValidationError("That looks like an API key; give the variable name.")
    if not api_key_env_allowed(env):
        raise ValidationError(
            f"{env} is not an allowed key variable: its name must match "
            f"{settings.LLM_API_KEY_ENV_PATTERN.pattern} (LLM_API_KEY_ENV_PATTERN)."
        )
    if fields.get("max_concurrency") is not None and fields["max_concurrency"] < 1:
        raise ValidationError("Max concurrency must be at least 1.")
    if not isinstance(fields.get("extra_body", {}), dict):
        raise ValidationError("Extra body must be a JSON object.")


@transaction.atomic
def do_save_endpoint(name: str, **fields) -> Endpoint:
    """Create the endpoint `name` or update its settings."""
    unknown = set(fields) - set(ENDPOINT_FIELDS)
    if unknown:
        raise ValidationError(
            f"Unknown endpoint settings: {', '.join(sorted(unknown))}"
        )
    endpoint = Endpoint.objects.filter(name=name).first()
    current = endpoint or Endpoint()
    merged = {field: getattr(current, field) for field in ENDPOINT_FIELDS}
    merged.update(fields)
    check_endpoint(merged)
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
        raise ValidationError("The prompt text must not be empty.")
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
