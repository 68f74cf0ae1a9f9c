"""The form a manager fills in to start a translation run."""

from django import forms
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark
from benchmark.taxonomy import ENGLISH_LANGUAGE_NAMES
from judging.llm.models import Endpoint, PromptTemplate
from judging.runs.forms import ItemFilterForm


class TranslationRunForm(ItemFilterForm):
    field_order = [
        "benchmark",
        "languages",
        "translator",
        "translation_template",
        "reviewer",
        "review_template",
        "approve_threshold",
        "external_ids",
        "limit",
        "overwrite_machine",
    ]

    benchmark = forms.ModelChoiceField(
        label=_("Benchmark"), queryset=Benchmark.objects.all()
    )
    languages = forms.MultipleChoiceField(
        choices=[
            (code, name)
            for code, name in ENGLISH_LANGUAGE_NAMES.items()
            if code != "zh"
        ],
        widget=forms.CheckboxSelectMultiple,
        label=_("Target languages"),
    )
    translator = forms.ModelChoiceField(
        label=_("Translator"), queryset=Endpoint.objects.filter(is_active=True)
    )
    translation_template = forms.ModelChoiceField(
        queryset=PromptTemplate.objects.filter(
            purpose=PromptTemplate.Purpose.TRANSLATION
        ),
        required=False,
        empty_label=_("Built-in default"),
        label=_("Translation prompt"),
    )
    reviewer = forms.ModelChoiceField(
        label=_("Reviewer"), queryset=Endpoint.objects.filter(is_active=True)
    )
    review_template = forms.ModelChoiceField(
        queryset=PromptTemplate.objects.filter(
            purpose=PromptTemplate.Purpose.FAITHFULNESS_REVIEW
        ),
        required=False,
        empty_label=_("Built-in default"),
        label=_("Review prompt"),
    )
    approve_threshold = forms.IntegerField(
        min_value=1,
        max_value=5,
        initial=5,
        label=_("Auto-approve at score ≥"),
        help_text=_("5 means only fully faithful renderings pass without a person."),
    )
    overwrite_machine = forms.BooleanField(
        required=False,
        label=_("Also re-translate machine translations already there"),
        help_text=_(
            "Without it only what is missing is translated: renderings, or the "
            "options and key points a rendering lacks. A person's work (edited, "
            "imported or approved by a person) is never overwritten."
        ),
    )
