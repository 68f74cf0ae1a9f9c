"""The robustness study's own records: the resources a team maintains per
benchmark, and runs in which an LLM writes variants that people review before
they become items (benchmark.models.ItemVariant)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item
from judging.llm.models import Endpoint, LLMCall, PromptTemplate
from judging.runs.models import Run


class Resource(models.Model):
    """One entry of a benchmark's relation resources, in one language."""

    class Kind(models.TextChoices):
        SYNONYM = "synonym", _("Synonym (term → synonym)")
        INDUSTRY = (
            "industry",
            _("Industry named by the general context (sector → name)"),
        )
        LAW = "law", _("Law named by the security context (sector → law; * any)")
        IRRELEVANT = "irrelevant", _("Irrelevant option (never right)")

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="robustness_resources"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    language = models.CharField(max_length=8)
    key = models.CharField(max_length=200)
    value = models.CharField(max_length=500)

    class Meta:
        verbose_name, verbose_name_plural = _("resource"), _("resources")
        ordering = ["benchmark", "kind", "language", "key"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "kind", "language", "key"],
                name="unique_robustness_resource",
            )
        ]

    def __str__(self):
        return f"{self.kind} [{self.language}] {self.key} → {self.value}"


class VariantRun(Run):
    """An LLM writes one relation's variant for each seed (logic: the negated
    statement); each reply becomes a VariantDraft awaiting review. Moved through
    its states by judging.runs.lifecycle (judging.robustness.pipeline)."""

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="variant_runs"
    )
    relation = models.CharField(max_length=40)
    sector_field = models.CharField(max_length=50)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="+")
    template = models.ForeignKey(
        PromptTemplate, on_delete=models.PROTECT, related_name="+"
    )
    seed_ids = models.JSONField(default=list)
    # Resume asks pending seeds again under a fresh gateway scope (pipeline.scope),
    # so a reply that stayed unparseable is asked for anew, not served again.
    retry_round = models.PositiveSmallIntegerField(default=0)
    total_units = models.PositiveIntegerField(default=0)
    cached_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)

    class Meta:
        verbose_name, verbose_name_plural = _("variant run"), _("variant runs")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.relation} variant run {self.pk} on {self.benchmark}"


class VariantDraft(models.Model):
    """What the LLM wrote for one seed and relation, until a person approves
    (possibly edited) or rejects it. A failed or unparseable call leaves it
    pending with its reason; Resume asks again."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending (no usable reply)")
        AWAITING = "awaiting", _("Awaiting review")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")

    run = models.ForeignKey(VariantRun, on_delete=models.CASCADE, related_name="drafts")
    seed = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    relation = models.CharField(max_length=40)
    sector = models.CharField(max_length=200, blank=True)
    text = models.TextField(blank=True)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.AWAITING
    )
    reason = models.TextField(blank=True)
    call = models.ForeignKey(
        LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The run's retry round that wrote it: a run ends once every pending draft
    # of its seeds was asked in its current round.
    round = models.PositiveSmallIntegerField(default=0)
    reviewed_text = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    variant = models.ForeignKey(
        Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("variant draft"), _("variant drafts")
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["seed", "relation"], name="one_variant_draft_per_seed"
            )
        ]

    def __str__(self):
        return f"{self.relation} draft for {self.seed_id} ({self.status})"
