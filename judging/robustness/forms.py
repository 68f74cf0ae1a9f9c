"""The robustness page's forms: which variants to generate, an LLM variant run,
and the resources (CSV text or file)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from benchmark import formats
from judging.llm.models import Endpoint, PromptTemplate
from judging.robustness import generation
from judging.robustness.relation_labels import RELATION_LABELS

FORMAT_CHOICES = [
    (formats.MULTIPLE_CHOICE, _("Multiple choice")),
    (formats.TRUE_FALSE, _("True/false")),
]
MAX_RESOURCE_BYTES = 2 * 1024 * 1024


class GenerateForm(forms.Form):
    formats = forms.MultipleChoiceField(
        choices=FORMAT_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        initial=[c for c, _ in FORMAT_CHOICES],
        label=_("Seed formats"),
    )
    relations = forms.MultipleChoiceField(
        label=_("Relations"),
        choices=[(name, RELATION_LABELS[name]) for name in generation.DETERMINISTIC],
        widget=forms.CheckboxSelectMultiple,
        initial=list(generation.DETERMINISTIC),
    )
    sector_field = forms.ChoiceField(label=_("Sector from"))

    def __init__(self, benchmark, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = generation.sector_fields(benchmark)
        self.fields["sector_field"].choices = choices
        # The study's sectors are industries.
        if "industry" in {value for value, _ in choices}:
            self.fields["sector_field"].initial = "industry"


class VariantRunForm(forms.Form):
    relation = forms.ChoiceField(
        label=_("Relation"), choices=[(name, name) for name in generation.LLM_WRITTEN]
    )
    endpoint = forms.ModelChoiceField(
        label=_("Endpoint"), queryset=Endpoint.objects.order_by("name")
    )
    template = forms.ModelChoiceField(
        queryset=PromptTemplate.objects.filter(
            purpose=PromptTemplate.Purpose.VARIANT_WRITING
        ).order_by("name", "-version"),
        label=_("Prompt"),
    )
    formats = forms.MultipleChoiceField(
        choices=FORMAT_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        initial=[formats.TRUE_FALSE],
        label=_("Seed formats"),
    )
    sector_field = forms.ChoiceField(label=_("Sector from"))

    def __init__(self, benchmark, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = generation.sector_fields(benchmark)
        self.fields["sector_field"].choices = choices
        # The study's sectors are industries.
        if "industry" in {value for value, _ in choices}:
            self.fields["sector_field"].initial = "industry"


class ResourcesForm(forms.Form):
    text = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
        label=_("Resources (CSV: kind,language,key,value)"),
    )
    file = forms.FileField(
        required=False, label=_("…or upload a CSV file (UTF-8; replaces the text)")
    )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        if upload:
            if upload.size > MAX_RESOURCE_BYTES:
                raise forms.ValidationError(_("The file is larger than 2 MB."))
            try:
                cleaned["text"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError(_("The file is not UTF-8 text.")) from None
        if not cleaned.get("text", "").strip():
            raise forms.ValidationError(_("Write the resources or upload a CSV file."))
        return cleaned
