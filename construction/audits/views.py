"""The stage page (a stage's versions, its measured precision and recall
against people, audits, trials, the dedup threshold sweep; managers), the
comparison of two prompt versions (managers), and the audit screens
(reviewers)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from construction.actions import LLM_STAGES, do_start_stage
from construction.audits.actions import (
    AUDITED_STAGES,
    audit_queue,
    do_answer,
    do_open_audit,
)
from construction.audits.forms import AnswerForm, OpenAuditForm, TrialForm
from construction.audits.read import (
    OUTCOME_LABELS,
    OUTCOMES,
    answered_item,
    audit_progress,
    compare_versions,
    disagreements,
    latest_answer,
    latest_sweep,
    open_audits,
    previous_item_id,
    shown_item,
    stage_audits,
    stage_trials,
    stage_versions,
    unanswered,
)
from construction.models import Stage, StageAudit
from reviewqueue import engine
from reviewqueue.engine import StaleRefusal
from reviewqueue.keys import BACK, Key


def _stage_or_404(stage: str) -> str:
    if stage not in AUDITED_STAGES:
        raise Http404("No such stage.")
    return stage


def _render_stage(request, benchmark, stage, status=200, **forms):
    versions = stage_versions(benchmark.pk, stage)
    names = [row["version"] for row in versions]
    purpose = LLM_STAGES[stage][0] if stage in LLM_STAGES else None
    context = {
        "benchmark": benchmark,
        "stage": Stage(stage),
        "outcomes": OUTCOMES,
        "outcome_labels": OUTCOME_LABELS,
        "versions": versions,
        "audits": stage_audits(benchmark.pk, stage),
        "disagreements": disagreements(benchmark.pk, stage),
        "audit_form": forms.get("audit_form") or OpenAuditForm(versions=names),
        "trial_form": (forms.get("trial_form") or TrialForm(purpose=purpose))
        if purpose
        else None,
        "trials": stage_trials(benchmark.pk, stage),
    }
    if stage == Stage.DEDUP:
        context["sweep_run"], context["sweep"] = latest_sweep(benchmark.pk)
    return render(request, "construction/stage.html", context, status=status)


@role_required(Role.MANAGER)
def stage_page(request, slug: str, stage: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return _render_stage(request, benchmark, _stage_or_404(stage))


@require_POST
@role_required(Role.MANAGER)
def open_audit(request, slug: str, stage: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    stage = _stage_or_404(stage)
    names = [row["version"] for row in stage_versions(benchmark.pk, stage)]
    form = OpenAuditForm(request.POST, versions=names)
    if form.is_valid():
        data = form.cleaned_data
        try:
            audit = do_open_audit(
                benchmark,
                stage,
                data["prompt_version"],
                size=data["size"],
                seed=data["seed"],
                user=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(
                request,
                _("%(audit)s opened with %(value)s decisions.")
                % {"audit": audit, "value": audit.items.count()},
            )
            return redirect("construction:stage", slug=slug, stage=stage)
    return _render_stage(request, benchmark, stage, 400, audit_form=form)


@require_POST
@role_required(Role.MANAGER)
def start_trial(request, slug: str, stage: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    stage = _stage_or_404(stage)
    if stage not in LLM_STAGES:
        raise Http404("This stage asks no LLM.")
    form = TrialForm(request.POST, purpose=LLM_STAGES[stage][0])
    if form.is_valid():
        data = form.cleaned_data
        try:
            run = do_start_stage(
                benchmark,
                stage,
                endpoint=data["endpoint"],
                template=data["template"],
                trial_size=data["size"],
                trial_seed=data["seed"],
                user=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(
                request, _("Trial %(run)s started on a sample.") % {"run": run}
            )
            return redirect("construction:stage", slug=slug, stage=stage)
    return _render_stage(request, benchmark, stage, 400, trial_form=form)


@role_required(Role.MANAGER)
def compare_page(request, slug: str, stage: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    stage = _stage_or_404(stage)
    names = [row["version"] for row in stage_versions(benchmark.pk, stage)]
    version_a, version_b = request.GET.get("a", ""), request.GET.get("b", "")
    chosen = version_a in names and version_b in names and version_a != version_b
    return render(
        request,
        "construction/compare.html",
        {
            "benchmark": benchmark,
            "stage": Stage(stage),
            "names": names,
            "a": version_a,
            "b": version_b,
            "result": compare_versions(benchmark.pk, stage, version_a, version_b)
            if chosen
            else None,
            "outcomes": OUTCOMES,
            "outcome_labels": OUTCOME_LABELS,
        },
        status=200 if chosen or not (version_a or version_b) else 400,
    )


@role_required(Role.REVIEWER)
def audit_list(request):
    return render(request, "construction/audits.html", {"audits": open_audits()})


KEYS = [
    Key(("a",), _("Agree with the automated verdict")),
    Key(("d",), _("Disagree with it")),
    Key(("n",), _("Write a note (optional); Esc leaves the note")),
    BACK,
]


@role_required(Role.REVIEWER)
def audit_screen(request, pk: int):
    """The item the reviewer holds (a lease from the review queue), or (`?item=`)
    one they answered before. A POST `action=next` leases the next unanswered
    item (the page asks as it loads); a POST with an answer records it and leases
    the next (the screen's partial for htmx)."""
    audit = get_object_or_404(StageAudit.objects.select_related("benchmark"), pk=pk)
    queue = audit_queue(audit.pk)
    error = ""
    stale = False
    item = None
    asked = request.method == "POST"
    if request.method == "POST" and request.POST.get("action") != "next":
        form = AnswerForm(request.POST)
        answered = shown_item(audit, _int_or_none(form.data.get("item")))
        if not form.is_valid() or answered is None:
            error = "Agree or disagree with the verdict shown."
            item = answered
        else:
            try:
                do_answer(
                    answered,
                    agrees=form.cleaned_data["agrees"],
                    note=form.cleaned_data["note"],
                    user=request.user,
                    corrects=_int_or_none(request.POST.get("corrects")),
                )
            except ValidationError as invalid:
                error = " ".join(invalid.messages)
                stale = isinstance(invalid, StaleRefusal)
                if latest_answer(answered, request.user):
                    item = answered
            else:
                if not request.htmx:
                    engine.claim(queue, request.user, unanswered(audit))
                    return redirect("construction:audit", pk=pk)
    elif request.GET.get("item", "").isdigit():
        item = answered_item(audit, request.user, int(request.GET["item"]))
    if item is None:
        if asked:
            item_id = engine.claim(queue, request.user, unanswered(audit))
        else:
            item_id = engine.held(queue, request.user)
        item = shown_item(audit, item_id)
    mine = latest_answer(item, request.user) if item else None
    context = {
        "audit": audit,
        "item": item,
        "mine": mine,
        # A refused answer shows the note typed; a stale one what is saved now.
        "posted": request.POST if error and not stale else None,
        "queue_asked": asked or item is not None,
        "previous_item_id": previous_item_id(audit, request.user, item),
        "progress": audit_progress(audit),
        "error": error,
        "keys": KEYS,
    }
    template = (
        "construction/audit.html#task" if request.htmx else "construction/audit.html"
    )
    return render(request, template, context, status=400 if error else 200)


def _int_or_none(raw) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None
