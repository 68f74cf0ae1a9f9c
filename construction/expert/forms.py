from django import forms
from django.utils.translation import gettext_lazy as _


class ExpertVerdictForm(forms.Form):
    """An expert's verdict on a forum item (construction.expert.actions): the
    edit's options and key points one a line."""

    outcome = forms.ChoiceField(
        choices=[("pass", _("Approve")), ("refine", _("Edit")), ("reject", _("Reject"))]
    )
    reason = forms.CharField(max_length=500, required=False)
    question = forms.CharField(required=False)
    options = forms.CharField(required=False)
    correct = forms.CharField(max_length=1, required=False)
    answer = forms.CharField(required=False)
    key_points = forms.CharField(required=False)

    def edit(self) -> dict:
        data = self.cleaned_data
        return {
            "question": data["question"],
            "options": data["options"].splitlines(),
            "correct": data["correct"],
            "answer": data["answer"],
            "key_points": data["key_points"].splitlines(),
        }
