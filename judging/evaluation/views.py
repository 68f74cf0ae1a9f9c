"""Evaluation pages: runs and their start (their import is judging.interop.views),
an item's results with people's overrides, model categories, panel difficulty and
item subsets.

Managers only, except an item's results, where adjudicators too override judge
verdicts. Every view parses, checks the role, calls one function, renders.
"""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from assay.htmx import poll_until_settled
from benchmark.models import Benchmark, Item
from benchmark.roles import Role, role_required
from judging.evaluation.actions import (
    EvaluationActionError,
    check_derive_subset,
    default_solved_at,
    do_derive_subset,
    do_set_model_category,
    do_start_evaluation,
    do_waive_pending,
    do_write_panel_difficulty,
    pending_responses,
)
from judging.evaluation.forms import EvaluationRunForm
from judging.evaluation.grades import choice_outcomes
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.evaluation.overrides import do_override_score, do_revert_override
from judging.evaluation.preview import difficulty_preview, run_preview
from judging.evaluation.progress import run_progress
from judging.evaluation.query import leaderboard_url, positive_id
from judging.evaluation.responses import item_details, response_details
from judging.evaluation.scores import benchmark_runs
from judging.llm.asking import format_prompt_rows
from judging.llm.prompts import install_default_templates
from judging.reporting import subsets
from judging.reporting.definitions import footnote

manager_required = role_required(Role.MANAGER)


@manager_required
def evaluations(request):
    benchmarks = Benchmark.objects.annotate(
        run_count=Count("evaluation_runs", distinct=True),
        item_count=Count("items", distinct=True),
    ).order_by("name")
    return render(
        request, "judging/evaluation/evaluations.html", {"benchmarks": benchmarks}
    )


@role_required(Role.MANAGER, Role.ADJUDICATOR)
def item_results(request, slug, external_id):
    """Every run's answer to the item with its verdicts. A POST overrides (or
    reverts an override of) one response's verdict; an htmx POST gets that
    response's block back, a plain one a redirect to it."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    item = get_object_or_404(Item, benchmark=benchmark, external_id=external_id)
    context = {"benchmark": benchmark, "item": item}
    if request.method != "POST":
        context["rows"] = item_details(item)
        return render(request, "judging/evaluation/item_results.html", context)
    response = get_object_or_404(
        Response.objects.select_related("run", "rendering"),
        pk=positive_id(request.POST.get("response")),
        item=item,
    )
    error = _override(request, response)
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, _("Override saved."))
        url = reverse("judging:item_results", args=[slug, external_id])
        return redirect(f"{url}#response-{response.pk}")
    context["d"] = response_details([response], with_other_judges=True)[0]
    context["error"] = error
    context["saved"] = not error
    return render(request, "judging/evaluation/item_results.html#response", context)


def _override(request, response: Response) -> str:
    """Carry out the posted override or revert; its error message, or ""."""
    kind = request.POST.get("kind", "")
    reason = request.POST.get("reason", "")
    try:
        if request.POST.get("action") == "revert":
            do_revert_override(response, kind, user=request.user, reason=reason)
        else:
            value = _verdict_value(kind, request.POST.get("value", ""))
            do_override_score(response, kind, value, user=request.user, reason=reason)
    except EvaluationActionError as error:
        return str(error)
    return ""


def _verdict_value(kind: str, text: str):
    """A posted score ("0"–"3") or SV flag ("1" violation, "0" none); None for
    anything else, which the action refuses with its message."""
    if kind == Judgment.Kind.RUBRIC:
        return int(text) if text in {"0", "1", "2", "3"} else None
    return {"1": True, "0": False}.get(text)


@manager_required
def runs(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(
        request,
        "judging/evaluation/runs.html",
        {"benchmark": benchmark, "runs": benchmark_runs(benchmark)},
    )


@manager_required
def start_run(request, slug):
    """The start form; its preview (items, calls, estimated cost) re-renders as an
    htmx GET with the form's values while they change."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if request.htmx and request.method == "GET":
        form = EvaluationRunForm(request.GET, benchmark=benchmark)
        preview = run_preview(benchmark, **form.preview_inputs())
        return render(
            request,
            "judging/evaluation/start_run.html#preview",
            {"benchmark": benchmark, "preview": preview},
        )
    # Offer every shipped prompt (the paper's question-only answer prompt among
    # them) before a first run has installed them; idempotent, reads once done.
    install_default_templates()
    form = EvaluationRunForm(request.POST or None, benchmark=benchmark)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = do_start_evaluation(
                benchmark,
                tested=data["tested"],
                judge=data["judge"],
                sv_judge=data.get("sv_judge"),
                language=data["language"],
                thinking=data["thinking"],
                answer_template=data["answer_template"],
                rubric_template=data.get("rubric_template"),
                judge_set=data.get("judge_set") or "",
                sv_template=data.get("sv_template"),
                keypoint_template=data.get("keypoint_template"),
                trials=data.get("trials") or 1,
                item_filter=form.item_filter(),
                model_category=data["category"],
                user=request.user,
            )
        except EvaluationActionError as error:
            form.add_error(None, str(error))
        else:
            message = (
                _("Run “%(run)s” started on %(items)s items × %(trials)s trials.")
                if run.trials > 1
                else _("Run “%(run)s” started on %(items)s items.")
            )
            items = run.total_items // run.trials
            messages.success(
                request, message % dict(run=run, items=items, trials=run.trials)
            )
            return redirect("judging:evaluation_run", pk=run.pk)
    return render(
        request,
        "judging/evaluation/start_run.html",
        {
            "benchmark": benchmark,
            "form": form,
            "preview": run_preview(benchmark, **form.preview_inputs()),
            "has_endpoints": form.fields["tested"].queryset.exists(),
        },
    )


@manager_required
def run_detail(request, pk):
    run = get_object_or_404(EvaluationRun.objects.select_related("benchmark"), pk=pk)
    unanswered = [Response.Status.EMPTY, Response.Status.INVALID]
    context = {
        "run": run,
        "benchmark": run.benchmark,
        "unanswered": run.responses.filter(status__in=unanswered).count(),
        "progress": run_progress(run),
        "outcomes": choice_outcomes(run) if run.binary else None,
        "format_prompts": format_prompt_rows(run.answer_templates),
        "live": run.is_active,
    }
    if request.htmx:
        response = render(request, "judging/evaluation/run.html#stage-counts", context)
        return poll_until_settled(not run.is_active, response)
    context["pending"] = response_details(pending_responses(run))
    context["waived"] = run.responses.filter(waived_at__isnull=False).select_related(
        "item", "waived_by"
    )
    return render(request, "judging/evaluation/run.html", context)


@require_POST
@manager_required
def waive(request, pk):
    run = get_object_or_404(EvaluationRun, pk=pk)
    try:
        count = do_waive_pending(
            run,
            request.POST.getlist("response"),
            user=request.user,
            note=request.POST.get("note", ""),
        )
    except EvaluationActionError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request, _("Waived %(count)s pending item(s).") % {"count": count}
        )
    return redirect("judging:evaluation_run", pk=run.pk)


@require_POST
@manager_required
def set_category(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    model_name = request.POST.get("model_name", "")
    try:
        do_set_model_category(benchmark, model_name, request.POST.get("category", ""))
    except EvaluationActionError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request, _("Category of %(model_name)s saved.") % {"model_name": model_name}
        )
    return redirect(leaderboard_url(benchmark, request.POST.get("lang")))


@require_POST
@manager_required
def write_difficulty(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    ids = [pk for pk in request.POST.getlist("run") if pk.isdigit()]
    panel = list(EvaluationRun.objects.filter(Q(pk__in=ids), benchmark=benchmark))
    if request.POST.get("confirm") != "1":
        try:
            preview = difficulty_preview(benchmark, panel)
        except EvaluationActionError as error:
            messages.error(request, str(error))
            return redirect(leaderboard_url(benchmark, request.POST.get("lang")))
        return render(
            request,
            "judging/evaluation/write_difficulty.html",
            {
                "benchmark": benchmark,
                "preview": preview,
                "language": request.POST.get("lang", ""),
            },
        )
    try:
        changed = do_write_panel_difficulty(benchmark, panel, user=request.user)
    except EvaluationActionError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("Difficulty from a panel of %(panel)s runs written to %(changed)s items.")
            % {"panel": len(panel), "changed": changed},
        )
    return redirect(leaderboard_url(benchmark, request.POST.get("lang")))


@manager_required
def item_subsets(request, slug):
    """Saved subsets, and deriving a new one: the first POST previews what the
    rule keeps, the second (confirm) saves it."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    runs = benchmark_runs(benchmark)
    context = {
        "benchmark": benchmark,
        "runs": runs,
        "rules": subsets.RULES,
        "solved_at": default_solved_at(benchmark),
    }
    if request.method == "POST":
        ids = {int(pk) for pk in request.POST.getlist("run") if pk.isdigit()}
        chosen = [run for run in runs if run.pk in ids]
        rule = request.POST.get("rule", "")
        name = slugify(request.POST.get("name", ""))[:100]
        typed = request.POST.get("solved_at")
        solved_at = positive_id(typed) if typed else context["solved_at"]
        context.update(chosen=ids, rule=rule, name=name, solved_at=solved_at)
        try:
            if request.POST.get("confirm") == "1":
                if not name:
                    raise EvaluationActionError(
                        _("Name the subset (letters, digits, -).")
                    )
                subset = do_derive_subset(
                    benchmark,
                    name=name,
                    rule=rule,
                    runs=chosen,
                    solved_at=solved_at,
                    user=request.user,
                )
                messages.success(request, _("Saved %(subset)s.") % {"subset": subset})
                return redirect(
                    reverse("judging:leaderboard", args=[benchmark.slug])
                    + f"?subset={subset.pk}"
                )
            context["preview"] = check_derive_subset(
                benchmark, rule=rule, runs=chosen, solved_at=solved_at
            )
        except EvaluationActionError as error:
            context["error"] = str(error)
    saved = list(benchmark.subsets.select_related("created_by"))
    context["subsets"] = saved
    context["solved_note"] = footnote("solved")
    context["fields"] = subsets.field_distribution(
        dict(benchmark.items.values_list("pk", "domain")),
        [(subset.name, subset.item_ids) for subset in saved],
    )
    return render(request, "judging/evaluation/subsets.html", context)
