from django import forms
from django.utils.translation import gettext_lazy as _

from benchmark.importing import LAYOUTS
from benchmark.models import Benchmark

LAYOUT_LABELS = (
    _("Detect from the file"),
    _("IndustryBench layout (CSV or JSONL)"),
    _("Generic JSONL (a renderings object per item)"),
)


class ImportForm(forms.Form):
    file = forms.FileField(
        label=_("File"), help_text=_("CSV or JSONL, UTF-8 (a BOM is fine).")
    )
    benchmark = forms.ModelChoiceField(
        queryset=Benchmark.objects.order_by("name"),
        to_field_name="slug",
        required=False,
        label=_("Benchmark"),
        empty_label=_("— a new benchmark —"),
    )
    new_slug = forms.SlugField(
        required=False, max_length=100, label=_("New benchmark slug")
    )
    new_name = forms.CharField(required=False, max_length=200, label=_("New name"))
    update = forms.BooleanField(
        required=False,
        label=_("Update items whose id already exists"),
        help_text=_(
            "Changed text becomes a new rendering version; human label "
            "decisions are kept."
        ),
    )
    layout = forms.ChoiceField(
        choices=list(zip(LAYOUTS, LAYOUT_LABELS, strict=True)),
        initial="auto",
        label=_("Layout"),
    )

    def clean(self):
        cleaned = super().clean()
        benchmark, new_slug = cleaned.get("benchmark"), cleaned.get("new_slug")
        if benchmark and new_slug:
            raise forms.ValidationError(
                _("Choose an existing benchmark or give a new slug, not both.")
            )
        if not benchmark and not new_slug and "new_slug" not in self.errors:
            self.add_error("new_slug", _("Give a slug for the new benchmark."))
        if new_slug and Benchmark.objects.filter(slug=new_slug).exists():
            self.add_error("new_slug", _("A benchmark with this slug exists; pick it."))
        return cleaned

    @property
    def target_slug(self) -> str:
        benchmark = self.cleaned_data["benchmark"]
        return benchmark.slug if benchmark else self.cleaned_data["new_slug"]
