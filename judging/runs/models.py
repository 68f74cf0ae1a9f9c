"""What every LLM run has in common: its status and the times of its lifecycle."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class RunStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    # Every step ran, but some items are still without a result: a manager retries
    # or waives them (evaluation runs).
    ATTENTION = "attention", _("Needs attention")
    COMPLETE = "complete", _("Complete")
    CANCELLED = "cancelled", _("Cancelled")


class Run(models.Model):
    """Abstract base of labelling, evaluation and translation runs; the functions in
    judging.runs.lifecycle move a run through its states."""

    Status = RunStatus

    status = models.CharField(
        max_length=20, choices=RunStatus.choices, default=RunStatus.PENDING
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text=_("Last time a worker recorded results")
    )

    class Meta:
        abstract = True

    # Every step ran; the run's results can be used (consensus, reports).
    ENDED_WITH_RESULTS = (RunStatus.COMPLETE, RunStatus.ATTENTION)

    @property
    def is_active(self) -> bool:
        return self.status in {RunStatus.PENDING, RunStatus.RUNNING}
