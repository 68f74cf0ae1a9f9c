"""Personal API tokens: only a digest of each is stored (api.keys)."""

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A secret that lets a program act as its user, in its user's roles."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="What the token is for")
    visible = models.CharField(
        max_length=20, help_text="The token's first characters, to tell it apart"
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self):
        return f"{self.name} ({self.visible}…)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None
