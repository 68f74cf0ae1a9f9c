"""Translation runs: start, follow, cancel/resume; the per-language report."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _

from assay.downloads import csv_download
from assay.htmx import poll_until_settled
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from judging.llm.models import PromptTemplate
from judging.llm.prompts import default_template, install_default_templates
from judging.translation.actions import (
    do_start_translation,
)
from judging.translation.forms import TranslationRunForm
from judging.translation.models import TranslationRun, TranslationTask
from judging.translation.pipeline import TRANSLATION
from judging.translation.progress import flagged_reviews, language_counts
from judging.translation.report import as_csv, translation_report

FLAGGED_SHOWN = 200


@role_required(Role.MANAGER)
def translation_runs(request):
    # Offer every shipped prompt (the IndustryBench preset's among them) before a
    # first run has installed them; idempotent, reads once done.
    install_default_templates()
    form = TranslationRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = do_start_translation(
                data["benchmark"],
                data["languages"],
                data["translator"],
                data["translation_template"]
                or default_template(PromptTemplate.Purpose.TRANSLATION),
                data["reviewer"],
                data["review_template"]
                or default_template(PromptTemplate.Purpose.FAITHFULNESS_REVIEW),
                approve_threshold=data["approve_threshold"],
                item_filter=form.item_filter(),
                overwrite_machine=data["overwrite_machine"],
                user=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(
                request, _("Translation run %(pk)s started.") % {"pk": run.pk}
            )
            return redirect("judging:translation_run", pk=run.pk)
    runs = TranslationRun.objects.select_related("benchmark", "translator", "reviewer")
    return render(
        request,
        "judging/translation/runs.html",
        {"form": form, "runs": runs[:50]},
    )


def _progress(run: TranslationRun) -> dict:
    per_language, totals = language_counts(run)
    return {"run": run, "per_language": per_language, "totals": totals}


@role_required(Role.MANAGER)
def translation_run(request, pk: int):
    run = get_object_or_404(
        TranslationRun.objects.select_related(
            "benchmark",
            "translator",
            "reviewer",
            "translation_template",
            "review_template",
        ),
        pk=pk,
    )
    settled = TRANSLATION.settled(run)
    context = {**_progress(run), "live": not settled}
    if request.htmx:
        response = render(request, "judging/translation/run.html#progress", context)
        return poll_until_settled(settled, response)
    context["flagged"], context["flagged_count"] = flagged_reviews(run, FLAGGED_SHOWN)
    untranslated = (
        run.tasks.filter(
            stage__in=[TranslationTask.Stage.FAILED, TranslationTask.Stage.UNPARSEABLE]
        )
        .select_related("item")
        .order_by("item__external_id", "language")
    )
    context["untranslated"] = untranslated[:FLAGGED_SHOWN]
    context["untranslated_count"] = untranslated.count()
    return render(request, "judging/translation/run.html", context)


@role_required(Role.MANAGER)
def translation_report_page(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    summaries = translation_report(benchmark)
    if request.GET.get("format") == "csv":
        return csv_download(as_csv(summaries), f"{slug}-translation-report.csv")
    return render(
        request,
        "judging/translation/report.html",
        {"benchmark": benchmark, "summaries": summaries},
    )
