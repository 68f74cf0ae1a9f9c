"""Leaderboard pages: the report tables with slices, CIs and heatmaps, a table's
download, a heatmap cell's items, and the consistency check of a pasted summary
table. Managers only."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render

from assay.downloads import csv_download
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from judging.evaluation.models import EvaluationRun
from judging.evaluation.query import positive_id
from judging.evaluation.scores import benchmark_runs
from judging.leaderboard import consistency
from judging.leaderboard.building import cached_report
from judging.leaderboard.drilldown import cell_details
from judging.leaderboard.forms import CheckTableForm
from judging.leaderboard.presenting import leaderboard_summary, leaderboard_tables

manager_required = role_required(Role.MANAGER)


@manager_required
def leaderboard(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    grouped = request.GET.get("group", "1") != "0"
    subset = subset_asked(request.GET, benchmark)
    report, tables_html = leaderboard_tables(
        benchmark, language_asked(request.GET, benchmark), grouped, subset
    )
    context = {
        "benchmark": benchmark,
        "report": report,
        "grouped": grouped,
        "tables_html": tables_html,
        "summary": leaderboard_summary(report) if report.runs else None,
        "all_runs": benchmark_runs(benchmark),
        "models": sorted({(r.model_name, r.model_category) for r in report.runs}),
        "subsets": benchmark.subsets.all(),
        "subset": subset,
    }
    return render(request, "judging/leaderboard/leaderboard.html", context)


@manager_required
def table_download(request, slug, table, fmt):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    report = cached_report(
        benchmark,
        language=language_asked(request.GET, benchmark),
        subset=subset_asked(request.GET, benchmark),
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
        EvaluationRun, pk=positive_id(request.GET.get("run")), benchmark=benchmark
    )
    dimension = request.GET.get("dimension", "")
    group = request.GET.get("group", "")
    try:
        cell = cell_details(benchmark, run, dimension, group)
    except ValueError as error:
        raise Http404(str(error)) from None
    return render(
        request,
        "judging/leaderboard/cell_items.html",
        {"benchmark": benchmark, "run": run, "cell": cell},
    )


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
        "judging/leaderboard/check_table.html",
        {"form": form, "result": result},
        status=400 if form.errors else 200,
    )


def language_asked(query, benchmark) -> str | None:
    """The `lang` asked for — one of the benchmark's languages — or None (the
    report's default); anything else is a 404, never echoed into a page or a file
    name."""
    language = query.get("lang") or None
    if language is not None and language not in benchmark.languages:
        raise Http404(f"{benchmark.name} has no such language.")
    return language


def subset_asked(query, benchmark):
    """The saved subset `subset` names (an id of one of the benchmark's), or None;
    anything else is a 404."""
    if not query.get("subset"):
        return None
    return get_object_or_404(benchmark.subsets, pk=positive_id(query.get("subset")))
