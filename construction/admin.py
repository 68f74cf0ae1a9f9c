from django.contrib import admin

from construction.models import SearchService


@admin.register(SearchService)
class SearchServiceAdmin(admin.ModelAdmin):
    """Search services are set up here or with `manage.py add_search_service`;
    model.clean() checks the adapter, the key variable's name and the host."""

    list_display = ["name", "adapter", "base_url", "api_key_env", "is_active"]
