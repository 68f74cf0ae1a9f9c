"""Benchmark construction (IndustryBench §3.1–3.3): source documents, the candidate
questions generated from them, and the stage ledger that records every decision on
a candidate until it is released as a benchmark item."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item
from construction.dangling import parse_phrases, phrases_key
from construction.search.models import SearchCall, SearchService
from judging.llm.models import Endpoint, LLMCall, PromptTemplate
from judging.runs.models import Run

__all__ = [
    "FORUM_STAGES",
    "INDUSTRYBENCH_STAGES",
    "STAGE_ORDER",
    "AnswerVersion",
    "Candidate",
    "Generation",
    "SearchCall",
    "SearchService",
    "Source",
    "Stage",
    "StageDecision",
    "StageRun",
]


class Stage(models.TextChoices):
    """The stages in pipeline order: a candidate enters a stage only after passing
    every earlier stage that has been run on its benchmark.

    IndustryBench's last steps are in its order (§3.2–3.3): the release sample is
    drawn from the verified pool, then exact dedup and the dangling-reference
    check run on that sample, people review the flags, and what is left is
    released."""

    GENERATION = "generation", _("Generation")
    EXTRACT_QA = "extract_qa", _("QA extraction (forum post)")
    DEDUP = "dedup", _("Deduplication")
    QUALITY = "quality", _("Quality check")
    QA_FILTER = "qa_filter", _("QA quality filter (forum)")
    CONVERT = "convert", _("Conversion to MC / short answer")
    EXPERT = "expert", _("Expert verification")
    SEARCH = "search", _("Search verification")
    DEEP = "deep", _("Deep verification")
    RELEASE = "release", _("Release sample")
    EXACT = "exact_dedup", _("Exact dedup")
    DANGLING = "dangling", _("Dangling references")
    RELEASED = "released", _("Released")


STAGE_ORDER = [stage.value for stage in Stage]
# LPFQA's forum-to-item construction (paper 001 §3.2, construction/forum/): a
# benchmark built from forum posts runs these, dedup optional; the funnel shows
# the pipeline the benchmark's sources call for.
FORUM_STAGES = [
    Stage.EXTRACT_QA,
    Stage.DEDUP,
    Stage.QA_FILTER,
    Stage.CONVERT,
    Stage.EXPERT,
    Stage.RELEASED,
]
INDUSTRYBENCH_STAGES = [
    stage
    for stage in STAGE_ORDER
    if stage not in FORUM_STAGES or stage in (Stage.DEDUP, Stage.RELEASED)
]
# Exact dedup compares normal forms of the questions (construction.dedup): no
# setting, one version.
EXACT_VERSION = "exact-question"


class Source(models.Model):
    """One source document excerpt: a GB/T standard clause or a product record;
    or a forum post (LPFQA), its metadata — time, views, replies, votes, its
    screenshots — in `fields` (construction.forum.posts)."""

    class Kind(models.TextChoices):
        GBT_STANDARD = "gbt_standard", _("GB/T standard")
        PRODUCT_RECORD = "product_record", _("Product record")
        FORUM_POST = "forum_post", _("Forum post")

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="sources"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    reference = models.CharField(
        max_length=300,
        help_text=_("Standard id + edition + clause, or platform category + record id"),
    )
    text = models.TextField(help_text=_("The excerpt, or the record's OCR text"))
    fields = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("source"), _("sources")
        ordering = ["benchmark", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "content_hash"], name="one_source_per_content"
            )
        ]

    def __str__(self):
        return f"{self.get_kind_display()} {self.reference}"


class StageRun(Run):
    """One run of one construction stage over a benchmark's sources or candidates,
    moved through its states by judging.runs.lifecycle. Generation and quality
    runs call an endpoint with a prompt; dedup and post-processing runs call
    nothing."""

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="stage_runs"
    )
    stage = models.CharField(max_length=20, choices=Stage.choices)
    endpoint = models.ForeignKey(
        Endpoint,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_(
            "Generation, quality, search and deep verification: the chat "
            "endpoint; dedup: an "
            "/v1/embeddings endpoint (empty: offline character n-grams)"
        ),
    )
    template = models.ForeignKey(
        PromptTemplate,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    verifier_template = models.ForeignKey(
        PromptTemplate,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_(
            "Search and deep verification: the prompt that judges the results "
            "(`template` writes the queries: deep verification's, per claim); "
            "conversion: the short-answer prompt (`template` is the multiple-choice "
            "one)"
        ),
    )
    search_service = models.ForeignKey(
        SearchService,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="runs",
    )
    thinking = models.BooleanField(
        default=False,
        help_text=_(
            "Deep verification: ask in thinking mode, switched the way the "
            "endpoint declares (judging.llm.thinking)"
        ),
    )
    source_kind = models.CharField(
        max_length=20,
        choices=Source.Kind.choices,
        blank=True,
        help_text=_(
            "Generation: only sources of this kind; dedup: compare only the "
            "candidates of this source family (empty: all)"
        ),
    )
    questions_per_source = models.PositiveSmallIntegerField(default=3)
    threshold = models.FloatField(
        default=0.9, help_text=_("Dedup: cosine similarity at which two are twins")
    )
    phrases = models.TextField(
        blank=True,
        help_text=_("Dangling references: the phrases, one a line"),
    )
    trial_size = models.PositiveIntegerField(
        default=0,
        help_text=_(
            "A trial: decide only a seeded sample of this many of the "
            "stage's input (0: all of it)"
        ),
    )
    trial_seed = models.PositiveIntegerField(default=0)
    trial_units = models.JSONField(
        default=list,
        blank=True,
        help_text=_(
            "The trial's sample (candidate or source ids), drawn when it "
            "starts and kept, so a resumed trial decides the same ones"
        ),
    )
    sweep = models.JSONField(
        default=list,
        blank=True,
        help_text=_("Dedup: clusters and sample pairs at thresholds 0.95 … 0.50"),
    )
    total_units = models.PositiveIntegerField(default=0)
    cached_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)

    class Meta:
        verbose_name, verbose_name_plural = _("stage run"), _("stage runs")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.get_stage_display()} run {self.pk} on {self.benchmark}"

    @property
    def prompt_version(self) -> str:
        """The ledger's version key: the prompt for LLM stages, the method and
        threshold for dedup, the phrase list for post-processing; a second run
        with the same key decides nothing anew."""
        if self.stage == Stage.DEDUP:
            return f"{self.dedup_method}@{self.threshold:.2f}"
        if self.stage == Stage.EXACT:
            return EXACT_VERSION
        if self.stage == Stage.DANGLING:
            return f"dangling+{phrases_key(parse_phrases(self.phrases))}"
        if self.stage == Stage.SEARCH:
            return f"{self.template} + {self.verifier_template} @ {self.search_service}"
        if self.stage == Stage.CONVERT:
            return f"{self.template} + {self.verifier_template}"
        if self.stage == Stage.DEEP and self.verifier_template_id:
            mode = " thinking" if self.thinking else ""
            return (
                f"{self.template} + {self.verifier_template} @ "
                f"{self.search_service}{mode}"
            )
        return f"{self.template.name} v{self.template.version}"

    @property
    def dedup_method(self) -> str:
        """The embedding model dedup compares with: an endpoint's, or the
        offline character n-grams."""
        if self.endpoint_id:
            return f"embed:{self.endpoint.model}"[:100]
        return "char-tfidf-2-4"

    @property
    def is_trial(self) -> bool:
        return self.trial_size > 0


class Generation(models.Model):
    """The generation call for one source with one prompt version and count: ok
    (its candidates exist) or pending (the call failed or stayed unparseable; the
    reason says why). A source's generation is never a rejection."""

    class Status(models.TextChoices):
        OK = "ok", _("OK")
        PENDING = "pending", _("Pending")

    source = models.ForeignKey(
        Source, on_delete=models.CASCADE, related_name="generations"
    )
    prompt_version = models.CharField(max_length=120)
    questions = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices)
    reason = models.TextField(blank=True)
    run = models.ForeignKey(
        StageRun, null=True, on_delete=models.SET_NULL, related_name="generations"
    )
    call = models.ForeignKey(
        LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("generation"), _("generations")
        ordering = ["source", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "prompt_version", "questions"],
                name="one_generation_per_source_prompt",
            )
        ]

    def __str__(self):
        return f"{self.source} {self.prompt_version}: {self.status}"


class Candidate(models.Model):
    """A generated question with its reference answer; never an Item until it is
    released (`item` is then set)."""

    source = models.ForeignKey(
        Source, on_delete=models.CASCADE, related_name="candidates"
    )
    generation = models.ForeignKey(
        Generation,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="candidates",
    )
    position = models.PositiveSmallIntegerField(
        default=0, help_text=_("Its place in the generation reply")
    )
    question = models.TextField()
    reference_answer = models.TextField()
    knowledge_text = models.TextField(help_text=_("The source excerpt it was built on"))
    label = models.CharField(
        max_length=100,
        blank=True,
        help_text=_("Stratum for release sampling (the source's `label` field)"),
    )
    version = models.PositiveSmallIntegerField(
        default=1, help_text=_("The reference answer's version (AnswerVersion)")
    )
    form = models.JSONField(
        default=dict,
        blank=True,
        help_text=_(
            "A forum candidate's item form: the extracted explanation, then "
            "the converted format, question, options and correct letters, or answer "
            "and key points (construction.forum); an expert's edit replaces them"
        ),
    )
    item = models.OneToOneField(
        Item,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="candidate",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("candidate"), _("candidates")
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["generation", "position"], name="one_candidate_per_position"
            )
        ]

    def __str__(self):
        return f"Candidate {self.pk}"


class StageDecision(models.Model):
    """The ledger: one decision per candidate × stage × prompt version.

    A failed or unparseable call is `pending`, never `reject`: the candidate waits
    for the call to be made again."""

    class Outcome(models.TextChoices):
        PASS = "pass", _("Pass")
        REJECT = "reject", _("Reject")
        REFINE = "refine", _("Refine")
        PENDING = "pending", _("Pending")

    candidate = models.ForeignKey(
        Candidate, on_delete=models.CASCADE, related_name="decisions"
    )
    stage = models.CharField(max_length=20, choices=Stage.choices)
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    reason = models.TextField(blank=True)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=300)
    evidence = models.JSONField(default=dict, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("The person who decided; empty for an automated decision"),
    )
    run = models.ForeignKey(
        StageRun,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="decisions",
    )
    call = models.ForeignKey(
        LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("stage decision"), _("stage decisions")
        ordering = ["candidate", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["candidate", "stage", "prompt_version"],
                name="one_decision_per_stage_version",
            )
        ]
        indexes = [models.Index(fields=["stage", "outcome"])]

    def __str__(self):
        return f"{self.candidate_id} {self.stage}: {self.outcome}"


class AnswerVersion(models.Model):
    """A version of a candidate's reference answer. Version 1 is the generated
    answer, kept when deep verification refines it; each refinement adds the next
    version, written by the `refine` decision that gave it. The candidate's
    `reference_answer` is always its newest version: later stages and release
    read that."""

    candidate = models.ForeignKey(
        Candidate, on_delete=models.CASCADE, related_name="answer_versions"
    )
    version = models.PositiveSmallIntegerField()
    reference_answer = models.TextField()
    decision = models.ForeignKey(
        StageDecision,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("The refine decision that wrote it; empty for the generated one"),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("answer version"), _("answer versions")
        ordering = ["candidate", "version"]
        constraints = [
            models.UniqueConstraint(
                fields=["candidate", "version"], name="one_answer_per_version"
            )
        ]

    def __str__(self):
        return f"Candidate {self.candidate_id} answer v{self.version}"


class StageAudit(models.Model):
    """People checking a stage's automated decisions: a seeded random sample of
    one stage × prompt version's decided (not pending) decisions, answered by
    reviewers with agree / disagree. The sample is drawn once and stored."""

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="stage_audits"
    )
    stage = models.CharField(max_length=20, choices=Stage.choices)
    prompt_version = models.CharField(max_length=300)
    sample_size = models.PositiveIntegerField()
    seed = models.PositiveIntegerField(default=0)
    population = models.PositiveIntegerField(
        help_text=_("Decided decisions of the stage and version when it was drawn")
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("stage audit"), _("stage audits")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return (
            f"Audit {self.pk} of {Stage(self.stage).label.lower()} "
            f"{self.prompt_version}"
        )


class AuditItem(models.Model):
    """One sampled decision, at its place in the audit's (random) order."""

    audit = models.ForeignKey(
        StageAudit, on_delete=models.CASCADE, related_name="items"
    )
    decision = models.ForeignKey(
        StageDecision, on_delete=models.CASCADE, related_name="audit_items"
    )
    position = models.PositiveIntegerField()

    class Meta:
        verbose_name, verbose_name_plural = _("audit item"), _("audit items")
        ordering = ["audit", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["audit", "position"], name="one_audit_item_per_position"
            ),
            models.UniqueConstraint(
                fields=["audit", "decision"], name="one_audit_item_per_decision"
            ),
        ]

    def __str__(self):
        return f"{self.audit} #{self.position}"


class AuditAnswer(models.Model):
    """A reviewer's answer on an audit item: agrees with the automated verdict or
    not. Append-only: a changed mind is a new row; each reviewer's latest one
    counts."""

    item = models.ForeignKey(
        AuditItem, on_delete=models.CASCADE, related_name="answers"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    agrees = models.BooleanField()
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("audit answer"), _("audit answers")
        ordering = ["item", "id"]

    def __str__(self):
        return f"{self.reviewer} {'agrees' if self.agrees else 'disagrees'}"
