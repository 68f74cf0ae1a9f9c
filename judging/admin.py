from django.contrib import admin, messages
from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from judging.evaluation.models import (
    AnswerGrade,
    EvaluationChunk,
    EvaluationRun,
    Judgment,
    Response,
    ScoreOverride,
)
from judging.labelling.models import (
    AnnotatorLabel,
    LabelConsensus,
    LabellingRun,
    SuggestionApplication,
)
from judging.llm.actions import do_request_endpoint_test
from judging.llm.models import Endpoint, LLMCall, PromptTemplate
from judging.robustness.models import Resource, VariantDraft, VariantRun
from judging.translation.models import (
    FaithfulnessReview,
    TranslationRun,
    TranslationTask,
)


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "model",
        "base_url",
        "api_key_env",
        "max_concurrency",
        "rpm_limit",
        "thinking_switch",
        "is_active",
        "test_status",
    ]
    list_filter = ["is_active", "thinking_switch", "test_status"]
    search_fields = ["name", "model", "base_url"]
    readonly_fields = ["test_status", "test_message", "tested_at", "created_at"]
    actions = ["test_connection"]
    # As the endpoint form: a base URL typed without a scheme means https.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    @admin.action(description=gettext_lazy("Test connection (queued to a worker)"))
    def test_connection(self, request, queryset):
        for endpoint in queryset:
            do_request_endpoint_test(endpoint)
        messages.info(request, _("Tests queued; results appear under Test status."))


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "version",
        "purpose",
        "language",
        "is_builtin",
        "created_at",
    ]
    list_filter = ["purpose", "language", "is_builtin"]
    search_fields = ["name", "text"]

    def get_readonly_fields(self, request, obj=None):
        # A version that results point at is immutable; edit it through
        # judging.actions.do_save_prompt_version, which adds the next version.
        if obj is not None and obj.is_used:
            return [field.name for field in obj._meta.fields]
        return []


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "endpoint",
        "purpose",
        "status",
        "attempts",
        "latency_ms",
        "input_tokens",
        "output_tokens",
        "cost",
        "created_at",
    ]
    list_filter = ["status", "purpose", "endpoint"]
    search_fields = ["request_hash", "raw_response", "error"]
    raw_id_fields = ["template"]
    list_select_related = ["endpoint"]

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(LabellingRun)
class LabellingRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "benchmark",
        "status",
        "origin",
        "total_calls",
        "done_calls",
        "failed_calls",
        "unparseable_calls",
        "created_at",
    ]
    list_filter = ["status", "origin", "benchmark"]
    readonly_fields = [
        "total_calls",
        "done_calls",
        "failed_calls",
        "unparseable_calls",
        "cached_calls",
        "input_tokens",
        "output_tokens",
        "cost",
    ]


@admin.register(AnnotatorLabel)
class AnnotatorLabelAdmin(admin.ModelAdmin):
    list_display = ["run", "item", "annotator", "dimension", "label", "status"]
    list_filter = ["status", "dimension", "annotator"]
    raw_id_fields = ["run", "item", "label", "call"]
    list_select_related = ["item", "annotator", "dimension", "label"]


@admin.register(LabelConsensus)
class LabelConsensusAdmin(admin.ModelAdmin):
    list_display = ["run", "item", "dimension", "outcome", "label"]
    list_filter = ["outcome", "dimension"]
    raw_id_fields = ["run", "item", "label"]
    list_select_related = ["item", "dimension", "label"]


@admin.register(SuggestionApplication)
class SuggestionApplicationAdmin(admin.ModelAdmin):
    """Read-only: applications are made and undone on the labelling run page, which
    keeps the final labels and their history consistent."""

    list_display = ["run", "applied_by", "applied_at", "undone_by", "undone_at"]
    readonly_fields = [field.name for field in SuggestionApplication._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = [
        "model_name",
        "model_category",
        "language",
        "thinking",
        "origin",
        "status",
        "benchmark",
        "created_at",
    ]
    list_filter = ["origin", "status", "language", "thinking", "benchmark"]
    search_fields = ["model_name", "model_category"]
    raw_id_fields = ["created_by"]


class ScoresReadOnly(admin.ModelAdmin):
    """Answers and verdicts change only through judging.evaluation.pipeline and
    judging.evaluation.actions (pipeline, retry, waiver, import): those record who
    and why and bump the run's scores_version, which the cached leaderboard is keyed
    by. An edit here would do neither, so the admin only shows them. (Deleting is
    left on so a whole run can be deleted with its rows.)"""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(EvaluationChunk)
class EvaluationChunkAdmin(admin.ModelAdmin):
    """Open chunks of running evaluations, to see what a run still waits for. Rows
    belong to the chunk tasks (judging.evaluation.pipeline), so they are shown, not
    edited."""

    list_display = ["run", "response_count", "created_at"]
    list_select_related = ["run"]
    readonly_fields = ["run", "response_ids", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description=gettext_lazy("responses"))
    def response_count(self, chunk):
        return len(chunk.response_ids)


@admin.register(Response)
class ResponseAdmin(ScoresReadOnly):
    list_display = ["run", "item", "trial", "status", "created_at"]
    list_filter = ["status", "run__benchmark"]
    search_fields = ["item__external_id", "text"]
    raw_id_fields = ["run", "item", "rendering", "call", "waived_by"]
    list_select_related = ["run", "item"]


@admin.register(AnswerGrade)
class AnswerGradeAdmin(ScoresReadOnly):
    list_display = ["response", "extracted", "grade"]
    list_filter = ["grade", "response__run__benchmark"]
    raw_id_fields = ["response"]
    list_select_related = ["response__run", "response__item"]


@admin.register(Judgment)
class JudgmentAdmin(ScoresReadOnly):
    list_display = [
        "response",
        "kind",
        "judge_name",
        "score",
        "safety_violation",
        "status",
    ]
    list_filter = ["kind", "status", "judge_name"]
    search_fields = ["response__item__external_id", "reason"]
    raw_id_fields = ["response", "call", "endpoint", "template"]
    list_select_related = ["response__run", "response__item"]


@admin.register(ScoreOverride)
class ScoreOverrideAdmin(ScoresReadOnly):
    """People's overrides are made on the item results page or with `manage.py
    override_score`, which keep the history and bump the run's scores_version."""

    list_display = ["response", "kind", "in_words", "user", "is_latest", "created_at"]
    list_filter = ["kind", "reverts", "is_latest"]
    search_fields = ["response__item__external_id", "reason", "user__username"]
    raw_id_fields = ["response", "user"]
    list_select_related = ["response__run", "response__item", "user"]


@admin.register(TranslationRun)
class TranslationRunAdmin(admin.ModelAdmin):
    list_display = ["benchmark", "languages", "status", "origin", "created_at"]
    list_filter = ["status", "origin", "benchmark"]
    raw_id_fields = [
        "created_by",
        "translator",
        "translation_template",
        "reviewer",
        "review_template",
    ]


@admin.register(TranslationTask)
class TranslationTaskAdmin(admin.ModelAdmin):
    list_display = ["run", "item", "language", "stage", "outcome", "updated_at"]
    list_filter = ["stage", "outcome", "language"]
    search_fields = ["item__external_id", "error"]
    raw_id_fields = ["run", "item", "rendering", "translation_call"]
    list_select_related = ["run", "item"]


@admin.register(FaithfulnessReview)
class FaithfulnessReviewAdmin(admin.ModelAdmin):
    list_display = [
        "rendering",
        "reviewer_name",
        "score",
        "preservation_passed",
        "flagged_by_score",
        "status",
    ]
    list_filter = ["status", "preservation_passed", "flagged_by_score"]
    search_fields = ["rendering__item__external_id", "reason"]
    raw_id_fields = ["rendering", "run", "call"]
    list_select_related = ["rendering__item"]


@admin.register(Resource)
class ResourceAdmin(admin.ModelAdmin):
    list_display = ["benchmark", "kind", "language", "key", "value"]
    list_filter = ["benchmark", "kind", "language"]
    search_fields = ["value"]


@admin.register(VariantRun)
class VariantRunAdmin(admin.ModelAdmin):
    """Read-only: started on the robustness page (judging.robustness.actions)."""

    list_display = ["pk", "benchmark", "relation", "endpoint", "status", "created_at"]
    list_filter = ["status", "relation"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(VariantDraft)
class VariantDraftAdmin(admin.ModelAdmin):
    """Read-only: decided in the review queue (do_review_draft)."""

    list_display = ["seed", "relation", "status", "reviewed_by", "reviewed_at"]
    list_filter = ["status", "relation"]
    raw_id_fields = ["seed", "variant", "call", "run"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
