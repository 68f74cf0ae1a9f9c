from django.contrib import admin, messages

from api.actions import do_revoke_token
from api.models import ApiToken


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

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset:
            do_revoke_token(token)
        messages.success(request, f"{len(queryset)} token(s) revoked.")
