"""The forms of the evaluation pages: starting a run of one benchmark, and pasting a
summary table to check."""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item, Label
from benchmark.taxonomy import ENGLISH_LANGUAGE_NAMES
from judging.evaluation.actions import MAX_TRIALS, evaluation_item_filter
from judging.llm.menus import judge_set_choices
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import PRESETS


def _templates(purpose: str):
    return PromptTemplate.objects.filter(purpose=purpose).order_by("name", "-version")


def _template_label(template: PromptTemplate) -> str:
    # The note says what a version is for (the paper's question-only protocol,
    # say), which its slug name cannot.
    return f"{template} · {template.note}" if template.note else str(template)


class EvaluationRunForm(forms.Form):
    preset = forms.ChoiceField(
        required=False,
        choices=[
            ("", _("None: choose each prompt")),
            *[(preset.name, preset.label) for preset in PRESETS.values()],
        ],
        label=_("Prompt preset"),
        # The help texts below sit inside their <label>s: they avoid the other
        # fields' labels, so a label finds one field.
        help_text=_(
            "Selects the paper's prompts for answering, judging and the SV "
            "check in the menus below; each can still be changed. A menu left at the "
            "built-in default takes the preset's."
        ),
    )
    tested = forms.ModelChoiceField(
        queryset=Endpoint.objects.none(), label=_("Tested model")
    )
    language = forms.ChoiceField(label=_("Language"))
    thinking = forms.BooleanField(
        required=False,
        label=_("Thinking mode (only the final answer is judged)"),
    )
    category = forms.CharField(
        required=False,
        max_length=100,
        label=_("Model category"),
        help_text=_("e.g. closed, open MoE, open dense; groups the leaderboard."),
        widget=forms.TextInput(attrs={"list": "categories"}),
    )
    answer_template = forms.ModelChoiceField(
        queryset=_templates(PromptTemplate.Purpose.ANSWERING),
        required=False,
        empty_label=_("Built-in default"),
        label=_("Answer prompt"),
        help_text=_(
            "On a correct/incorrect benchmark the built-in default asks each "
            "item format with its own prompt, options included; a prompt chosen here "
            "asks every item, and must show {{options}} for multiple-choice items."
        ),
    )
    judge = forms.ModelChoiceField(
        queryset=Endpoint.objects.none(), label=_("Rubric judge")
    )
    rubric_template = forms.ModelChoiceField(
        queryset=_templates(PromptTemplate.Purpose.RUBRIC_JUDGING),
        required=False,
        empty_label=_("Built-in default"),
        label=_("Rubric prompt"),
    )
    judge_set = forms.ChoiceField(
        required=False,
        choices=judge_set_choices,
        label=_("Judge set"),
        help_text=_(
            "Instead of a single rubric template: the set picks one for the "
            "run's items by what they are written in."
        ),
    )
    sv_judge = forms.ModelChoiceField(
        queryset=Endpoint.objects.none(), label=_("Safety-violation judge")
    )
    sv_template = forms.ModelChoiceField(
        queryset=_templates(PromptTemplate.Purpose.SAFETY_CHECK),
        required=False,
        empty_label=_("Built-in default"),
        label=_("Safety-violation prompt"),
    )
    external_ids = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label=_("Only these items"),
        help_text=_(
            "External ids separated by commas, spaces or lines; empty for all."
        ),
    )
    difficulty = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Any difficulty"),
            *[(v, name) for v, name in Item.Difficulty.choices if v],
        ],
        label=_("Difficulty"),
    )
    labels = forms.ModelMultipleChoiceField(
        queryset=Label.objects.none(),
        required=False,
        label=_("Only items labelled"),
        help_text=_(
            "Within a dimension, any of the chosen labels; across dimensions, "
            "all. Ctrl/⌘-click to choose several."
        ),
        widget=forms.SelectMultiple(attrs={"size": 6}),
    )
    limit = forms.IntegerField(required=False, min_value=1, label=_("At most N items"))
    include_unapproved = forms.BooleanField(
        required=False,
        label=_(
            "Also ask translations not approved yet (pending or flagged in review)"
        ),
        help_text=_(
            "By default only approved renderings are asked; the leaderboard "
            "says which runs included others."
        ),
    )

    def __init__(self, *args, benchmark, **kwargs):
        super().__init__(*args, **kwargs)
        self.binary = benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
        if self.binary:
            self._binary_fields()
        endpoints = Endpoint.objects.filter(is_active=True).order_by("name")
        for name in ("tested", "judge", "sv_judge"):
            if name in self.fields:
                self.fields[name].queryset = endpoints
        self.fields["language"].choices = [
            (code, f"{code} · {ENGLISH_LANGUAGE_NAMES.get(code, code)}")
            for code in benchmark.languages
        ]
        self.fields["language"].initial = benchmark.source_language
        self.fields["labels"].queryset = Label.objects.filter(
            dimension__benchmark=benchmark
        ).select_related("dimension")
        for name in (
            "answer_template",
            "rubric_template",
            "sv_template",
            "keypoint_template",
        ):
            if name in self.fields:
                self.fields[name].label_from_instance = _template_label
        self.fields["labels"].label_from_instance = lambda label: (
            f"{label.dimension.name}: {label.name}"
        )
        if "preset" in self.fields:
            self.fields["preset"].widget.attrs["data-presets"] = json.dumps(
                self._preset_fields()
            )

    @staticmethod
    def _preset_fields() -> dict:
        """{preset: {field: value}}: what choosing a preset selects (the newest
        version of each of its templates)."""
        names = {
            name for preset in PRESETS.values() for name in (preset.answer, preset.sv)
        }
        newest = {}
        for template in PromptTemplate.objects.filter(name__in=names).order_by(
            "name", "-version"
        ):
            newest.setdefault(template.name, template.pk)
        return {
            preset.name: {
                "answer_template": newest.get(preset.answer, ""),
                "rubric_template": "",
                "judge_set": preset.judge_set,
                "sv_template": newest.get(preset.sv, ""),
            }
            for preset in PRESETS.values()
        }

    def clean(self):
        """A chosen preset fills the prompts left at their default (the page's
        script shows its choices at once; this also holds without it)."""
        data = super().clean()
        preset = PRESETS.get(data.get("preset") or "")
        if preset is None:
            return data
        chosen = self._preset_fields()[preset.name]
        for name in ("answer_template", "sv_template"):
            if not data.get(name) and chosen[name]:
                data[name] = PromptTemplate.objects.get(pk=chosen[name])
        if not data.get("rubric_template") and not data.get("judge_set"):
            data["judge_set"] = preset.judge_set
        return data

    def _binary_fields(self) -> None:
        """A binary benchmark: MC/TF answers are read by rules, the other items
        graded 0/1 by the key-point judge; no rubric, no SV check; k trials."""
        for name in (
            "rubric_template",
            "judge_set",
            "preset",
            "sv_judge",
            "sv_template",
        ):
            del self.fields[name]
        judge = self.fields["judge"]
        judge.required = False
        judge.label = _("Key-point judge")
        judge.empty_label = _("None (multiple choice and true/false only)")
        judge.help_text = _("Grades short-answer and open items 0/1; MC/TF need none.")
        self.fields["keypoint_template"] = forms.ModelChoiceField(
            queryset=_templates(PromptTemplate.Purpose.KEYPOINT_JUDGING),
            required=False,
            empty_label=_("Built-in default (LPFQA)"),
            label=_("Key-point prompt"),
        )
        self.fields["trials"] = forms.IntegerField(
            min_value=1,
            max_value=MAX_TRIALS,
            initial=1,
            label=_("Trials per item"),
            help_text=_(
                "Each item is asked this many times (LPFQA: 3); accuracy is "
                "the mean over trials."
            ),
        )

    def preview_inputs(self) -> dict:
        """What the run preview needs, from whatever fields are valid so far (the
        preview updates while the form is being filled in)."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})  # an unbound form has none
        return {
            "language": data.get("language") or self.fields["language"].initial,
            "item_filter": {
                "external_ids": data.get("external_ids", "").replace(",", " ").split(),
                "difficulty": data.get("difficulty", ""),
                "labels": [label.pk for label in data.get("labels", [])],
                "limit": data.get("limit"),
                "include_unapproved": data.get("include_unapproved", False),
            },
            "endpoints": {
                key: data.get(key) for key in ("tested", "judge", "sv_judge")
            },
            "trials": data.get("trials") or 1,
            "answer_template": data.get("answer_template"),
        }

    def item_filter(self) -> dict:
        data = self.cleaned_data
        return evaluation_item_filter(
            external_ids=data["external_ids"].replace(",", " ").split(),
            difficulty=data["difficulty"],
            label_ids=[label.pk for label in data["labels"]],
            limit=data["limit"],
            include_unapproved=data["include_unapproved"],
        )


# A thousand leaderboard CSV rows (MAX_ROWS) run to about 150,000 characters.
