"""Endpoints, prompt templates and the record of every LLM call."""

import re
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.http.request import validate_host
from django.utils.translation import gettext_lazy as _

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Request fields a thinking switch may not set: the gateway sends them itself, and
# a model of its own is declared as the model switch.
GATEWAY_FIELDS = {"model", "messages", "stream", "stream_options"}


def api_key_env_allowed(name: str) -> bool:
    """Only variables named like API keys are ever read and sent to a provider."""
    return bool(settings.LLM_API_KEY_ENV_PATTERN.match(name))


class Endpoint(models.Model):
    """An OpenAI-protocol chat-completions endpoint and the limits Assay keeps on it.

    The API key itself is never stored: `api_key_env` names the environment variable
    the worker reads it from, so keys stay out of the database, logs and pages.
    """

    class TestStatus(models.TextChoices):
        NEVER = "never", _("Not tested")
        PENDING = "pending", _("Testing…")
        OK = "ok", _("OK")
        ERROR = "error", _("Error")

    class ThinkingSwitch(models.TextChoices):
        NEVER = "never", _("No switch: never thinks")
        ALWAYS = "always", _("No switch: always thinks")
        PARAMETER = "parameter", _("Switched by request fields")
        MODEL = "model", _("Switched by a separate model id")

    name = models.SlugField(max_length=100, unique=True)
    base_url = models.URLField(max_length=500)
    model = models.CharField(
        max_length=200, help_text=_("Model id sent to the provider")
    )
    api_key_env = models.CharField(
        max_length=100,
        help_text=_("Name of the environment variable holding the API key"),
    )
    temperature = models.FloatField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    extra_body = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("Extra request fields, e.g. a thinking/reasoning switch"),
    )
    stream = models.BooleanField(
        default=False,
        help_text=_("Request streamed responses (long reasoning replies)"),
    )
    thinking_switch = models.CharField(
        max_length=10,
        choices=ThinkingSwitch.choices,
        default=ThinkingSwitch.NEVER,
        help_text=_(
            "How an evaluation run puts the tested model in thinking or "
            "non-thinking mode; a run asking for a mode the endpoint cannot give is "
            "refused"
        ),
    )
    thinking_on = models.JSONField(
        default=dict,
        blank=True,
        help_text=_(
            "Request fields switch: a JSON object that turns thinking on, e.g. "
            '{"enable_thinking": true}, {"reasoning_effort": "high"} or '
            '{"thinking": {"type": "enabled"}}'
        ),
    )
    thinking_off = models.JSONField(
        default=dict,
        blank=True,
        help_text=_(
            "Request fields switch: the object that turns it off; {} sends "
            "nothing (the provider's default must then be non-thinking)"
        ),
    )
    thinking_model = models.CharField(
        max_length=200,
        blank=True,
        help_text=_(
            "Separate model switch: the model id sent in thinking mode, e.g. "
            "deepseek-reasoner beside deepseek-chat"
        ),
    )
    max_concurrency = models.PositiveIntegerField(default=8)
    rpm_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Requests per minute; empty means no limit")
    )
    price_input_per_1k = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )
    price_output_per_1k = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )
    is_active = models.BooleanField(default=True)
    test_status = models.CharField(
        max_length=10, choices=TestStatus.choices, default=TestStatus.NEVER
    )
    test_message = models.TextField(blank=True)
    tested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("endpoint"), _("endpoints")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(max_concurrency__gte=1),
                name="endpoint_concurrency_positive",
            )
        ]

    def __str__(self):
        return self.name

    def clean(self):
        """Every path that saves an endpoint (the form, the admin, commands) checks
        the key variable and the base URL here."""
        errors = {}
        env = self.api_key_env or ""
        if not ENV_NAME.match(env):
            errors["api_key_env"] = (
                f"{env!r} is not an environment variable name. Give the NAME of the "
                "variable holding the key (e.g. OPENAI_API_KEY), never the key itself."
            )
        elif env.startswith(("sk-", "sk_")):
            errors["api_key_env"] = (
                "That looks like an API key; give the variable name."
            )
        elif not api_key_env_allowed(env):
            errors["api_key_env"] = (
                f"{env} is not an allowed key variable: its name must match "
                f"{settings.LLM_API_KEY_ENV_PATTERN.pattern} (LLM_API_KEY_ENV_PATTERN)."
            )
        url = urlsplit(self.base_url or "")
        if url.scheme not in {"http", "https"} or not url.hostname:
            errors["base_url"] = "The base URL must be an http:// or https:// URL."
        elif settings.LLM_ENDPOINT_HOSTS and not validate_host(
            url.hostname, settings.LLM_ENDPOINT_HOSTS
        ):
            errors["base_url"] = (
                f"{url.hostname} is not an allowed provider host (LLM_ENDPOINT_HOSTS: "
                f"{', '.join(settings.LLM_ENDPOINT_HOSTS)})."
            )
        if not isinstance(self.extra_body, dict):
            errors["extra_body"] = "Extra body must be a JSON object."
        errors.update(self._thinking_errors())
        if errors:
            raise ValidationError(errors)

    def _thinking_errors(self) -> dict:
        """What is wrong with the declared thinking switch. The model id of another
        switch is not read, so it is not checked."""
        errors = {}
        for name in ("thinking_on", "thinking_off"):
            value = getattr(self, name)
            if not isinstance(value, dict):
                errors[name] = "Give a JSON object of request fields ({} for none)."
            elif GATEWAY_FIELDS & set(value):
                errors[name] = (
                    f"{', '.join(sorted(GATEWAY_FIELDS & set(value)))}: sent by "
                    "Assay itself; for a thinking model of its own choose "
                    "“Switched by a separate model id”."
                )
        if errors:
            return errors
        if self.thinking_switch == self.ThinkingSwitch.PARAMETER:
            if not self.thinking_on:
                errors["thinking_on"] = "Give the request fields that turn thinking on."
            elif self.thinking_on == self.thinking_off:
                errors["thinking_off"] = "Thinking off must differ from thinking on."
        elif self.thinking_switch == self.ThinkingSwitch.MODEL:
            if not self.thinking_model:
                errors["thinking_model"] = "Give the model id used in thinking mode."
            elif self.thinking_model == self.model:
                errors["thinking_model"] = (
                    "The thinking model must differ from the endpoint's model."
                )
        return errors

    @property
    def default_params(self) -> dict:
        """The request parameters every call to this endpoint starts from."""
        params = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params


class PromptTemplate(models.Model):
    """One immutable version of a prompt; editing a used version adds version n+1.

    `text` (the user message) and `system_text` contain `{{name}}` placeholders,
    filled by `judging.llm.prompts.render_messages`.
    """

    class Purpose(models.TextChoices):
        LABELLING = "labelling", _("Labelling")
        ANSWERING = "answering", _("Answering")
        RUBRIC_JUDGING = "rubric_judging", _("Rubric judging")
        SAFETY_CHECK = "safety_check", _("Safety check")
        TRANSLATION = "translation", _("Translation")
        FAITHFULNESS_REVIEW = "faithfulness_review", _("Faithfulness review")
        KEYPOINT_JUDGING = "keypoint_judging", _("Key-point judging (binary)")
        GENERATION = "generation", _("Question generation (construction)")
        QUALITY_CHECK = "quality_check", _("Candidate quality check (construction)")
        SEARCH_QUERIES = "search_queries", _("Search queries (construction)")
        SEARCH_VERIFICATION = (
            "search_verification",
            _("Search verification verdict (construction)"),
        )
        DEEP_CLAIMS = (
            "deep_claims",
            _("Deep verification: claims and their queries (construction)"),
        )
        DEEP_VERIFICATION = (
            "deep_verification",
            _("Deep verification and refinement (construction)"),
        )
        VARIANT_WRITING = "variant_writing", _("Variant writing (robustness)")
        FORUM_EXTRACT = "forum_extract", _("QA extraction from a forum post (LPFQA)")
        FORUM_QUALITY = "forum_quality", _("QA quality filter (LPFQA)")
        FORUM_MULTIPLE_CHOICE = (
            "forum_multiple_choice",
            _("Conversion to multiple choice (LPFQA)"),
        )
        FORUM_SHORT_ANSWER = (
            "forum_short_answer",
            _("Conversion to short answer with key points (LPFQA)"),
        )

    name = models.SlugField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    purpose = models.CharField(max_length=30, choices=Purpose.choices)
    language = models.CharField(max_length=8, default="en")
    system_text = models.TextField(blank=True)
    text = models.TextField()
    output_schema = models.JSONField(default=dict, blank=True)
    is_builtin = models.BooleanField(default=False)
    note = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("prompt template"), _("prompt templates")
        ordering = ["purpose", "name", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["name", "version"], name="unique_prompt_version"
            )
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"

    @property
    def is_used(self) -> bool:
        return self.calls.exists() or self.labelling_runs.exists()


class LLMCall(models.Model):
    """The record of one logical LLM request: what was sent, what came back, its cost.

    Unique on (request_hash, scope): an identical request in the same scope is served
    from this row instead of being paid for again. `scope` is the purpose for the
    shared cache, or a run-specific string when a run asks to refresh.
    """

    class Status(models.TextChoices):
        OK = "ok", _("OK")
        UNPARSEABLE = "unparseable", _("Unparseable")
        FAILED = "failed", _("Failed")
        # Claimed and (maybe) sent; no answer recorded yet (judging/llm/records.py).
        SENT = "sent", _("Sent, no answer yet")

    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.PROTECT, related_name="calls"
    )
    template = models.ForeignKey(
        PromptTemplate,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="calls",
    )
    purpose = models.CharField(max_length=30)
    scope = models.CharField(max_length=100)
    request_hash = models.CharField(max_length=64)
    model = models.CharField(max_length=200)
    params = models.JSONField(default=dict)
    messages = models.JSONField(default=list)
    raw_response = models.TextField(blank=True)
    reasoning_text = models.TextField(blank=True)
    parsed_output = models.JSONField(null=True, blank=True)
    parse_errors = models.JSONField(
        default=list, blank=True, help_text=_("Rejected replies and why, in order")
    )
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices)
    error = models.TextField(blank=True)
    # The provider's finish reason ("stop", "length", "content_filter"), or
    # "content_filter" for an HTTP refusal by its content filter.
    finish_reason = models.CharField(max_length=40, blank=True)
    cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    # Sent to the provider as the Idempotency-Key header; a call sent again after a
    # kill carries the same key.
    idempotency_key = models.CharField(max_length=32, blank=True)
    # The gateway session sending it while the status is "sent".
    sent_by = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("LLM call"), _("LLM calls")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["request_hash", "scope"], name="one_call_per_request"
            )
        ]
        indexes = [models.Index(fields=["endpoint", "status"])]

    def __str__(self):
        return f"{self.endpoint} {self.purpose} {self.request_hash[:10]}"
