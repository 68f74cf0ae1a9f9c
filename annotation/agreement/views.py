"""Judge-reliability report pages, their downloads and the disagreement browser.

Managers only. Each view parses, checks the role, calls one loader, renders.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.agreement.loading import (
    DISAGREEMENT_KINDS,
    REPORT_TITLES,
    build_report,
    describe_responses,
    disagreeing_response_ids,
)
from annotation.agreement.tables import FORMATS, SCORE_SCALE, records
from assay.downloads import csv_download
from benchmark.actions import do_set_kappa_weights
from benchmark.models import Benchmark
from benchmark.notes import Note, translated
from benchmark.roles import Role, role_required
from judging.evaluation.models import EvaluationRun, Response

DISAGREEMENTS_PER_PAGE = 20


@role_required(Role.MANAGER)
def report_index(request):
    benchmarks = Benchmark.objects.order_by("name")
    return render(
        request,
        "annotation/report_index.html",
        {"benchmarks": benchmarks, "titles": REPORT_TITLES},
    )


@role_required(Role.MANAGER)
def report_page(request, slug, name):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if name not in REPORT_TITLES:
        raise Http404(_("No such report."))
    report = build_report(benchmark, name, judges=_judges(request))
    tables = [(t, page_cells(t)) for t in report.tables]
    bars = score_bars(report.table("distributions")) if name == "calibration" else []
    return render(
        request,
        "annotation/report.html",
        {
            "benchmark": benchmark,
            "name": name,
            "report": report,
            "tables": tables,
            "bars": bars,
            "titles": REPORT_TITLES,
            "choice_query": _judge_query(request),
            "weight_choices": Benchmark.KappaWeights.choices,
        },
    )


@require_POST
@role_required(Role.MANAGER)
def report_weights(request, slug, name):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if name not in REPORT_TITLES:
        raise Http404(_("No such report."))
    try:
        do_set_kappa_weights(benchmark, request.POST.get("kappa_weights", ""))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request,
            _(
                "Every agreement report of %(name)s now headlines "
                "%(weights)s-weighted κ."
            )
            % {"name": benchmark.name, "weights": benchmark.kappa_weights},
        )
    return redirect("annotation:report", slug=benchmark.slug, name=name)


def _judges(request) -> tuple[str, ...]:
    """The cross-judge report's chosen judges (`?judge=…` repeated); names that
    match no judge are ignored by the report, which says which set it used."""
    return tuple(name for name in request.GET.getlist("judge") if name)[:64]


def _judge_query(request) -> str:
    query = QueryDict(mutable=True)
    query.setlist("judge", _judges(request))
    return query.urlencode()


def page_cells(table) -> list[list[tuple]]:
    """Each row as (column, text) pairs for the page: a row label the report wrote
    (a Note: "Average", a status) in the reader's language, the rest as every
    download formats it."""
    return [
        [
            (column, translated(value) if isinstance(value, Note) else text)
            for column, value, text in zip(table.columns, row, cells, strict=True)
        ]
        for row, cells in zip(table.rows, table.formatted_rows(), strict=True)
    ]


def score_bars(table) -> list[dict]:
    """Per rater, one bar per score (width = share), from the distributions table."""
    bars = []
    columns = {column.key: column for column in table.columns}
    for row in records(table):
        scores = []
        for score in SCORE_SCALE:
            share = row.get(f"share_{score}")
            scores.append(
                {
                    "score": score,
                    "width": round(100 * share, 1) if share is not None else 0,
                    "text": table.format(columns[f"share_{score}"], share),
                }
            )
        bars.append({"rater": translated(row["rater"]), "scores": scores})
    return bars


@role_required(Role.MANAGER)
def report_download(request, slug, name, fmt):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if name not in REPORT_TITLES or fmt not in FORMATS:
        raise Http404(_("No such report or format."))
    report = build_report(benchmark, name, judges=_judges(request))
    render_format, content_type, extension = FORMATS[fmt]
    table_key = request.GET.get("table") if fmt == "csv" else None
    if table_key is not None and table_key not in {t.slug for t in report.tables}:
        raise Http404(_("No such table in this report."))
    body = render_format(report, table_key) if fmt == "csv" else render_format(report)
    suffix = f"-{table_key}" if table_key else ""
    filename = f"{benchmark.slug}-{name}{suffix}.{extension}"
    if fmt == "csv":
        return csv_download(body, filename)
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@role_required(Role.MANAGER)
def disagreements(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    kind = request.GET.get("kind", "judges")
    if kind not in DISAGREEMENT_KINDS:
        kind = "judges"
    runs = EvaluationRun.objects.filter(benchmark=benchmark).order_by("model_name")
    run_id = request.GET.get("run", "")
    responses = Response.objects.filter(
        pk__in=disagreeing_response_ids(benchmark, kind)
    ).select_related("item", "run", "rendering")
    if run_id.isdigit():
        responses = responses.filter(run_id=int(run_id))
    page = Paginator(
        responses.order_by("run__model_name", "item__external_id", "pk"),
        DISAGREEMENTS_PER_PAGE,
    ).get_page(request.GET.get("page"))
    context = {
        "benchmark": benchmark,
        "kind": kind,
        "kinds": DISAGREEMENT_KINDS,
        "runs": runs,
        "run_id": run_id,
        "page": page,
        "rows": describe_responses(list(page.object_list)),
        "titles": REPORT_TITLES,
    }
    template = "annotation/report_disagreements.html"
    if request.htmx:
        template += "#results"
    return render(request, template, context)
