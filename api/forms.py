from django import forms
from django.utils.translation import gettext_lazy as _

from api.audit_log import AuditFilter, kind_choices


class AuditFilterForm(forms.Form):
    """The audit log's filters, read from the query string."""

    kind = forms.ChoiceField(label=_("Kind"), required=False)
    actor = forms.CharField(required=False, max_length=150, label=_("Who"))
    since = forms.DateField(
        required=False, label=_("From"), widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label=_("To"), widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The audited models are known once every app is ready, not at import.
        self.fields["kind"].choices = kind_choices()

    def audit_filter(self) -> AuditFilter:
        """The filter to apply; a value that does not parse filters nothing (the
        form shows why)."""
        self.is_valid()
        data = self.cleaned_data
        return AuditFilter(
            kind=data.get("kind", ""),
            actor=data.get("actor", "").strip(),
            since=data.get("since"),
            until=data.get("until"),
        )
