from django import forms
from django.contrib import admin

from construction.models import SearchService
from construction.search.adapters import adapter_choices


class SearchServiceForm(forms.ModelForm):
    # The registry, not a migration, lists the adapters.
    adapter = forms.ChoiceField(choices=adapter_choices)

    class Meta:
        model = SearchService
        fields = [
            "name",
            "adapter",
            "base_url",
            "api_key_env",
            "max_concurrency",
            "is_active",
        ]


@admin.register(SearchService)
class SearchServiceAdmin(admin.ModelAdmin):
    """Search services are set up here or with `manage.py add_search_service`;
    SearchService.clean() checks the adapter, the key variable's name and the
    host."""

    form = SearchServiceForm
    list_display = [
        "name",
        "adapter",
        "base_url",
        "api_key_env",
        "max_concurrency",
        "is_active",
    ]
