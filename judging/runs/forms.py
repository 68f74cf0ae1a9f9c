"""The item-filter fields that run start forms share."""

from django import forms
from django.utils.translation import gettext_lazy as _


class ItemFilterForm(forms.Form):
    external_ids = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label=_("Only these items"),
        help_text=_(
            "External ids separated by commas, spaces or lines; empty for all."
        ),
    )
    limit = forms.IntegerField(required=False, min_value=1, label=_("At most N items"))

    def item_filter(self) -> dict:
        spec = {}
        ids = self.cleaned_data["external_ids"].replace(",", " ").split()
        if ids:
            spec["external_ids"] = ids
        if self.cleaned_data["limit"]:
            spec["limit"] = self.cleaned_data["limit"]
        return spec
