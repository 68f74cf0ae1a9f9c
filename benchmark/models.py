import os

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from benchmark import formats
from benchmark.notes import Note, translated


class Benchmark(models.Model):
    class KappaWeights(models.TextChoices):
        # The IndustryBench paper's κw (Table 6, 0.798) is linear-weighted.
        LINEAR = "linear", _("Linear, |i − j| (IndustryBench)")
        QUADRATIC = "quadratic", _("Quadratic, (i − j)²")

    class ScoringScale(models.TextChoices):
        RUBRIC_0_3 = "rubric_0_3", _("0–3 rubric (IndustryBench)")
        BINARY = "binary", _("Binary: correct or not")

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    version = models.CharField(max_length=50, default="1.0")
    description = models.TextField(blank=True)
    source_language = models.CharField(max_length=8, default="zh")
    target_languages = models.JSONField(default=list, blank=True)
    is_demo = models.BooleanField(
        default=False, help_text=_("Demo data: shown with a banner in the UI.")
    )
    kappa_weights = models.CharField(
        max_length=10,
        choices=KappaWeights.choices,
        default=KappaWeights.LINEAR,
        help_text=_("The weighted κ every agreement report headlines (with its CI)."),
    )
    scoring_scale = models.CharField(
        max_length=12,
        choices=ScoringScale.choices,
        default=ScoringScale.RUBRIC_0_3,
        help_text=_(
            "How a response to an item is graded: 0–3 against the rubric, or "
            "correct / incorrect (LPFQA's key points, multiple choice)."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("benchmark"), _("benchmarks")
        ordering = ["name"]
        permissions = [
            ("manage_benchmark", "Can import items, start LLM runs and read reports"),
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"

    @property
    def languages(self) -> list[str]:
        return [self.source_language, *self.target_languages]


class LabelDimension(models.Model):
    """An axis items are labelled on (capability, industry, …), with ordered labels."""

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="dimensions"
    )
    code = models.SlugField(max_length=50)
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        verbose_name, verbose_name_plural = _("label dimension"), _("label dimensions")
        ordering = ["benchmark", "position", "code"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "code"], name="unique_dimension_code"
            )
        ]

    def __str__(self):
        return self.name


class Label(models.Model):
    dimension = models.ForeignKey(
        LabelDimension, on_delete=models.CASCADE, related_name="labels"
    )
    code = models.SlugField(max_length=50)
    name = models.CharField(max_length=200)
    definition = models.TextField(blank=True)
    aliases = models.JSONField(
        default=list,
        blank=True,
        help_text=_(
            "Other names a file may use for this label (earlier names, "
            "other languages); matched like the name"
        ),
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        verbose_name, verbose_name_plural = _("label"), _("labels")
        ordering = ["dimension", "position", "code"]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "code"], name="unique_label_code"
            )
        ]

    def __str__(self):
        return self.name


class Item(models.Model):
    class SourceKind(models.TextChoices):
        STANDARD = "standard", _("GB/T standard")
        PRODUCT = "product", _("Product record")
        OTHER = "other", _("Other")

    class Difficulty(models.TextChoices):
        UNSET = "", _("Unset")
        EASY = "easy", _("Easy")
        MEDIUM = "medium", _("Medium")
        HARD = "hard", _("Hard")

    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        DRAFT = "draft", _("Draft")
        RETIRED = "retired", _("Retired")

    class Format(models.TextChoices):
        OPEN = formats.OPEN, _("Open QA")
        MULTIPLE_CHOICE = formats.MULTIPLE_CHOICE, _("Multiple choice")
        TRUE_FALSE = formats.TRUE_FALSE, _("True/false")
        SHORT_ANSWER = formats.SHORT_ANSWER, _("Short answer with key points")

    # Lookups by benchmark use unique_item_external_id, which starts with it.
    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="items", db_index=False
    )
    external_id = models.CharField(max_length=128)
    source_kind = models.CharField(
        max_length=20, choices=SourceKind.choices, default=SourceKind.OTHER
    )
    source_reference = models.CharField(max_length=300, blank=True)
    knowledge_text = models.TextField(blank=True)
    domain = models.CharField(max_length=200, blank=True)
    difficulty = models.CharField(
        max_length=10, choices=Difficulty.choices, default=Difficulty.UNSET, blank=True
    )
    difficulty_provenance = models.CharField(
        max_length=200,
        blank=True,
        help_text=_("Where the difficulty came from: imported, manual or a run panel."),
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.ACTIVE
    )
    source_format = models.CharField(
        max_length=100,
        blank=True,
        help_text=_(
            "The `_format` value of the IndustryBench file the item came from; "
            "kept so that exports round-trip."
        ),
    )
    # The answer key is the same in every language, so it is stored once, here; the
    # option texts and key points are translated text and live on each Rendering
    # (benchmark.formats says why and holds the rules both must meet).
    format = models.CharField(
        max_length=20, choices=Format.choices, default=Format.OPEN
    )
    correct_options = models.JSONField(
        default=list,
        blank=True,
        help_text=_("Multiple choice: the correct option letters (A–G), in order."),
    )
    multiple_answers = models.BooleanField(
        default=False,
        help_text=_(
            "Multiple choice: the answer is a set of options (choose all that "
            "apply), not exactly one."
        ),
    )
    correct_answer = models.BooleanField(
        null=True, blank=True, help_text=_("True/false: whether the statement is true.")
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name, verbose_name_plural = _("item"), _("items")
        ordering = ["benchmark", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "external_id"], name="unique_item_external_id"
            )
        ]

    def __str__(self):
        return self.external_id


# ITEM_FK_NOTE: Rendering, FinalLabel and ItemEvent point at their item without a
# database-level foreign key. PostgreSQL checks such a key with one trigger query per
# inserted row at commit; an import writes seven of these rows per item, and those
# checks were 40 % of the database's CPU for a 100,000-item import (17.3 s → 10.1 s
# without them, docs/BENCHMARKS.md). The rows are only ever written for an item the
# writer has just created or loaded, and deleting an item goes through Django, whose
# collector deletes them first (on_delete=CASCADE), so the key guarded only against a
# row written for an item deleted at that same moment.


class Rendering(models.Model):
    """One version of an item's question and reference answer in one language.

    Editing never updates a row: it adds version n+1 and moves `is_current`, so the
    history of every text is kept and results can point at the exact version they saw.
    """

    class Origin(models.TextChoices):
        SOURCE = "source", _("Source")
        IMPORTED = "imported", _("Imported translation")
        MACHINE = "machine", _("Machine translation")
        HUMAN_EDITED = "human_edited", _("Human edited")

    class ReviewStatus(models.TextChoices):
        APPROVED = "approved", _("Approved")
        PENDING = "pending", _("Pending review")
        FLAGGED = "flagged", _("Flagged for review")
        REJECTED = "rejected", _("Rejected")

    # Every index on Rendering is paid 4 times per imported item: lookups by item use
    # unique_rendering_version, which starts with it; who created a version is only
    # shown, never searched. No trigram index for the search: see docs/BENCHMARKS.md.
    # No database-level foreign key to Item either (ITEM_FK_NOTE below).
    item = models.ForeignKey(
        Item,
        on_delete=models.CASCADE,
        related_name="renderings",
        db_index=False,
        db_constraint=False,
    )
    language = models.CharField(max_length=8)
    version = models.PositiveIntegerField(default=1)
    is_current = models.BooleanField(default=True)
    question = models.TextField()
    answer = models.TextField()
    origin = models.CharField(max_length=20, choices=Origin.choices)
    review_status = models.CharField(
        max_length=20, choices=ReviewStatus.choices, default=ReviewStatus.APPROVED
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        db_index=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)
    # Translated with the question and versioned with it: a reworded option is a new
    # version of the text. Option order is the list order (A, B, …); the item's
    # answer key names options by letter, so every language keeps that order.
    options = models.JSONField(
        default=list,
        blank=True,
        help_text=_("Multiple choice: the option texts, A first."),
    )
    key_points = models.JSONField(
        default=list,
        blank=True,
        help_text=_(
            "Short answer: the knowledge points a correct answer must contain."
        ),
    )

    class Meta:
        verbose_name, verbose_name_plural = _("rendering"), _("renderings")
        ordering = ["item", "language", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "language", "version"], name="unique_rendering_version"
            ),
            models.UniqueConstraint(
                fields=["item", "language"],
                condition=Q(is_current=True),
                name="one_current_rendering_per_language",
            ),
        ]

    def __str__(self):
        return f"{self.item.external_id} [{self.language}] v{self.version}"


class FinalLabel(models.Model):
    class Provenance(models.TextChoices):
        IMPORTED = "imported", _("Imported")
        FULL_CONSENSUS = "full_consensus", _("Three-model full consensus")
        MAJORITY = "majority", _("Model majority")
        ADJUDICATED = "adjudicated", _("Adjudicated")
        MANUAL = "manual", _("Manual")

    # Final labels are read per item or per benchmark (joined through the item), both
    # served by one_final_label_per_dimension; the other foreign keys are never the
    # way in, so they carry no index that every import would have to fill.
    item = models.ForeignKey(
        Item,
        on_delete=models.CASCADE,
        related_name="final_labels",
        db_index=False,
        db_constraint=False,  # ITEM_FK_NOTE
    )
    dimension = models.ForeignKey(
        LabelDimension, on_delete=models.CASCADE, db_index=False
    )
    label = models.ForeignKey(Label, on_delete=models.PROTECT, db_index=False)
    provenance = models.CharField(max_length=20, choices=Provenance.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        db_index=False,
    )
    decided_at = models.DateTimeField(auto_now=True)
    note = models.TextField(blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("final label"), _("final labels")
        ordering = ["item", "dimension__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "dimension"], name="one_final_label_per_dimension"
            )
        ]

    def __str__(self):
        return f"{self.item.external_id} {self.dimension.code}={self.label.code}"

    @property
    def is_human_decision(self) -> bool:
        return self.provenance in {self.Provenance.ADJUDICATED, self.Provenance.MANUAL}


class ItemEvent(models.Model):
    """Append-only history of an item: imports, edits, label decisions, reviews.

    `summary` is English (the admin, the REST API); `summary_note` holds the same
    sentence as a Note's msgid and values (benchmark.notes), so the item's page
    shows it in the reader's language. Events recorded before there were Notes
    have none and show their English summary as recorded."""

    item = models.ForeignKey(
        Item,
        on_delete=models.CASCADE,
        related_name="events",
        db_constraint=False,  # ITEM_FK_NOTE
    )
    kind = models.CharField(max_length=50)
    summary = models.CharField(max_length=500)
    summary_note = models.JSONField(null=True, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # History is read per item only (the item page); an import writes one event per
    # item, so no other index.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        db_index=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("item event"), _("item events")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.item.external_id}: {self.summary}"

    @staticmethod
    def summary_fields(summary: Note | str) -> dict:
        """`summary` and `summary_note` of an event from one Note (a plain text,
        such as a caller's own, is stored as it is, with no Note)."""
        note = summary.as_json() if isinstance(summary, Note) else None
        return {"summary": str(summary)[:500], "summary_note": note}

    @property
    def shown_summary(self) -> str:
        """The summary in the active language, or as recorded when it has no
        Note."""
        return translated(self.summary_note) if self.summary_note else self.summary


class ItemSubset(models.Model):
    """A saved, named set of a benchmark's items that reports can be computed on
    (LPFQA⁻: the items some model solved; LPFQA⁼: also not every model). Saved
    once and never edited, so a table computed on it can be computed again; the
    rule and what it was derived from are kept beside the item ids."""

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="subsets"
    )
    name = models.SlugField(max_length=100)
    rule = models.CharField(max_length=50)
    description = models.TextField()
    # Sorted item ids: what the reports filter on.
    item_ids = models.JSONField()
    # What the rule was applied to: runs (ids and labels), the solved threshold.
    derived_from = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("item subset"), _("item subsets")
        ordering = ["benchmark", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "name"], name="unique_subset_name"
            )
        ]

    def __str__(self):
        return f"{self.name} ({len(self.item_ids)} items)"


class ItemVariant(models.Model):
    """An item written from a seed item by a metamorphic relation (the robustness
    study): the same benchmark's item, whose answer key is the seed's after the
    relation's expected change (judging/evaluation/relations.py). One variant per
    seed and relation, so generating again creates nothing."""

    item = models.OneToOneField(
        Item, on_delete=models.CASCADE, related_name="variant_of"
    )
    seed = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="variants")
    relation = models.CharField(max_length=40)
    # The seed's sector as the generation read it (a label or the item's domain).
    sector = models.CharField(max_length=200, blank=True)
    # Order and irrelevant content: the seed option shown at each of the variant's
    # positions, -1 for an added one; empty for the other relations.
    option_map = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("item variant"), _("item variants")
        ordering = ["seed", "relation"]
        constraints = [
            models.UniqueConstraint(
                fields=["seed", "relation"], name="one_variant_per_seed_relation"
            )
        ]

    def __str__(self):
        return f"{self.relation} variant of {self.seed_id}"


class ImportUploadStorage(FileSystemStorage):
    """Uploads waiting for a worker, in IMPORT_UPLOAD_DIR as set when used (the
    storage object itself is made when models load)."""

    @property
    def base_location(self):
        return settings.IMPORT_UPLOAD_DIR

    @property
    def location(self):
        return os.path.abspath(self.base_location)


def import_upload_storage():
    return ImportUploadStorage()


class ImportJob(models.Model):
    """An uploaded file too large to import in the request, imported by a worker.

    The worker imports it in one transaction that also holds this row locked, so the
    job is `queued` until the import commits or is rejected; progress while it runs
    lives in the cache (see benchmark.import_jobs).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        DONE = "done", _("Imported")
        REJECTED = "rejected", _("Rejected")
        FAILED = "failed", _("Failed")

    file = models.FileField(storage=import_upload_storage, blank=True)
    filename = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField(default=0)
    slug = models.SlugField(max_length=100, help_text=_("The target benchmark."))
    new_name = models.CharField(max_length=200, blank=True)
    update = models.BooleanField(default=False)
    layout = models.CharField(max_length=20, default="auto")
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED
    )
    summary_lines = models.JSONField(default=list, blank=True)
    problems = models.JSONField(
        default=list, blank=True, help_text=_("The first 100: line, field, message.")
    )
    problem_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("import job"), _("import jobs")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.filename} → {self.slug} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status != self.Status.QUEUED


class SsoIdentity(models.Model):
    """The single sign-on provider's subject (`sub`) a user signs in as.

    `sub` is the provider's stable id for a person; email and names can change or be
    reused, so a returning person is found by it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    subject = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("SSO identity"), _("SSO identities")

    def __str__(self):
        return f"{self.user} ← {self.subject}"


class AccountPreference(models.Model):
    """What a person chose for their own account: the interface language.

    A blank language means "my browser's": Accept-Language (or the language
    cookie) decides, as for someone not signed in."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="account_preference",
    )
    # One of settings.LANGUAGES' codes, checked by
    # benchmark.language.check_interface_language (no choices: the list is a setting).
    interface_language = models.CharField(max_length=10, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = (
            _("account preference"),
            _("account preferences"),
        )

    def __str__(self):
        return f"{self.user}: {self.interface_language or 'browser'}"
