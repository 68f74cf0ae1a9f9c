"""The endpoint form."""

from django import forms
from django.utils.translation import gettext_lazy as _

from judging.llm.actions import ENDPOINT_FIELDS
from judging.llm.models import Endpoint


class EndpointForm(forms.ModelForm):
    base_url = forms.URLField(
        max_length=500, assume_scheme="https", label=_("Base URL")
    )

    class Meta:
        model = Endpoint
        fields = ["name", *ENDPOINT_FIELDS]
        labels = {
            "name": _("Name"),
            "model": _("Model"),
            "temperature": _("Temperature"),
            "max_tokens": _("Max tokens"),
            "extra_body": _("Extra body"),
            "stream": _("Stream"),
            "max_concurrency": _("Max concurrency"),
            "is_active": _("Is active"),
            "api_key_env": _("API key environment variable"),
            "rpm_limit": _("Requests per minute"),
            "price_input_per_1k": _("Price per 1k input tokens"),
            "price_output_per_1k": _("Price per 1k output tokens"),
            "thinking_switch": _("Thinking switch"),
            "thinking_on": _("Thinking on (request fields)"),
            "thinking_off": _("Thinking off (request fields)"),
            "thinking_model": _("Thinking model id"),
        }
        widgets = {
            name: forms.Textarea(attrs={"rows": 2})
            for name in ("extra_body", "thinking_on", "thinking_off")
        }

    def settings(self) -> dict:
        """The cleaned values without the name, for do_save_endpoint."""
        data = dict(self.cleaned_data)
        data.pop("name")
        for name in ("extra_body", "thinking_on", "thinking_off"):
            # A JSON box left out of the post means no fields, as the model's
            # default does.
            if data.get(name) is None:
                data[name] = {}
        return data
