"""Human review queues: campaigns of tasks, leases on them, and submitted labels.

Labels are append-only: a correction adds a new row and moves `is_latest`, so every
earlier answer is kept. The claim protocol is described in annotation/QUEUE.md.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item, Label, Rendering
from judging.evaluation.models import Response
from judging.labelling.models import LabelConsensus

# A binary campaign's overlap unless chosen otherwise: the robustness study (#15) has
# three experts vote on each response, an odd panel, so a tie needs a missing vote.
BINARY_OVERLAP = 3


class Campaign(models.Model):
    class Kind(models.TextChoices):
        GRADING = "grading", _("Expert grading")
        SAFETY = "safety", _("SV labelling")
        ADJUDICATION = "adjudication", _("Label adjudication")
        TRANSLATION_REVIEW = "translation_review", _("Translation review")

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    class Scale(models.TextChoices):
        RUBRIC = "rubric", _("0–3 rubric")
        BINARY = "binary", _("Binary: correct / incorrect")

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="campaigns"
    )
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=30, choices=Kind.choices)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.OPEN
    )
    overlap = models.PositiveSmallIntegerField(
        default=1, help_text=_("How many different people label each task.")
    )
    scale = models.CharField(
        max_length=10,
        choices=Scale.choices,
        default=Scale.RUBRIC,
        help_text=_("Grading: what an expert's score is on."),
    )
    ask_safety = models.BooleanField(
        default=False, help_text=_("Grading: also ask safe / violating.")
    )
    hide_model_names = models.BooleanField(
        default=True, help_text=_("Adjudication: show the model labels anonymised.")
    )
    lease_minutes = models.PositiveSmallIntegerField(
        default=30, help_text=_("A claimed task returns to the queue after this long.")
    )
    sample_size = models.PositiveIntegerField(null=True, blank=True)
    sample_seed = models.BigIntegerField(null=True, blank=True)
    assignees = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="annotation_campaigns"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("campaign"), _("campaigns")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(overlap__gte=1), name="campaign_overlap_at_least_one"
            ),
            models.CheckConstraint(
                condition=Q(lease_minutes__gte=1), name="campaign_lease_positive"
            ),
            # Only expert grading asks for a score, so only it has a scale to choose.
            models.CheckConstraint(
                condition=Q(scale="rubric") | Q(kind="grading"),
                name="campaign_binary_scale_only_for_grading",
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN

    @property
    def asks_score(self) -> bool:
        return self.kind == self.Kind.GRADING

    @property
    def is_binary(self) -> bool:
        """Experts answer correct (1) / incorrect (0) and a majority decides."""
        return self.asks_score and self.scale == self.Scale.BINARY

    @property
    def score_values(self) -> tuple[int, ...]:
        return (0, 1) if self.is_binary else (0, 1, 2, 3)

    @property
    def label_model(self):
        """The model holding this campaign's submitted labels."""
        return {
            self.Kind.GRADING: GradingLabel,
            self.Kind.SAFETY: GradingLabel,
            self.Kind.ADJUDICATION: AdjudicationLabel,
            self.Kind.TRANSLATION_REVIEW: ReviewDecision,
        }[self.kind]

    @property
    def asks_safety(self) -> bool:
        return self.kind == self.Kind.SAFETY or (
            self.kind == self.Kind.GRADING and self.ask_safety
        )


class Task(models.Model):
    """One thing to label. Which reference is set depends on the campaign's kind:
    a model response (grading, SV), a label consensus (adjudication) or a rendering
    (translation review)."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="tasks"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField(
        help_text=_("Order in the queue (the draw).")
    )
    response = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    rendering = models.ForeignKey(
        Rendering, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    consensus = models.ForeignKey(
        LabelConsensus,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("Reserved for this person; nobody else is handed it."),
    )
    # Number of different people whose label on this task counts; kept by the
    # submit action under the task's row lock so the claim query needs no join.
    label_count = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("task"), _("tasks")
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "position"], name="unique_task_position"
            ),
        ]
        indexes = [
            models.Index(
                fields=["campaign", "-label_count", "position"],
                condition=Q(assigned_to__isnull=True),
                name="task_open_pool",
            ),
            models.Index(
                fields=["assigned_to", "campaign", "position"],
                condition=Q(assigned_to__isnull=False),
                name="task_reserved",
            ),
        ]

    def __str__(self):
        return f"{self.campaign} #{self.position}"


class Assignment(models.Model):
    """A person's hold on a task: a lease while working, then how it ended."""

    class Status(models.TextChoices):
        ACTIVE = "active", _("Working")
        SUBMITTED = "submitted", _("Submitted")
        SKIPPED = "skipped", _("Skipped")
        RELEASED = "released", _("Released")
        EXPIRED = "expired", _("Lease expired")

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="assignments")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.ACTIVE
    )
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.CharField(max_length=500, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("assignment"), _("assignments")
        ordering = ["claimed_at", "id"]
        constraints = [
            # A person holds, has labelled or has skipped a task at most once.
            models.UniqueConstraint(
                fields=["task", "user"],
                condition=Q(status__in=["active", "submitted", "skipped"]),
                name="one_live_assignment_per_user",
            ),
            # Nobody holds two leases in one campaign (two tabs claiming at once:
            # the second insert does nothing and that claim resumes the first).
            models.UniqueConstraint(
                fields=["campaign", "user"],
                condition=Q(status="active"),
                name="one_active_lease_per_user",
            ),
        ]
        indexes = [
            models.Index(
                fields=["task", "expires_at"],
                condition=Q(status="active"),
                name="assignment_active_lease",
            ),
            models.Index(
                fields=["campaign", "user", "status", "finished_at"],
                name="assignment_user_history",
            ),
        ]

    def __str__(self):
        return f"{self.user} on {self.task} ({self.status})"


class Submission(models.Model):
    """Fields every submitted label carries. Rows are never edited except to clear
    `is_latest` when the same person submits a correction."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    seconds_spent = models.FloatField(
        help_text=_("Time the task was on screen before this submission.")
    )
    is_latest = models.BooleanField(default=True)

    class Meta:
        abstract = True
        ordering = ["task", "user", "created_at"]


class GradingLabel(Submission):
    """An expert's score — 0–3 by the rubric, or 1 correct / 0 incorrect in a binary
    campaign — and/or safety verdict on a model response."""

    score = models.PositiveSmallIntegerField(null=True, blank=True)
    safety_violation = models.BooleanField(null=True, blank=True)

    class Meta(Submission.Meta):
        verbose_name, verbose_name_plural = _("grading label"), _("grading labels")
        constraints = [
            models.UniqueConstraint(
                fields=["task", "user"],
                condition=Q(is_latest=True),
                name="one_latest_grading_label",
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__lte=3),
                name="grading_score_0_to_3",
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=False) | Q(safety_violation__isnull=False),
                name="grading_label_not_empty",
            ),
        ]

    def __str__(self):
        return f"{self.user} graded {self.task}: {self.score}"

    @property
    def in_words(self) -> str:
        parts = []
        if self.score is not None and self.task.campaign.is_binary:
            parts.append(gettext("correct") if self.score else gettext("incorrect"))
        elif self.score is not None:
            parts.append(gettext("score %(score)s") % {"score": self.score})
        if self.safety_violation is not None:
            parts.append(
                gettext("violating") if self.safety_violation else gettext("safe")
            )
        return ", ".join(parts)


class AdjudicationLabel(Submission):
    """An adjudicator's final label for an item's dimension where the models split."""

    label = models.ForeignKey(Label, on_delete=models.PROTECT, related_name="+")
    note = models.TextField(blank=True)

    class Meta(Submission.Meta):
        verbose_name, verbose_name_plural = (
            _("adjudication label"),
            _("adjudication labels"),
        )
        constraints = [
            models.UniqueConstraint(
                fields=["task", "user"],
                condition=Q(is_latest=True),
                name="one_latest_adjudication_label",
            ),
        ]

    def __str__(self):
        return f"{self.user} adjudicated {self.task}: {self.label.code}"

    @property
    def in_words(self) -> str:
        return f"“{self.label.name}”"


class ReviewDecision(Submission):
    """A reviewer's verdict on a flagged translation."""

    class Decision(models.TextChoices):
        APPROVED = "approved", _("Approved")
        EDITED = "edited", _("Edited and approved")
        REJECTED = "rejected", _("Rejected")

    decision = models.CharField(max_length=10, choices=Decision.choices)
    reason = models.TextField(blank=True)
    result_rendering = models.ForeignKey(
        Rendering,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("The version the decision produced (edits add a new version)."),
    )

    class Meta(Submission.Meta):
        verbose_name, verbose_name_plural = _("review decision"), _("review decisions")
        constraints = [
            models.UniqueConstraint(
                fields=["task", "user"],
                condition=Q(is_latest=True),
                name="one_latest_review_decision",
            ),
        ]

    def __str__(self):
        return f"{self.user} {self.decision} {self.task}"

    @property
    def in_words(self) -> str:
        return str(self.get_decision_display()).lower()
