from django.contrib import admin

from benchmark.models import (
    AccountPreference,
    Benchmark,
    FinalLabel,
    ImportJob,
    Item,
    ItemEvent,
    ItemSubset,
    ItemVariant,
    Label,
    LabelDimension,
    Rendering,
    SsoIdentity,
)


class LabelDimensionInline(admin.TabularInline):
    model = LabelDimension
    extra = 0


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "version",
        "source_language",
        "scoring_scale",
        "is_demo",
        "created_at",
    ]
    list_filter = ["is_demo", "source_language", "scoring_scale"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [LabelDimensionInline]


class LabelInline(admin.TabularInline):
    model = Label
    extra = 0


@admin.register(LabelDimension)
class LabelDimensionAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "benchmark", "position"]
    list_filter = ["benchmark"]
    search_fields = ["code", "name"]
    inlines = [LabelInline]


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "dimension", "position"]
    list_filter = ["dimension__benchmark", "dimension"]
    search_fields = ["code", "name", "definition"]


class RenderingInline(admin.StackedInline):
    model = Rendering
    extra = 0
    fields = [
        "language",
        "version",
        "is_current",
        "origin",
        "review_status",
        "question",
        "answer",
        "options",
        "key_points",
    ]
    # Options and key points are checked against the item's answer key on import
    # (benchmark.formats); a form here would write them unchecked.
    readonly_fields = ["version", "options", "key_points"]


class FinalLabelInline(admin.TabularInline):
    model = FinalLabel
    extra = 0
    raw_id_fields = ["label", "decided_by"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = [
        "external_id",
        "benchmark",
        "source_kind",
        "source_reference",
        "format",
        "difficulty",
        "status",
        "updated_at",
    ]
    list_filter = [
        "benchmark",
        "format",
        "source_kind",
        "difficulty",
        "status",
        "source_format",
    ]
    # Set by import, where benchmark.formats checks them against the options.
    readonly_fields = [
        "format",
        "correct_options",
        "multiple_answers",
        "correct_answer",
    ]
    search_fields = [
        "external_id",
        "source_reference",
        "knowledge_text",
        "renderings__question",
    ]
    list_select_related = ["benchmark"]
    inlines = [RenderingInline, FinalLabelInline]


@admin.register(Rendering)
class RenderingAdmin(admin.ModelAdmin):
    list_display = [
        "item",
        "language",
        "version",
        "is_current",
        "origin",
        "review_status",
        "created_at",
    ]
    list_filter = [
        "language",
        "is_current",
        "origin",
        "review_status",
        "item__benchmark",
    ]
    search_fields = ["item__external_id", "question", "answer"]
    raw_id_fields = ["item", "created_by"]
    list_select_related = ["item"]


@admin.register(FinalLabel)
class FinalLabelAdmin(admin.ModelAdmin):
    list_display = [
        "item",
        "dimension",
        "label",
        "provenance",
        "decided_by",
        "decided_at",
    ]
    list_filter = ["provenance", "dimension__benchmark", "dimension"]
    search_fields = ["item__external_id", "label__code"]
    raw_id_fields = ["item", "label", "decided_by"]
    list_select_related = ["item", "dimension", "label", "decided_by"]


@admin.register(ItemEvent)
class ItemEventAdmin(admin.ModelAdmin):
    list_display = ["item", "kind", "summary", "user", "created_at"]
    list_filter = ["kind"]
    search_fields = ["item__external_id", "summary"]
    raw_id_fields = ["item", "user"]
    list_select_related = ["item", "user"]


@admin.register(ItemSubset)
class ItemSubsetAdmin(admin.ModelAdmin):
    """Read-only: a saved subset never changes (tables computed on it can be
    redone); it is derived on the Item subsets page or by `derive_subset`."""

    list_display = ["name", "benchmark", "rule", "created_by", "created_at"]
    list_filter = ["benchmark", "rule"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ItemVariant)
class ItemVariantAdmin(admin.ModelAdmin):
    """Read-only: variants are generated on the robustness page (or approved in
    its review queue), never typed in."""

    list_display = ["item", "seed", "relation", "sector", "created_at"]
    list_filter = ["relation"]
    search_fields = ["item__external_id", "seed__external_id"]
    raw_id_fields = ["item", "seed"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(SsoIdentity)
class SsoIdentityAdmin(admin.ModelAdmin):
    """Read-only: the link between an identity provider's subject and a user is made
    at sign-in (benchmark.actions.do_sign_in_sso_user), never by hand."""

    list_display = ["user", "subject", "created_at"]
    search_fields = ["user__username", "subject"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["filename", "slug", "status", "size", "created_by", "created_at"]
    list_filter = ["status"]
    search_fields = ["filename", "slug"]
    readonly_fields = ["summary_lines", "problems", "problem_total", "error"]


@admin.register(AccountPreference)
class AccountPreferenceAdmin(admin.ModelAdmin):
    """Read-only: a person chooses their interface language themselves (sign-in,
    header switch, preferences page)."""

    list_display = ["user", "interface_language"]
    search_fields = ["user__username"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
