"""Web search services and the record of every query sent to one (search
verification, IndustryBench §3.2). Gathered into construction.models for Django."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.http.request import validate_host
from django.utils.translation import gettext_lazy as _

from assay.targets import check_target
from construction.search.adapters import ADAPTERS
from judging.llm.models import ENV_NAME, api_key_env_allowed


class SearchService(models.Model):
    """A web search service the search-verification stage asks (IndustryBench
    §3.2): which adapter speaks its protocol (construction.search.adapters), where
    it is, and the name of the environment variable holding its API key, if it
    needs one. Like an endpoint's, the key itself is never stored: the worker
    reads it."""

    name = models.SlugField(max_length=100, unique=True)
    adapter = models.CharField(
        max_length=50, help_text=_("The protocol, e.g. searxng (SearxNG's JSON API)")
    )
    base_url = models.URLField(max_length=500)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text=_(
            "Name of the environment variable holding the API key (empty: "
            "the service needs none)"
        ),
    )
    # The service's limit, held across every worker process and host (the
    # gateway's limiter, judging.llm.limits): search throughput is the service's
    # to give, not the number of worker processes'.
    max_concurrency = models.PositiveIntegerField(
        default=8,
        validators=[MinValueValidator(1)],
        help_text=_("Queries in flight at once, over all workers"),
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("search service"), _("search services")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(max_concurrency__gte=1),
                name="search_service_concurrency_positive",
            )
        ]

    def __str__(self):
        return self.name

    @property
    def limit_key(self) -> str:
        """Its key in the limiter; the creation time keeps it unique to this
        row when a database is rebuilt and ids are reused."""
        return f"search-{self.pk}-{int(self.created_at.timestamp() * 1000)}"

    def clean(self):
        errors = {}
        if self.adapter not in ADAPTERS:
            errors["adapter"] = (
                f"{self.adapter!r} is not a search adapter; known: "
                + ", ".join(sorted(ADAPTERS))
            )
        env = self.api_key_env or ""
        if env and not ENV_NAME.match(env):
            errors["api_key_env"] = (
                f"{env!r} is not an environment variable name. Give the NAME of "
                "the variable holding the key, never the key itself."
            )
        elif env and not api_key_env_allowed(env):
            errors["api_key_env"] = (
                f"{env} is not an allowed key variable: its name must match "
                f"{settings.LLM_API_KEY_ENV_PATTERN.pattern} (LLM_API_KEY_ENV_PATTERN)."
            )
        url = urlsplit(self.base_url or "")
        if url.scheme not in {"http", "https"} or not url.hostname:
            errors["base_url"] = "The base URL must be an http:// or https:// URL."
        elif settings.SEARCH_SERVICE_HOSTS and not validate_host(
            url.hostname, settings.SEARCH_SERVICE_HOSTS
        ):
            errors["base_url"] = (
                f"{url.hostname} is not an allowed search host (SEARCH_SERVICE_HOSTS: "
                f"{', '.join(settings.SEARCH_SERVICE_HOSTS)})."
            )
        else:
            try:
                check_target(
                    self.base_url,
                    settings.SEARCH_SERVICE_HOSTS,
                    "SEARCH_SERVICE_HOSTS",
                    "search service URL",
                )
            except ValidationError as error:
                errors["base_url"] = error.messages[0]
        if errors:
            raise ValidationError(errors)


class SearchCall(models.Model):
    """The record of one query to one search service: its top results (url,
    title, snippet, rank, retrieved_at) or why it failed. Unique per service ×
    query, so a query already answered is never sent again; a failed one is sent
    again by the next run that needs it."""

    class Status(models.TextChoices):
        OK = "ok", _("OK")
        FAILED = "failed", _("Failed")

    service = models.ForeignKey(
        SearchService, on_delete=models.PROTECT, related_name="calls"
    )
    query = models.TextField()
    query_hash = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices)
    results = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    retrieved_at = models.DateTimeField()

    class Meta:
        verbose_name, verbose_name_plural = _("search call"), _("search calls")
        ordering = ["-retrieved_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["service", "query_hash"], name="one_search_per_query"
            )
        ]

    def __str__(self):
        return f"{self.service} {self.query[:40]}: {self.status}"
