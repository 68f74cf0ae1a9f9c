"""Forms for labelling runs."""

from django import forms
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark
from judging.llm.models import Endpoint, PromptTemplate
from judging.runs.forms import ItemFilterForm


class LabellingRunForm(ItemFilterForm):
    field_order = [
        "benchmark",
        "annotators",
        "template",
        "external_ids",
        "limit",
        "refresh",
    ]

    benchmark = forms.ModelChoiceField(
        label=_("Benchmark"), queryset=Benchmark.objects.all()
    )
    annotators = forms.ModelMultipleChoiceField(
        label=_("Annotators"),
        queryset=Endpoint.objects.filter(is_active=True),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Two or more; the paper uses three."),
    )
    template = forms.ModelChoiceField(
        queryset=PromptTemplate.objects.filter(
            purpose=PromptTemplate.Purpose.LABELLING
        ),
        required=False,
        empty_label=_("Built-in default"),
        label=_("Labelling prompt"),
    )
    refresh = forms.BooleanField(
        required=False, label=_("Make new calls instead of reusing recorded answers")
    )


class AddAnnotatorForm(forms.Form):
    endpoint = forms.ModelChoiceField(
        label=_("Endpoint"), queryset=Endpoint.objects.filter(is_active=True)
    )
