"""Labelling runs and the consensus report."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from assay.downloads import csv_download
from assay.htmx import poll_until_settled
from benchmark.roles import Role, role_required
from judging.labelling.actions import (
    do_add_annotator,
    do_apply_suggestions,
    do_start_labelling,
    do_undo_suggestions,
)
from judging.labelling.forms import AddAnnotatorForm, LabellingRunForm
from judging.labelling.models import (
    AnnotatorLabel,
    LabellingRun,
    SuggestionApplication,
)
from judging.labelling.report import consensus_report, pair_confusion, report_csv
from judging.labelling.runs import LABELLING, label_matrices, run_progress
from judging.labelling.suggestions import run_suggestions
from judging.llm.models import PromptTemplate
from judging.llm.prompts import default_template

FAILURES_SHOWN = 200


@role_required(Role.MANAGER)
def labelling_runs(request):
    form = LabellingRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = do_start_labelling(
                data["benchmark"],
                list(data["annotators"]),
                data["template"] or default_template(PromptTemplate.Purpose.LABELLING),
                item_filter=form.item_filter(),
                refresh=data["refresh"],
                user=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(
                request, _("Labelling run %(pk)s started.") % {"pk": run.pk}
            )
            return redirect("judging:labelling_run", pk=run.pk)
    runs = LabellingRun.objects.select_related("benchmark").prefetch_related(
        "annotators"
    )
    return render(
        request, "judging/labelling/runs.html", {"form": form, "runs": runs[:50]}
    )


@role_required(Role.MANAGER)
def labelling_run(request, pk: int):
    run = get_object_or_404(
        LabellingRun.objects.select_related("benchmark", "template"), pk=pk
    )
    settled = LABELLING.settled(run)
    context = {"run": run, "progress": run_progress(run), "live": not settled}
    if request.htmx:
        response = render(request, "judging/labelling/run.html#progress", context)
        return poll_until_settled(settled, response)
    failures = (
        AnnotatorLabel.objects.filter(
            run=run,
            status__in=[
                AnnotatorLabel.Status.FAILED,
                AnnotatorLabel.Status.UNPARSEABLE,
            ],
            dimension=run.benchmark.dimensions.order_by("position", "code").first(),
        )
        .select_related("item", "annotator", "call")
        .order_by("item__external_id", "annotator__name")
    )
    context.update(
        annotators=run.annotators.all(),
        failures=failures[:FAILURES_SHOWN],
        failure_count=failures.count(),
        add_form=AddAnnotatorForm(),
        suggestions=run_suggestions(run),
        applications=run.applications.select_related("applied_by", "undone_by"),
    )
    return render(request, "judging/labelling/run.html", context)


@require_POST
@role_required(Role.MANAGER)
def add_annotator(request, pk: int):
    run = get_object_or_404(LabellingRun, pk=pk)
    try:
        form = AddAnnotatorForm(request.POST)
        if not form.is_valid():
            raise ValidationError(_("Choose an endpoint to add."))
        do_add_annotator(run, form.cleaned_data["endpoint"])
        messages.success(
            request,
            _("%(value)s added to run %(pk)s.")
            % {"value": form.cleaned_data["endpoint"], "pk": pk},
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("judging:labelling_run", pk=pk)


@require_POST
@role_required(Role.MANAGER)
def apply_suggestions(request, pk: int):
    run = get_object_or_404(LabellingRun, pk=pk)
    chosen = [value for value in request.POST.getlist("consensus") if value.isdigit()]
    application = do_apply_suggestions(run, chosen, request.user)
    if application is None:
        messages.error(
            request, _("Nothing was applied: choose at least one suggestion.")
        )
    else:
        messages.success(
            request,
            _(
                "%(changes)s final label(s) now follow run %(pk)s's consensus. Undo "
                "puts them all back."
            )
            % {"changes": len(application.changes), "pk": pk},
        )
    return redirect("judging:labelling_run", pk=pk)


@require_POST
@role_required(Role.MANAGER)
def undo_suggestions(request, pk: int):
    application = get_object_or_404(SuggestionApplication, pk=pk)
    try:
        restored = do_undo_suggestions(application, request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        skipped = len(application.changes) - restored
        note = f"; {skipped} changed again since, left as they are" if skipped else ""
        messages.success(
            request,
            _("%(restored)s final label(s) put back%(note)s.")
            % {"restored": restored, "note": note},
        )
    return redirect("judging:labelling_run", pk=application.run_id)


@role_required(Role.MANAGER)
def consensus_report_page(request, pk: int):
    run = get_object_or_404(LabellingRun.objects.select_related("benchmark"), pk=pk)
    annotators, dimensions = label_matrices(run)
    if request.GET.get("format") == "csv":
        report = consensus_report(dimensions, annotators)
        return csv_download(report_csv(report), f"labelling-run-{run.pk}-consensus.csv")
    if request.htmx and "a" in request.GET:
        return render(
            request,
            "judging/labelling/consensus_report.html#confusion",
            _confusion_context(request, annotators, dimensions),
        )
    return render(
        request,
        "judging/labelling/consensus_report.html",
        {
            "run": run,
            "report": consensus_report(dimensions, annotators),
            "annotators": annotators,
            "dimensions": dimensions,
        },
    )


def _confusion_context(request, annotators, dimensions) -> dict:
    by_code = {dimension.code: dimension for dimension in dimensions}
    try:
        a = annotators.index(request.GET["a"])
        b = annotators.index(request.GET["b"])
        dimension = by_code[request.GET["dimension"]]
    except (KeyError, ValueError):
        raise Http404("Unknown annotator or dimension") from None
    confusion = pair_confusion(dimension, a, b)
    rows = list(zip(confusion["labels"], confusion["counts"], strict=True))
    return {
        "dimension": dimension,
        "a": annotators[a],
        "b": annotators[b],
        "labels": confusion["labels"],
        "rows": rows,
    }
