"""The form of the "Check a summary table" page."""

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from judging.leaderboard.consistency import MAX_ROWS, UnreadableTable, parse_table

MAX_TABLE_CHARS = 300_000


class CheckTableForm(forms.Form):
    """A pasted summary table; a valid form's `summary` is the parsed table."""

    table = forms.CharField(
        max_length=MAX_TABLE_CHARS,
        strip=False,
        label=_("Summary table"),
        help_text=format_lazy(
            _("CSV or tab-separated, header first, at most {rows} rows."),
            rows=f"{MAX_ROWS:,}",
        ),
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )
    rates = forms.ChoiceField(
        choices=[
            ("auto", "Detect: percentages if any is above 1"),
            ("percent", "Percentages"),
            ("fraction", "Fractions of 1"),
        ],
        initial="auto",
        label=_("Perfect and Pass written without %"),
    )
    rates_after_sv = forms.TypedChoiceField(
        choices=[
            ("1", "After the SV rule (as Assay and IndustryBench report them)"),
            ("0", "Before the SV rule"),
        ],
        coerce=lambda value: value == "1",
        initial="1",
        label=_("Perfect and Pass count scores"),
    )

    def clean(self):
        data = super().clean()
        if "table" in data and "rates" in data:
            try:
                data["summary"] = parse_table(data["table"], rates=data["rates"])
            except UnreadableTable as unreadable:
                messages = [str(problem) for problem in unreadable.problems]
                more = unreadable.total - len(messages)
                if more:
                    messages.append(f"… and {more:,} more.")
                self.add_error("table", messages)
        return data
