"""Evaluation pages: leaderboards, slices, CIs, drill-downs, runs and run import, and
the consistency check of a pasted summary table.

Managers only, except an item's results, where adjudicators too override judge
verdicts. Every view parses, checks the role, calls one function, renders.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from assay.downloads import csv_download
from assay.htmx import stop_polling_unless
from benchmark.models import Benchmark, Item
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected
from judging.evaluation import consistency, reports, subsets
from judging.evaluation.accuracy_report import choice_outcomes
from judging.evaluation.actions import (
    EvaluationActionError,
    check_derive_subset,
    do_cancel_evaluation,
    do_derive_subset,
    do_override_score,
    do_retry_pending,
    do_revert_override,
    do_set_model_category,
    do_start_evaluation,
    do_waive_pending,
    do_write_panel_difficulty,
    pending_responses,
)
from judging.evaluation.forms import CheckTableForm, EvaluationRunForm
from judging.evaluation.importing import do_import_run
from judging.evaluation.interop.exporting import inspect_eval_file
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.evaluation.pipeline import run_progress
from judging.evaluation.presenting import leaderboard_summary, leaderboard_tables
from judging.evaluation.preview import difficulty_preview, run_preview
from judging.llm.prompts import install_default_templates

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


@manager_required
def leaderboard(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    grouped = request.GET.get("group", "1") != "0"
    subset = _subset(request.GET, benchmark)
    report, tables_html = leaderboard_tables(
        benchmark, _language(request.GET, benchmark), grouped, subset
    )
    context = {
        "benchmark": benchmark,
        "report": report,
        "grouped": grouped,
        "tables_html": tables_html,
        "summary": leaderboard_summary(report) if report.runs else None,
        "all_runs": reports.benchmark_runs(benchmark),
        "models": sorted({(r.model_name, r.model_category) for r in report.runs}),
        "subsets": benchmark.subsets.all(),
        "subset": subset,
    }
    return render(request, "judging/evaluation/leaderboard.html", context)


@manager_required
def table_download(request, slug, table, fmt):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    report = reports.cached_report(
        benchmark,
        language=_language(request.GET, benchmark),
        subset=_subset(request.GET, benchmark),
    )
    if table not in report.tables or fmt not in {"csv", "tex"}:
        raise Http404("No such table or format.")
    data = report.tables[table]
    part = f"-{report.subset.name}" if report.subset else ""
    filename = f"{benchmark.slug}-{report.language}{part}-{table}.{fmt}"
    if fmt == "csv":
        return csv_download(data.to_csv(), filename)
    response = HttpResponse(
        data.to_latex(), content_type="application/x-tex; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@manager_required
def cell_items(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    run = get_object_or_404(
        EvaluationRun, pk=_positive_id(request.GET.get("run")), benchmark=benchmark
    )
    dimension = request.GET.get("dimension", "")
    group = request.GET.get("group", "")
    try:
        cell = reports.cell_details(benchmark, run, dimension, group)
    except ValueError as error:
        raise Http404(str(error)) from None
    return render(
        request,
        "judging/evaluation/cell_items.html",
        {"benchmark": benchmark, "run": run, "cell": cell},
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
        context["rows"] = reports.item_details(item)
        return render(request, "judging/evaluation/item_results.html", context)
    response = get_object_or_404(
        Response.objects.select_related("run", "rendering"),
        pk=_positive_id(request.POST.get("response")),
        item=item,
    )
    error = _override(request, response)
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, "Override saved.")
        url = reverse("judging:item_results", args=[slug, external_id])
        return redirect(f"{url}#response-{response.pk}")
    context["d"] = reports.response_details([response], with_other_judges=True)[0]
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
        {"benchmark": benchmark, "runs": reports.benchmark_runs(benchmark)},
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
            trials = f" × {run.trials} trials" if run.trials > 1 else ""
            messages.success(
                request,
                f"Run “{run}” started on {run.total_items // run.trials} "
                f"items{trials}.",
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
def import_run(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    problems = []
    form = {"language": benchmark.source_language}
    if request.method == "POST":
        form = request.POST
        upload = request.FILES.get("file")
        if upload is None:
            problems = ["Choose a CSV or JSONL file to import."]
        else:
            try:
                run = do_import_run(
                    benchmark,
                    upload.read(),
                    filename=upload.name,
                    model_name=request.POST.get("model_name", ""),
                    language=request.POST.get("language", ""),
                    thinking=request.POST.get("thinking") == "on",
                    model_category=request.POST.get("category", ""),
                    user=request.user,
                )
            except ImportRejected as rejected:
                problems = [str(p) for p in rejected.problems]
            else:
                messages.success(
                    request, f"Imported {run.total_items} items as run “{run}”."
                )
                return redirect("judging:evaluation_run", pk=run.pk)
    return render(
        request,
        "judging/evaluation/import_run.html",
        {"benchmark": benchmark, "problems": problems, "form": form},
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
    }
    if request.htmx:
        response = render(request, "judging/evaluation/run.html#stage-counts", context)
        return stop_polling_unless(run.is_active, response)
    context["pending"] = reports.response_details(pending_responses(run))
    context["waived"] = run.responses.filter(waived_at__isnull=False).select_related(
        "item", "waived_by"
    )
    return render(request, "judging/evaluation/run.html", context)


@manager_required
def export_run_inspect(request, pk):
    run = get_object_or_404(EvaluationRun.objects.select_related("benchmark"), pk=pk)
    response = HttpResponse(inspect_eval_file(run), content_type="application/zip")
    filename = f"{run.benchmark.slug}-run-{run.pk}.eval"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@manager_required
def check_table(request):
    """A pasted summary table (a paper's, an imported one, a leaderboard CSV) and
    the rows whose numbers cannot all be true."""
    form = CheckTableForm(request.POST or None)
    result = None
    if request.method == "POST" and form.is_valid():
        result = consistency.check_table(
            form.cleaned_data["summary"],
            rates_after_sv=form.cleaned_data["rates_after_sv"],
        )
    return render(
        request,
        "judging/evaluation/check_table.html",
        {"form": form, "result": result},
        status=400 if form.errors else 200,
    )


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
        messages.success(request, f"Waived {count} pending item(s).")
    return redirect("judging:evaluation_run", pk=run.pk)


@require_POST
@manager_required
def retry(request, pk):
    run = get_object_or_404(EvaluationRun, pk=pk)
    try:
        count = do_retry_pending(run)
    except EvaluationActionError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Asking again for {count} pending item(s).")
    return redirect("judging:evaluation_run", pk=run.pk)


@require_POST
@manager_required
def cancel(request, pk):
    run = get_object_or_404(EvaluationRun, pk=pk)
    try:
        do_cancel_evaluation(run)
    except ValidationError as error:
        messages.error(request, error.messages[0])
    else:
        messages.success(request, "Run cancelled; what it recorded is kept.")
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
        messages.success(request, f"Category of {model_name} saved.")
    return redirect(_leaderboard_url(benchmark, request.POST.get("lang")))


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
            return redirect(_leaderboard_url(benchmark, request.POST.get("lang")))
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
            f"Difficulty from a panel of {len(panel)} runs written to {changed} items.",
        )
    return redirect(_leaderboard_url(benchmark, request.POST.get("lang")))


@manager_required
def item_subsets(request, slug):
    """Saved subsets, and deriving a new one: the first POST previews what the
    rule keeps, the second (confirm) saves it."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    runs = reports.benchmark_runs(benchmark)
    # Solved means correct on a binary benchmark, a perfect 3 on the 0–3 rubric.
    binary = benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
    context = {
        "benchmark": benchmark,
        "runs": runs,
        "rules": subsets.RULES,
        "solved_at": 1 if binary else 3,
    }
    if request.method == "POST":
        ids = {int(pk) for pk in request.POST.getlist("run") if pk.isdigit()}
        chosen = [run for run in runs if run.pk in ids]
        rule = request.POST.get("rule", "")
        name = slugify(request.POST.get("name", ""))[:100]
        solved_at = _positive_id(request.POST.get("solved_at", "3"))
        context.update(chosen=ids, rule=rule, name=name, solved_at=solved_at)
        try:
            if request.POST.get("confirm") == "1":
                if not name:
                    raise EvaluationActionError("Name the subset (letters, digits, -).")
                subset = do_derive_subset(
                    benchmark,
                    name=name,
                    rule=rule,
                    runs=chosen,
                    solved_at=solved_at,
                    user=request.user,
                )
                messages.success(request, f"Saved {subset}.")
                return redirect(
                    reverse("judging:leaderboard", args=[benchmark.slug])
                    + f"?subset={subset.pk}"
                )
            context["preview"] = check_derive_subset(
                benchmark, rule=rule, runs=chosen, solved_at=solved_at
            )
        except EvaluationActionError as error:
            context["error"] = str(error)
    context["subsets"] = benchmark.subsets.select_related("created_by")
    return render(request, "judging/evaluation/subsets.html", context)


def _leaderboard_url(benchmark, language) -> str:
    url = reverse("judging:leaderboard", args=[benchmark.slug])
    return f"{url}?lang={language}" if language in benchmark.languages else url


def _language(query, benchmark) -> str | None:
    """The `lang` asked for — one of the benchmark's languages — or None (the
    report's default); anything else is a 404, never echoed into a page or a file
    name."""
    language = query.get("lang") or None
    if language is not None and language not in benchmark.languages:
        raise Http404(f"{benchmark.name} has no such language.")
    return language


def _subset(query, benchmark):
    """The saved subset `subset` names (an id of one of the benchmark's), or None;
    anything else is a 404."""
    if not query.get("subset"):
        return None
    return get_object_or_404(benchmark.subsets, pk=_positive_id(query.get("subset")))


def _positive_id(value) -> int:
    """A primary key from a query string; a 404 for anything else."""
    if not (value or "").isdigit() or not 0 < int(value) < 2**63:
        raise Http404("No such record.")
    return int(value)
