from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from construction.actions import RUNNABLE_STAGES
from construction.forum.posts import PostFilter
from construction.models import SearchService, Source, Stage
from construction.release import PAPER_RELEASE_SIZE
from judging.llm.models import Endpoint, PromptTemplate


class SourceImportForm(forms.Form):
    file = forms.FileField(label=_("File"), help_text=_("CSV or JSON Lines (.jsonl)"))
    # LPFQA's crawler filters forum posts by their metadata (construction.forum
    # .posts); other sources pass these untouched.
    min_views = forms.IntegerField(
        min_value=0, required=False, label=_("Forum posts: at least … views")
    )
    min_replies = forms.IntegerField(
        min_value=0, required=False, label=_("at least … replies")
    )
    min_votes = forms.IntegerField(required=False, label=_("at least … votes"))
    posted_from = forms.DateField(
        required=False,
        label=_("posted from"),
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    posted_to = forms.DateField(
        required=False,
        label=_("posted until"),
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def post_filter(self) -> PostFilter:
        data = self.cleaned_data
        return PostFilter(
            min_views=data["min_views"] or 0,
            min_replies=data["min_replies"] or 0,
            min_votes=data["min_votes"],
            posted_from=data["posted_from"],
            posted_to=data["posted_to"],
        )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        # Source files are excerpts, small beside item files; a larger one goes
        # through `manage.py import_sources`, which has no request time limit.
        if upload.size > settings.IMPORT_IN_REQUEST_MAX_BYTES:
            raise forms.ValidationError(
                _(
                    "This file is too large to import here; use "
                    "`manage.py import_sources FILE --benchmark SLUG`."
                )
            )
        return upload


class StageRunForm(forms.Form):
    stage = forms.ChoiceField(
        label=_("Stage"), choices=[(s, Stage(s).label) for s in RUNNABLE_STAGES]
    )
    endpoint = forms.ModelChoiceField(
        label=_("Endpoint"),
        queryset=Endpoint.objects.filter(is_active=True),
        required=False,
        help_text=_(
            "Generation, quality, search and deep verification: a chat "
            "endpoint; dedup: an "
            "/v1/embeddings endpoint (empty: offline character n-grams)"
        ),
    )
    template = forms.ModelChoiceField(
        label=_("Template"),
        queryset=PromptTemplate.objects.filter(
            purpose__in=[
                PromptTemplate.Purpose.GENERATION,
                PromptTemplate.Purpose.QUALITY_CHECK,
                PromptTemplate.Purpose.SEARCH_QUERIES,
                PromptTemplate.Purpose.DEEP_CLAIMS,
                PromptTemplate.Purpose.FORUM_EXTRACT,
                PromptTemplate.Purpose.FORUM_QUALITY,
                PromptTemplate.Purpose.FORUM_MULTIPLE_CHOICE,
            ]
        ),
        required=False,
        empty_label=_("The shipped prompt"),
        help_text=_(
            "Search verification: the prompt that writes the queries; deep "
            "verification: the one that lists the claims and their queries; "
            "conversion (forum): the multiple-choice prompt"
        ),
    )
    verifier_template = forms.ModelChoiceField(
        queryset=PromptTemplate.objects.filter(
            purpose__in=[
                PromptTemplate.Purpose.SEARCH_VERIFICATION,
                PromptTemplate.Purpose.DEEP_VERIFICATION,
                PromptTemplate.Purpose.FORUM_SHORT_ANSWER,
            ]
        ),
        required=False,
        empty_label=_("The shipped prompt"),
        label=_("Verifier prompt"),
        help_text=_(
            "Search and deep verification: the verdict on the results; "
            "conversion (forum): the short-answer prompt"
        ),
    )
    search_service = forms.ModelChoiceField(
        label=_("Search service"),
        queryset=SearchService.objects.filter(is_active=True),
        required=False,
        help_text=_("Search and deep verification"),
    )
    thinking = forms.BooleanField(
        required=False,
        initial=True,
        label=_("Thinking mode"),
        help_text=_(
            "Deep verification: the endpoint's thinking switch on, as the "
            "paper's Stage 5"
        ),
    )
    questions_per_source = forms.IntegerField(
        label=_("Questions per source"), min_value=1, max_value=20, initial=3
    )
    source_kind = forms.ChoiceField(
        label=_("Source kind"),
        choices=[("", _("All sources")), *Source.Kind.choices],
        required=False,
        help_text=_(
            "Generation: only these sources; dedup: compare within this "
            "source family only"
        ),
    )
    threshold = forms.FloatField(
        label=_("Threshold"),
        min_value=0.05,
        max_value=1,
        initial=0.9,
        help_text=_("Dedup: cosine similarity"),
    )
    phrases = forms.CharField(
        label=_("Phrases"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text=_(
            "Dangling references: the phrases, one a line "
            "(empty: the default list of the benchmark's language)"
        ),
    )


class ReleaseSampleForm(forms.Form):
    size = forms.IntegerField(
        label=_("Size"),
        min_value=1,
        max_value=1_000_000,
        initial=PAPER_RELEASE_SIZE,
        help_text=_("The paper's: 2,083 (2,049 released after the checks removed 34)"),
    )
    seed = forms.IntegerField(label=_("Seed"), min_value=0, initial=0)


class ReviewForm(forms.Form):
    outcome = forms.ChoiceField(
        label=_("Outcome"), choices=[("pass", _("Approve")), ("reject", _("Remove"))]
    )
    reason = forms.CharField(label=_("Reason"), max_length=500, required=False)
