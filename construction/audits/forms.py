from django import forms
from django.utils.translation import gettext_lazy as _

from construction.audits.actions import MAX_SAMPLE, NOTE_MAX
from judging.llm.models import Endpoint, PromptTemplate


class OpenAuditForm(forms.Form):
    prompt_version = forms.ChoiceField(label=_("Prompt / method version"))
    size = forms.IntegerField(
        label=_("Sample size"), min_value=1, max_value=MAX_SAMPLE, initial=50
    )
    seed = forms.IntegerField(label=_("Seed"), min_value=0, initial=0)

    def __init__(self, *args, versions=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["prompt_version"].choices = [(v, v) for v in versions]


class TrialForm(forms.Form):
    endpoint = forms.ModelChoiceField(
        label=_("Endpoint"), queryset=Endpoint.objects.filter(is_active=True)
    )
    template = forms.ModelChoiceField(
        label=_("Prompt version"), queryset=PromptTemplate.objects.none()
    )
    size = forms.IntegerField(
        label=_("Sample size"), min_value=1, max_value=100_000, initial=50
    )
    seed = forms.IntegerField(label=_("Seed"), min_value=0, initial=0)

    def __init__(self, *args, purpose=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template"].queryset = PromptTemplate.objects.filter(
            purpose=purpose
        )


class AnswerForm(forms.Form):
    item = forms.IntegerField(label=_("Item"))
    agrees = forms.TypedChoiceField(
        label=_("Agrees"),
        choices=[("1", _("Agree")), ("0", _("Disagree"))],
        coerce=lambda v: v == "1",
    )
    note = forms.CharField(label=_("Note"), max_length=NOTE_MAX, required=False)
