from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from annotation.models import BINARY_OVERLAP, Campaign
from annotation.screens import KIND_ROLE
from benchmark.models import Benchmark, LabelDimension
from judging.evaluation.models import EvaluationRun
from judging.labelling.models import LabellingRun

# Fields each campaign kind asks for, besides the common ones.
KIND_FIELDS = {
    Campaign.Kind.GRADING: ("scale", "runs", "size", "seed", "ask_safety"),
    Campaign.Kind.SAFETY: ("runs", "size", "seed"),
    Campaign.Kind.ADJUDICATION: ("labelling_runs", "dimensions", "hide_model_names"),
    Campaign.Kind.TRANSLATION_REVIEW: ("languages",),
}


class CampaignForm(forms.Form):
    benchmark = forms.ModelChoiceField(
        queryset=Benchmark.objects.all(), label=_("Benchmark")
    )
    name = forms.CharField(max_length=200, label=_("Name"))
    overlap = forms.IntegerField(
        min_value=1,
        max_value=20,
        initial=1,
        label=_("Overlap"),
        help_text=_("Different people per task."),
    )
    assignees = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(),
        required=False,
        label=_("Assignees"),
        help_text=_("Nobody ticked: everyone with the role may work in it."),
        widget=forms.CheckboxSelectMultiple,
    )
    lease_minutes = forms.IntegerField(
        min_value=1, max_value=24 * 60, initial=30, label=_("Lease minutes")
    )
    # Chosen by the scale tabs above the form, as the kind is.
    scale = forms.ChoiceField(
        choices=Campaign.Scale.choices, required=False, widget=forms.HiddenInput
    )
    runs = forms.ModelMultipleChoiceField(
        queryset=EvaluationRun.objects.all(),
        required=False,
        label=_("Runs"),
        help_text=_("Empty: responses of every run of the benchmark."),
        widget=forms.CheckboxSelectMultiple,
    )
    size = forms.IntegerField(min_value=1, initial=198, label=_("Sample size"))
    seed = forms.IntegerField(
        initial=20250101, label=_("Seed"), help_text=_("Same seed, same sample.")
    )
    ask_safety = forms.BooleanField(
        required=False, label=_("Also ask safe / violating (SV)")
    )
    labelling_runs = forms.ModelMultipleChoiceField(
        queryset=LabellingRun.objects.all(),
        required=False,
        label=_("Labelling runs"),
        help_text=_("Empty: every labelling run of the benchmark."),
        widget=forms.CheckboxSelectMultiple,
    )
    dimensions = forms.ModelMultipleChoiceField(
        queryset=LabelDimension.objects.select_related("benchmark"),
        required=False,
        label=_("Dimensions"),
        widget=forms.CheckboxSelectMultiple,
    )
    hide_model_names = forms.BooleanField(
        required=False, initial=True, label=_("Hide model names from adjudicators")
    )
    languages = forms.CharField(
        required=False,
        label=_("Languages"),
        help_text=_("Target languages, comma separated; empty for all."),
    )

    def __init__(self, *args, kind: str, scale: str = Campaign.Scale.RUBRIC, **kwargs):
        super().__init__(*args, **kwargs)
        self.kind = kind
        role = KIND_ROLE[kind]
        self.fields["assignees"].queryset = (
            get_user_model()
            .objects.filter(groups__name__in=[role, "manager"], is_active=True)
            .distinct()
            .order_by("username")
        )
        every_kind_field = {name for names in KIND_FIELDS.values() for name in names}
        for name in every_kind_field - set(KIND_FIELDS[kind]):
            del self.fields[name]
        if "scale" in self.fields:
            self.fields["scale"].initial = scale
            if scale == Campaign.Scale.BINARY:
                self.fields["overlap"].initial = BINARY_OVERLAP

    def clean_languages(self):
        raw = self.cleaned_data.get("languages", "")
        return [part.strip() for part in raw.split(",") if part.strip()] or None

    def clean(self):
        cleaned = super().clean()
        benchmark = cleaned.get("benchmark")
        for name in ("runs", "labelling_runs", "dimensions"):
            chosen = cleaned.get(name)
            if (
                benchmark
                and chosen
                and any(x.benchmark_id != benchmark.pk for x in chosen)
            ):
                self.add_error(
                    name,
                    _("Choose only %(what)s of %(benchmark)s.")
                    % {"what": self.fields[name].label or name, "benchmark": benchmark},
                )
        for name in ("runs", "labelling_runs", "dimensions"):
            if name in cleaned and not cleaned[name]:
                cleaned[name] = None
        return cleaned
