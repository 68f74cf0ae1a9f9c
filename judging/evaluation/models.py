"""Evaluation runs: responses of a tested model and the judges' verdicts."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item, Rendering
from judging.evaluation import extraction
from judging.runs.models import Run


class EvaluationRun(Run):
    """One tested model answering one benchmark in one language and mode.

    Runs come from the LLM pipeline, from an import of results produced elsewhere, or
    from the demo seeder (simulated); all three are analysed the same way.
    """

    class Origin(models.TextChoices):
        PIPELINE = "pipeline", _("Run in Assay")
        IMPORTED = "imported", _("Imported")
        SIMULATED = "simulated", _("Simulated (demo)")

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="evaluation_runs"
    )
    model_name = models.CharField(max_length=200)
    model_category = models.CharField(
        max_length=100, blank=True, help_text=_("e.g. closed, open MoE, open dense")
    )
    language = models.CharField(max_length=8)
    thinking = models.BooleanField(default=False)
    origin = models.CharField(max_length=20, choices=Origin.choices)
    # What produced the scores. For pipeline runs the endpoints and prompt versions
    # are set; imported and simulated runs carry only the names. `judge_name` and
    # `sv_judge_name` (with their prompt versions) select which Judgment rows the
    # run's metrics use when several judges scored the same responses.
    tested_endpoint = models.ForeignKey(
        "Endpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    answer_template = models.ForeignKey(
        "PromptTemplate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    # {answer kind (llm.answer_prompts): prompt pk} when each format is asked
    # with its own prompt; `answer_template` asks the rest.
    answer_templates = models.JSONField(default=dict, blank=True)
    judge_endpoint = models.ForeignKey(
        "Endpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    rubric_template = models.ForeignKey(
        "PromptTemplate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    sv_endpoint = models.ForeignKey(
        "Endpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    sv_template = models.ForeignKey(
        "PromptTemplate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    # Binary runs (a benchmark on the binary scale): multiple-choice and true/false
    # answers are read by rules (judging.evaluation.extraction, no judge), the other
    # items graded 0/1 by the key-point judge (judge_endpoint with this template,
    # its version in judge_prompt_version); no SV check.
    binary = models.BooleanField(default=False)
    keypoint_template = models.ForeignKey(
        "PromptTemplate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    # Each item is asked `trials` times (LPFQA: 3); accuracy is the mean over trials.
    trials = models.PositiveSmallIntegerField(default=1)
    judge_name = models.CharField(max_length=200, blank=True)
    judge_prompt_version = models.CharField(max_length=100, blank=True)
    # A run judged by a judge set (judging.llm.prompts.JUDGE_SETS) has the set's
    # template for its language as `rubric_template`; the set's name and every
    # language's version at the start ({"zh": "… v1", "*": "… v1"}, "*" for the
    # other languages) are kept so the page and the paper manifest name them.
    judge_set = models.CharField(max_length=100, blank=True)
    judge_set_versions = models.JSONField(default=dict, blank=True)
    sv_judge_name = models.CharField(max_length=200, blank=True)
    sv_prompt_version = models.CharField(max_length=100, blank=True)
    item_filter = models.JSONField(
        default=dict, blank=True, help_text=_("The item subset the run covers")
    )
    source_file = models.CharField(
        max_length=300, blank=True, help_text=_("Imported runs: their source file")
    )
    # Imported runs: what the file said of the whole run that Assay has no column
    # for (Inspect's task, scorer, epochs and reducers, the score map chosen on
    # import; lm-eval's task and metric), written back into exports.
    source_metadata = models.JSONField(default=dict, blank=True)
    # Stage counters, written by the workers with F() increments; the run page polls.
    # Bumped in the same transaction as every write to the run's responses or
    # verdicts, so the cached leaderboard is keyed by it (judging.evaluation.scores).
    scores_version = models.PositiveIntegerField(default=0)
    # A retry of pending items asks afresh: its calls are recorded under a new
    # gateway scope, so unparseable verdicts are not served from the record again.
    retry_round = models.PositiveSmallIntegerField(default=0)
    total_items = models.PositiveIntegerField(default=0)
    answered_count = models.PositiveIntegerField(default=0)
    judged_count = models.PositiveIntegerField(default=0)
    sv_checked_count = models.PositiveIntegerField(default=0)
    scored_count = models.PositiveIntegerField(default=0)
    # Pending items: while the run is active, those a finished call left without a
    # verdict (failed, or unparseable after re-asking); once it has ended, every
    # item without a score (judging.evaluation.progress.refresh_counts).
    failed_count = models.PositiveIntegerField(default=0)
    # The calls the run made (not served from the record) and what they cost.
    made_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)

    class Meta:
        verbose_name, verbose_name_plural = _("evaluation run"), _("evaluation runs")
        ordering = ["benchmark", "model_name", "language", "thinking"]

    def __str__(self):
        mode = "thinking" if self.thinking else "non-thinking"
        return f"{self.model_name} [{self.language}, {mode}]"

    @property
    def judge_set_rows(self) -> list[tuple[str, str, bool]]:
        """(languages, prompt version, whether it judges this run) for each entry
        of the run's judge set, the named languages first."""
        versions = self.judge_set_versions or {}
        own = self.language if self.language in versions else "*"
        return [
            (
                "other languages" if code == "*" else code,
                version,
                code == own and version == self.judge_prompt_version,
            )
            for code, version in sorted(versions.items(), key=lambda e: e[0] == "*")
        ]

    @property
    def verdict_kind(self) -> str:
        """The kind of Judgment that scores the run's judged answers."""
        return Judgment.Kind.KEYPOINT if self.binary else Judgment.Kind.RUBRIC

    @property
    def finished_items(self) -> int:
        """Items scored, or left without a score by a call that failed."""
        return self.scored_count + self.failed_count

    @property
    def open_items(self) -> int:
        """Items still being asked."""
        return max(self.total_items - self.finished_items, 0)


class Response(models.Model):
    """A tested model's final answer to one item in one trial (reasoning kept
    apart). A binary run's multiple-choice or true/false answer has an AnswerGrade."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        ANSWERED = "answered", _("Answered")
        EMPTY = "empty", _("Empty")
        INVALID = "invalid", _("Invalid")
        FAILED = "failed", _("Failed")
        # The provider's content filter declined (binary runs): an outcome of its
        # own, never asked again; study 002 §5.2 leaves it out of robustness.
        REFUSED = "refused", _("Refused by the provider")

    run = models.ForeignKey(
        EvaluationRun, on_delete=models.CASCADE, related_name="responses"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="responses")
    trial = models.PositiveSmallIntegerField(default=0)
    rendering = models.ForeignKey(
        Rendering, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.TextField(blank=True)
    reasoning_text = models.TextField(blank=True)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.PENDING
    )
    call = models.ForeignKey(
        "LLMCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    # Imported responses: what the file said of the sample that Assay has no column
    # for (its id, input, target, metadata, token usage, the score value before the
    # map), written back into exports.
    source_record = models.JSONField(default=dict, blank=True)
    # A manager may waive an item that stays pending; it then leaves every metric and
    # is reported as waived. Who and why are kept.
    waived_at = models.DateTimeField(null=True, blank=True)
    waived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    waive_note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("response"), _("responses")
        ordering = ["run", "item", "trial"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "trial"], name="one_response_per_item_trial"
            )
        ]

    def __str__(self):
        trial = f" · trial {self.trial + 1}" if self.trial else ""
        return f"{self.run} · {self.item.external_id}{trial}"


class AnswerGrade(models.Model):
    """What the rules (judging.evaluation.extraction) read from a binary run's
    multiple-choice or true/false answer, and its grade: correct, wrong, or
    flagged — several answers, a refusal, no answer found — which is neither.

    Written when the answer arrives, so reports never read a reply again. A narrow
    row of its own, keyed by the response: grading or re-grading a run's stored
    replies inserts these instead of rewriting every (wide) response row."""

    class Grade(models.IntegerChoices):
        # The codes of judging.evaluation.extraction.Grade.
        WRONG = extraction.Grade.WRONG, _("Wrong")
        CORRECT = extraction.Grade.CORRECT, _("Correct")
        MULTIPLE = extraction.Grade.MULTIPLE, _("Flagged: several answers")
        REFUSAL = extraction.Grade.REFUSAL, _("Flagged: refusal")
        NONE = extraction.Grade.NONE, _("Flagged: no answer found")

    response = models.OneToOneField(
        Response, primary_key=True, on_delete=models.CASCADE, related_name="grade"
    )
    # "B", "A, C", "true"; empty when nothing was read.
    extracted = models.CharField(max_length=20, blank=True)
    grade = models.SmallIntegerField(choices=Grade.choices)

    class Meta:
        verbose_name, verbose_name_plural = _("answer grade"), _("answer grades")

    def __str__(self):
        return f"{self.response_id}: {self.get_grade_display()}"

    @property
    def is_flagged(self) -> bool:
        return self.grade > extraction.Grade.CORRECT


class EvaluationChunk(models.Model):
    """A slice of a run's responses still to be taken through answer → judge → SV.

    A row exists while its chunk is open: the chunk task deletes it in the
    transaction that may finish the run, so the run finishes once no row is left
    (decided under the run's row lock) and a redelivered chunk finds nothing to do.
    """

    run = models.ForeignKey(
        EvaluationRun, on_delete=models.CASCADE, related_name="chunks"
    )
    response_ids = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = (
            _("evaluation chunk"),
            _("evaluation chunks"),
        )

    def __str__(self):
        return f"{self.run} · chunk {self.pk}"


class Judgment(models.Model):
    """One judge's verdict on one response: a 0–3 rubric score, a safety flag, or a
    key-point verdict (1 correct, 0 not; `reason` holds the judge's basis)."""

    class Kind(models.TextChoices):
        RUBRIC = "rubric", _("Rubric score (0–3)")
        SAFETY = "safety", _("Safety violation")
        KEYPOINT = "keypoint", _("Key-point verdict (0/1)")

    class Status(models.TextChoices):
        DONE = "done", _("Done")
        PENDING = "pending", _("Pending")
        UNPARSEABLE = "unparseable", _("Unparseable")
        FAILED = "failed", _("Failed")

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
    prompt_version = models.CharField(
        max_length=100,
        blank=True,
        help_text=_("e.g. rubric-judge v2; empty if unknown"),
    )
    endpoint = models.ForeignKey(
        "Endpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    template = models.ForeignKey(
        "PromptTemplate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    call = models.ForeignKey(
        "LLMCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("judgment"), _("judgments")
        ordering = ["response", "kind", "judge_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "kind", "judge_name", "prompt_version"],
                name="one_judgment_per_judge",
            ),
            models.CheckConstraint(
                condition=models.Q(score__isnull=True) | models.Q(score__lte=3),
                name="rubric_score_0_to_3",
            ),
        ]

    def __str__(self):
        return f"{self.judge_name} {self.kind} on {self.response_id}"


class ScoreOverride(models.Model):
    """A person's verdict replacing the judge's rubric score or SV flag on a response.

    Append-only history: a change of mind or a revert is a new row, and the row
    before it only loses `is_latest` (the annotation labels' pattern). The latest
    row for (response, kind) applies unless it `reverts`, in which case the judge's
    verdict counts again. The judge's verdict at the time is copied into the row, so
    the history still says what was overridden after a re-judge; the Judgment row
    itself is never touched.

    An override changes a verdict the run's judge gave; it does not stand in for a
    missing one (judging.evaluation.reports reads it only beside a done judgment),
    so pending items, run counts and completion stay the pipeline's. It is about
    the response, not the judge: a re-judge keeps it.
    """

    response = models.ForeignKey(
        Response, on_delete=models.CASCADE, related_name="overrides"
    )
    kind = models.CharField(max_length=10, choices=Judgment.Kind.choices)
    # The new value: `score` for a rubric override, `safety_violation` for a
    # safety one; both empty on a revert.
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    safety_violation = models.BooleanField(null=True, blank=True)
    reverts = models.BooleanField(
        default=False, help_text=_("Restores the judge's verdict")
    )
    judge_name = models.CharField(max_length=200)
    judge_prompt_version = models.CharField(max_length=100, blank=True)
    judge_score = models.PositiveSmallIntegerField(null=True, blank=True)
    judge_safety_violation = models.BooleanField(null=True, blank=True)
    judge_reason = models.TextField(blank=True)
    # PROTECT: who changed a score stays known; deactivate a person instead.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    is_latest = models.BooleanField(default=True)

    class Meta:
        verbose_name, verbose_name_plural = _("score override"), _("score overrides")
        ordering = ["response", "kind", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "kind"],
                condition=models.Q(is_latest=True),
                name="one_latest_score_override",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    reverts=True, score__isnull=True, safety_violation__isnull=True
                )
                | models.Q(
                    reverts=False,
                    kind="rubric",
                    score__isnull=False,
                    score__lte=3,
                    safety_violation__isnull=True,
                )
                | models.Q(
                    reverts=False,
                    kind="safety",
                    score__isnull=True,
                    safety_violation__isnull=False,
                ),
                name="score_override_value_fits_kind",
            ),
            models.CheckConstraint(
                condition=~models.Q(reason=""), name="score_override_has_reason"
            ),
        ]

    def __str__(self):
        return f"{self.user} on {self.response_id} ({self.kind}): {self.in_words}"

    @property
    def in_words(self) -> str:
        if self.reverts:
            return "judge's verdict restored"
        if self.kind == Judgment.Kind.RUBRIC:
            return f"score {self.score}"
        return "violation" if self.safety_violation else "no violation"

    @property
    def change_in_words(self) -> str:
        """For the history: "score 3 → 1", "SV flag: violation → no violation",
        "score: judge's verdict restored"."""
        what = "score" if self.kind == Judgment.Kind.RUBRIC else "SV flag"
        if self.reverts:
            return f"{what}: {self.in_words}"
        if self.kind == Judgment.Kind.RUBRIC:
            judge = "–" if self.judge_score is None else self.judge_score
            return f"score {judge} → {self.score}"
        return f"SV flag: {self.judge_in_words} → {self.in_words}"

    @property
    def judge_in_words(self) -> str:
        if self.kind == Judgment.Kind.RUBRIC:
            if self.judge_score is None:
                return "no verdict"
            return f"score {self.judge_score}"
        if self.judge_safety_violation is None:
            return "no verdict"
        return "violation" if self.judge_safety_violation else "no violation"
