from django.contrib import admin

from annotation.models import (
    AdjudicationLabel,
    Assignment,
    Campaign,
    GradingLabel,
    ReviewDecision,
    Task,
)


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "status", "overlap", "benchmark", "created_at"]
    list_filter = ["kind", "status", "benchmark"]
    search_fields = ["name"]
    raw_id_fields = ["created_by"]
    filter_horizontal = ["assignees"]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["campaign", "item", "position", "label_count", "assigned_to"]
    list_filter = ["campaign__kind", "campaign"]
    search_fields = ["item__external_id"]
    raw_id_fields = [
        "campaign",
        "item",
        "response",
        "rendering",
        "consensus",
        "assigned_to",
    ]
    list_select_related = ["campaign", "item", "assigned_to"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["task", "user", "status", "claimed_at", "expires_at", "finished_at"]
    list_filter = ["status", "campaign"]
    search_fields = ["user__username", "task__item__external_id"]
    raw_id_fields = ["task", "user", "campaign"]
    list_select_related = ["task__item", "user"]


class LabelAdmin(admin.ModelAdmin):
    """Submitted labels are immutable records: the admin shows them read-only."""

    list_filter = ["is_latest", "task__campaign"]
    search_fields = ["user__username", "task__item__external_id"]
    list_select_related = ["task__item", "user"]

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(GradingLabel)
class GradingLabelAdmin(LabelAdmin):
    list_display = [
        "task",
        "user",
        "score",
        "safety_violation",
        "is_latest",
        "created_at",
    ]


@admin.register(AdjudicationLabel)
class AdjudicationLabelAdmin(LabelAdmin):
    list_display = ["task", "user", "label", "is_latest", "created_at"]


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(LabelAdmin):
    list_display = ["task", "user", "decision", "is_latest", "created_at"]
