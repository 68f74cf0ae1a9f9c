"""Personal API tokens (only a digest of each is stored: api.keys) and webhooks."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ApiToken(models.Model):
    """A secret that lets a program act as its user, in its user's roles."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text=_("What the token is for"))
    visible = models.CharField(
        max_length=20, help_text=_("The token's first characters, to tell it apart")
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("API token"), _("API tokens")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} ({self.visible}…)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class WebhookEvent(models.TextChoices):
    """What a webhook can subscribe to; the value is the `X-Assay-Event` header."""

    RUN_COMPLETE = "run.complete", _("A run completed")
    RUN_ATTENTION = "run.needs_attention", _("A run ended needing attention")
    RUN_CANCELLED = "run.cancelled", _("A run was cancelled")
    # Campaigns have no "all tasks done" moment of their own (a task may be
    # corrected until the campaign closes), so closing is the event.
    CAMPAIGN_CLOSED = "campaign.closed", _("A campaign was closed")
    IMPORT_FINISHED = "import.finished", _("An item import job finished")


class Webhook(models.Model):
    """A URL that Assay's workers POST signed events to (api.webhooks)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=2000)
    # Kept as it is, unlike a token's digest: each POST is signed with it. Shown
    # once, when the webhook is made.
    secret = models.CharField(max_length=100, editable=False)
    events = models.JSONField(default=list, help_text=_("WebhookEvent values"))
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("webhook"), _("webhooks")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.url


class WebhookDelivery(models.Model):
    """One event for one webhook, and how sending it went."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        DELIVERED = "delivered", _("Delivered")
        FAILED = "failed", _("Failed")

    webhook = models.ForeignKey(
        Webhook, on_delete=models.CASCADE, related_name="deliveries"
    )
    event_type = models.CharField(max_length=50, choices=WebhookEvent.choices)
    event_id = models.CharField(max_length=200)
    payload = models.JSONField()
    attempts = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING
    )
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Claimed by a worker that is POSTing it until then (api.webhooks.sending).
    sending_until = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = (
            _("webhook delivery"),
            _("webhook deliveries"),
        )
        ordering = ["-created_at", "-id"]
        constraints = [
            # An event emitted twice (a redelivered task) is delivered once.
            models.UniqueConstraint(
                fields=["webhook", _("event_id")], name="webhook_delivery_once"
            )
        ]

    def __str__(self):
        return f"{self.event_type} {self.event_id} → {self.webhook_id}"
