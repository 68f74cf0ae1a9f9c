from django.conf import settings
from django.db import models

from benchmark.models import Benchmark, Item, Rendering


class EvaluationRun(models.Model):
    """One tested model answering one benchmark in one language and mode.

    Runs come from the LLM pipeline, from an import of results produced elsewhere, or
    from the demo seeder (simulated); all three are analysed the same way.
    """

    class Origin(models.TextChoices):
        PIPELINE = "pipeline", "Run in Assay"
        IMPORTED = "imported", "Imported"
        SIMULATED = "simulated", "Simulated (demo)"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        COMPLETE = "complete", "Complete"
        CANCELLED = "cancelled", "Cancelled"

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="evaluation_runs"
    )
    model_name = models.CharField(max_length=200)
    model_category = models.CharField(
        max_length=100, blank=True, help_text="e.g. closed, open MoE, open dense"
    )
    language = models.CharField(max_length=8)
    thinking = models.BooleanField(default=False)
    origin = models.CharField(max_length=20, choices=Origin.choices)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.PENDING
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["benchmark", "model_name", "language", "thinking"]

    def __str__(self):
        mode = "thinking" if self.thinking else "non-thinking"
        return f"{self.model_name} [{self.language}, {mode}]"


class Response(models.Model):
    """A tested model's final answer to one item (reasoning kept apart)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ANSWERED = "answered", "Answered"
        EMPTY = "empty", "Empty"
        INVALID = "invalid", "Invalid"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(
        EvaluationRun, on_delete=models.CASCADE, related_name="responses"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="responses")
    rendering = models.ForeignKey(
        Rendering, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.TextField(blank=True)
    reasoning_text = models.TextField(blank=True)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.PENDING
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "item"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item"], name="one_response_per_item"
            )
        ]

    def __str__(self):
        return f"{self.run} · {self.item.external_id}"


class Judgment(models.Model):
    """One judge's verdict on one response: a 0–3 rubric score or a safety flag."""

    class Kind(models.TextChoices):
        RUBRIC = "rubric", "Rubric score (0–3)"
        SAFETY = "safety", "Safety violation"

    class Status(models.TextChoices):
        DONE = "done", "Done"
        PENDING = "pending", "Pending"
        UNPARSEABLE = "unparseable", "Unparseable"
        FAILED = "failed", "Failed"

    response = models.ForeignKey(
        Response, on_delete=models.CASCADE, related_name="judgments"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    judge_name = models.CharField(max_length=200)
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    safety_violation = models.BooleanField(null=True, blank=True)
    reason = models.TextField(blank=True)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.PENDING
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["response", "kind", "judge_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "kind", "judge_name"],
                name="one_judgment_per_judge",
            ),
            models.CheckConstraint(
                condition=models.Q(score__isnull=True) | models.Q(score__lte=3),
                name="rubric_score_0_to_3",
            ),
        ]

    def __str__(self):
        return f"{self.judge_name} {self.kind} on {self.response_id}"
