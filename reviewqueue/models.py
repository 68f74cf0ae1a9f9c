"""One person's hold on one review item (a lease), for the review screens whose
items are rows of other apps: stage audit items, variant drafts, dangling-reference
flags. The queue names the screen's work list (e.g. ``audit:12``); the item is a
row id in it. See QUEUE.md."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class Lease(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        DONE = "done", _("Done")
        SKIPPED = "skipped", _("Skipped")
        RELEASED = "released", _("Released")
        EXPIRED = "expired", _("Expired (taken over)")

    queue = models.CharField(max_length=100)
    item_id = models.PositiveBigIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.ACTIVE
    )
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("lease"), _("leases")
        constraints = [
            # Two reviewers never hold the same item: the database refuses the
            # second active lease, on PostgreSQL and on SQLite alike.
            models.UniqueConstraint(
                fields=["queue", "item_id"],
                condition=Q(status="active"),
                name="one_active_lease_per_review_item",
            ),
            # Two tabs of one person hold one item between them.
            models.UniqueConstraint(
                fields=["queue", "user"],
                condition=Q(status="active"),
                name="one_active_lease_per_reviewer",
            ),
        ]
        indexes = [
            models.Index(fields=["queue", "user", "status"], name="lease_mine"),
            models.Index(fields=["queue", "status", "item_id"], name="lease_held"),
        ]

    def __str__(self):
        return f"{self.queue} item {self.item_id} ({self.status})"
