"""Translation runs: per item × language tasks and faithfulness reviews."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item, Rendering
from judging.llm.models import Endpoint, LLMCall, PromptTemplate
from judging.runs.models import Run


class TranslationRun(Run):
    """A translator endpoint rendering a benchmark's items into target languages, a
    reviewer endpoint scoring each rendering's faithfulness 1–5, and the routing of
    each rendering to auto-approval or human review. Counters are written by the
    workers; the run page polls them."""

    class Origin(models.TextChoices):
        PIPELINE = "pipeline", _("Run in Assay")
        SIMULATED = "simulated", _("Simulated (demo)")

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="translation_runs"
    )
    languages = models.JSONField(default=list)
    translator = models.ForeignKey(
        Endpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    translation_template = models.ForeignKey(
        PromptTemplate,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    reviewer = models.ForeignKey(
        Endpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    review_template = models.ForeignKey(
        PromptTemplate,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    approve_threshold = models.PositiveSmallIntegerField(
        default=5, help_text=_("Faithfulness scores at or above this pass (1–5)")
    )
    item_filter = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("Subset of items, see judging.translation"),
    )
    overwrite_machine = models.BooleanField(
        default=False,
        help_text=_(
            "Re-translate machine translations already there; a person's "
            "work (edited, imported or approved by a person) is never overwritten"
        ),
    )
    refresh = models.BooleanField(
        default=False, help_text=_("Make new calls instead of reusing recorded ones")
    )
    origin = models.CharField(
        max_length=20, choices=Origin.choices, default=Origin.PIPELINE
    )
    total_tasks = models.PositiveIntegerField(default=0)
    translated = models.PositiveIntegerField(default=0)
    reviewed = models.PositiveIntegerField(default=0)
    auto_approved = models.PositiveIntegerField(default=0)
    flagged = models.PositiveIntegerField(default=0)
    kept_reviewed = models.PositiveIntegerField(
        default=0,
        help_text=_(
            "Skipped: a person's work (edited, imported or approved by a "
            "person) with every part"
        ),
    )
    already_present = models.PositiveIntegerField(
        default=0,
        help_text=_("Skipped: a machine translation with every part is already there"),
    )
    failed = models.PositiveIntegerField(default=0)
    unparseable = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    # An id, not a foreign key: the annotation app depends on this one, not back.
    review_campaign_id = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=_("The translation-review campaign made for its flagged renderings"),
    )

    class Meta:
        verbose_name, verbose_name_plural = _("translation run"), _("translation runs")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(approve_threshold__gte=1)
                & models.Q(approve_threshold__lte=5),
                name="translation_threshold_1_to_5",
            )
        ]

    def __str__(self):
        return f"Translation run {self.pk} on {self.benchmark}"

    @property
    def finished_tasks(self) -> int:
        return (
            self.auto_approved
            + self.flagged
            + self.kept_reviewed
            + self.already_present
            + self.failed
            + self.unparseable
        )

    @property
    def pending_tasks(self) -> int:
        return max(self.total_tasks - self.finished_tasks, 0)


class TranslationTask(models.Model):
    """One item rendered into one language within a run: the unit a run resumes by.

    `stage` moves pending → translated → reviewed; a task whose translation call
    failed or stayed unparseable ends there, one whose current rendering is a
    person's work with every part is `kept` untouched, and one whose machine
    translation has every part is `present` (unless the run overwrites machine
    work). A task whose rendering lacks only options or key points fills those.
    """

    class Stage(models.TextChoices):
        PENDING = "pending", _("Pending")
        TRANSLATED = "translated", _("Translated, awaiting review")
        REVIEWED = "reviewed", _("Reviewed")
        KEPT = "kept", _("Kept human work")
        PRESENT = "present", _("Already translated")
        FAILED = "failed", _("Translation failed")
        UNPARSEABLE = "unparseable", _("Translation unparseable")

    class Outcome(models.TextChoices):
        NONE = "", "—"
        AUTO_APPROVED = "auto_approved", _("Auto-approved")
        FLAGGED = "flagged", _("Flagged for review")

    run = models.ForeignKey(
        TranslationRun, on_delete=models.CASCADE, related_name="tasks"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    language = models.CharField(max_length=8)
    stage = models.CharField(
        max_length=20, choices=Stage.choices, default=Stage.PENDING
    )
    outcome = models.CharField(
        max_length=20, choices=Outcome.choices, default=Outcome.NONE, blank=True
    )
    rendering = models.ForeignKey(
        Rendering, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    translation_call = models.ForeignKey(
        LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name, verbose_name_plural = (
            _("translation task"),
            _("translation tasks"),
        )
        ordering = ["run", "item", "language"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "language"], name="one_translation_task"
            )
        ]
        indexes = [models.Index(fields=["run", "stage"])]

    def __str__(self):
        return f"{self.run_id} {self.item_id} [{self.language}] {self.stage}"


class FaithfulnessReview(models.Model):
    """The reviewer model's 1–5 faithfulness score for one rendering version, with
    the deterministic preservation check of that version and where it was routed.

    `preservation` is
    `judging.translation.rendering_check.check_rendering(...).as_dict()`.
    """

    class Status(models.TextChoices):
        DONE = "done", _("Scored")
        UNPARSEABLE = "unparseable", _("Unparseable")
        FAILED = "failed", _("Failed")

    rendering = models.ForeignKey(
        Rendering, on_delete=models.CASCADE, related_name="faithfulness_reviews"
    )
    run = models.ForeignKey(
        TranslationRun,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="reviews",
    )
    reviewer_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100, blank=True)
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=Status.choices)
    preservation = models.JSONField(default=dict)
    preservation_passed = models.BooleanField()
    threshold = models.PositiveSmallIntegerField(default=5)
    flagged_by_score = models.BooleanField(default=False)
    flagged_by_preservation = models.BooleanField(default=False)
    call = models.ForeignKey(
        LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = (
            _("faithfulness review"),
            _("faithfulness reviews"),
        )
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["rendering", "run"], name="one_review_per_rendering_run"
            ),
            models.CheckConstraint(
                condition=models.Q(score__isnull=True)
                | (models.Q(score__gte=1) & models.Q(score__lte=5)),
                name="faithfulness_score_1_to_5",
            ),
        ]

    def __str__(self):
        return f"{self.reviewer_name} {self.score} on rendering {self.rendering_id}"

    @property
    def is_flagged(self) -> bool:
        return self.flagged_by_score or self.flagged_by_preservation
