"""Labelling runs: each annotator's labels and the consensus per item."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item, Label, LabelDimension
from judging.llm.models import Endpoint, LLMCall, PromptTemplate
from judging.runs.models import Run


class LabellingRun(Run):
    """k annotator endpoints labelling a benchmark's items in every dimension.

    The counters are written by the workers as results land; the run page polls them.
    """

    class Origin(models.TextChoices):
        PIPELINE = "pipeline", _("Run in Assay")
        IMPORTED = "imported", _("Imported")
        SIMULATED = "simulated", _("Simulated (demo)")

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="labelling_runs"
    )
    template = models.ForeignKey(
        PromptTemplate, on_delete=models.PROTECT, related_name="labelling_runs"
    )
    annotators = models.ManyToManyField(Endpoint, related_name="labelling_runs")
    item_filter = models.JSONField(
        default=dict, blank=True, help_text=_("Subset of items, see judging.labelling")
    )
    refresh = models.BooleanField(
        default=False, help_text=_("Make new calls instead of reusing recorded ones")
    )
    origin = models.CharField(
        max_length=20, choices=Origin.choices, default=Origin.PIPELINE
    )
    total_calls = models.PositiveIntegerField(default=0)
    done_calls = models.PositiveIntegerField(default=0)
    failed_calls = models.PositiveIntegerField(default=0)
    unparseable_calls = models.PositiveIntegerField(default=0)
    cached_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    consensus_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("labelling run"), _("labelling runs")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"Labelling run {self.pk} on {self.benchmark}"

    @property
    def finished_calls(self) -> int:
        return self.done_calls + self.failed_calls + self.unparseable_calls

    @property
    def pending_calls(self) -> int:
        return max(self.total_calls - self.finished_calls, 0)


class AnnotatorLabel(models.Model):
    """One annotator endpoint's label for one item in one dimension within a run."""

    class Status(models.TextChoices):
        LABELLED = "labelled", _("Labelled")
        UNPARSEABLE = "unparseable", _("Unparseable")
        FAILED = "failed", _("Failed")

    run = models.ForeignKey(
        LabellingRun, on_delete=models.CASCADE, related_name="annotator_labels"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="+")
    dimension = models.ForeignKey(
        LabelDimension, on_delete=models.CASCADE, related_name="+"
    )
    label = models.ForeignKey(
        Label, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    rationale = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=Status.choices)
    call = models.ForeignKey(
        LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("annotator label"), _("annotator labels")
        ordering = ["run", "item", "dimension", "annotator"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "annotator", "dimension"],
                name="one_label_per_annotator_dimension",
            ),
            models.CheckConstraint(
                condition=models.Q(status="labelled", label__isnull=False)
                | ~models.Q(status="labelled"),
                name="labelled_has_label",
            ),
        ]

    def __str__(self):
        return f"{self.annotator} {self.item_id} {self.dimension_id}={self.label_id}"


class LabelConsensus(models.Model):
    """The k annotators' agreement on one item in one dimension within a run.

    Outcome `none` rows are the adjudication queue's input: the candidates are the
    run's AnnotatorLabel rows for the same item and dimension (`candidates()`).
    """

    class Outcome(models.TextChoices):
        FULL = "full", _("Full agreement")
        MAJORITY = "majority", _("Majority")
        NONE = "none", _("No majority")

    run = models.ForeignKey(
        LabellingRun, on_delete=models.CASCADE, related_name="consensus"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    dimension = models.ForeignKey(
        LabelDimension, on_delete=models.CASCADE, related_name="+"
    )
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    label = models.ForeignKey(
        Label,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_("The adopted label (full or majority outcomes)"),
    )
    votes = models.JSONField(default=dict, help_text=_("label code -> annotator count"))
    annotator_count = models.PositiveSmallIntegerField()
    kept_final_label = models.BooleanField(
        default=False,
        help_text=_(
            "The item's final label (imported, or a person's decision) differs "
            "and was kept: this label is a suggestion until a manager applies it"
        ),
    )
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name, verbose_name_plural = _("label consensus"), _("label consensuses")
        ordering = ["run", "item", "dimension"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "dimension"], name="one_consensus_per_dimension"
            ),
            models.CheckConstraint(
                condition=models.Q(outcome="none", label__isnull=True)
                | (~models.Q(outcome="none") & models.Q(label__isnull=False)),
                name="consensus_label_matches_outcome",
            ),
        ]
        indexes = [models.Index(fields=["outcome", "dimension"])]

    def __str__(self):
        return f"{self.item_id} {self.dimension_id}: {self.outcome}"

    def candidates(self):
        """Each annotator's label and rationale for this item and dimension."""
        return AnnotatorLabel.objects.filter(
            run_id=self.run_id, item_id=self.item_id, dimension_id=self.dimension_id
        ).select_related("annotator", "label")


class SuggestionApplication(models.Model):
    """A manager's confirmed application of a labelling run's suggestions to final
    labels, kept so that the whole application can be undone in one step.

    `changes` holds, per final label changed: {"item", "dimension", "label" (the
    label applied), "provenance" (applied), "before": {"label", "provenance",
    "decided_by", "note"}}.
    """

    run = models.ForeignKey(
        LabellingRun, on_delete=models.CASCADE, related_name="applications"
    )
    applied_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    applied_at = models.DateTimeField(auto_now_add=True)
    changes = models.JSONField(default=list)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = (
            _("suggestion application"),
            _("suggestion applications"),
        )
        ordering = ["-applied_at", "-id"]

    def __str__(self):
        return f"{len(self.changes)} suggestions of {self.run} applied"
