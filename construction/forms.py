from django import forms
from django.conf import settings


class SourceImportForm(forms.Form):
    file = forms.FileField(help_text="CSV or JSON Lines (.jsonl)")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        # Source files are excerpts, small beside item files; a larger one goes
        # through `manage.py import_sources`, which has no request time limit.
        if upload.size > settings.IMPORT_IN_REQUEST_MAX_BYTES:
            raise forms.ValidationError(
                "This file is too large to import here; use "
                "`manage.py import_sources FILE --benchmark SLUG`."
            )
        return upload
