from django.contrib import admin, messages
from django.utils.translation import gettext_lazy, ngettext

from api.actions import do_revoke_token
from api.models import ApiToken, Webhook, WebhookDelivery
from api.webhooks.actions import do_deactivate_webhook


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Managers can see whose tokens exist and revoke one (a leaked token, a person
    who left); tokens are made on the API tokens page or by create_api_token, the
    only places that can show the secret."""

    list_display = [
        "name",
        "user",
        "visible",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "visible"]
    readonly_fields = [
        "user",
        "name",
        "visible",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description=gettext_lazy("Revoke the selected tokens"))
    def revoke(self, request, queryset):
        for token in queryset:
            do_revoke_token(token)
        messages.success(
            request,
            ngettext(
                "%(count)s token revoked.", "%(count)s tokens revoked.", len(queryset)
            )
            % {"count": len(queryset)},
        )


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    """Managers can see whose webhooks exist and where they point; the secret is
    never shown (it was shown once, to its owner)."""

    list_display = ["url", "user", "is_active", "created_at"]
    list_filter = ["is_active"]
    search_fields = ["url", "user__username"]
    fields = ["user", "url", "events", "is_active", "created_at"]
    readonly_fields = fields
    actions = ["deactivate"]

    def has_add_permission(self, request):
        return False

    @admin.action(description=gettext_lazy("Deactivate the selected webhooks"))
    def deactivate(self, request, queryset):
        for webhook in queryset:
            do_deactivate_webhook(webhook)
        messages.success(request, f"{len(queryset)} webhook(s) deactivated.")


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["pk", "webhook", "event_type", "status", "attempts", "created_at"]
    list_filter = ["status", "event_type"]
    readonly_fields = [field.name for field in WebhookDelivery._meta.fields]

    def has_add_permission(self, request):
        return False
