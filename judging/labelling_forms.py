"""Forms for endpoints and labelling runs."""

from django import forms

from benchmark.models import Benchmark

from .models import Endpoint, PromptTemplate


class EndpointForm(forms.ModelForm):
    base_url = forms.URLField(max_length=500, assume_scheme="https", label="Base URL")

    class Meta:
        model = Endpoint
        fields = [
            "name",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "max_tokens",
            "extra_body",
            "stream",
            "max_concurrency",
            "rpm_limit",
            "price_input_per_1k",
            "price_output_per_1k",
            "is_active",
        ]
        labels = {
            "api_key_env": "API key environment variable",
            "rpm_limit": "Requests per minute",
            "price_input_per_1k": "Price per 1k input tokens",
            "price_output_per_1k": "Price per 1k output tokens",
        }
        widgets = {"extra_body": forms.Textarea(attrs={"rows": 2})}

    def settings(self) -> dict:
        """The cleaned values without the name, for do_save_endpoint."""
        data = dict(self.cleaned_data)
        data.pop("name")
        data["extra_body"] = data.get("extra_body") or {}
        return data


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
