"""Forms for labelling runs."""

from django import forms

from benchmark.models import Benchmark
from judging.llm.models import Endpoint, PromptTemplate


class LabellingRunForm(forms.Form):
    benchmark = forms.ModelChoiceField(queryset=Benchmark.objects.all())
    annotators = forms.ModelMultipleChoiceField(
        queryset=Endpoint.objects.filter(is_active=True),
        widget=forms.CheckboxSelectMultiple,
        help_text="Two or more; the paper uses three.",
    )
    template = forms.ModelChoiceField(
        queryset=PromptTemplate.objects.filter(
            purpose=PromptTemplate.Purpose.LABELLING
        ),
        required=False,
        empty_label="Built-in default",
        label="Labelling prompt",
    )
    external_ids = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Only these items",
        help_text="External ids separated by commas, spaces or lines; empty for all.",
    )
    limit = forms.IntegerField(required=False, min_value=1, label="At most N items")
    refresh = forms.BooleanField(
        required=False, label="Make new calls instead of reusing recorded answers"
    )

    def item_filter(self) -> dict:
        spec = {}
        ids = self.cleaned_data["external_ids"].replace(",", " ").split()
        if ids:
            spec["external_ids"] = ids
        if self.cleaned_data["limit"]:
            spec["limit"] = self.cleaned_data["limit"]
        return spec


class AddAnnotatorForm(forms.Form):
    endpoint = forms.ModelChoiceField(queryset=Endpoint.objects.filter(is_active=True))
