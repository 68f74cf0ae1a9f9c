from django.conf import settings
from django.db.models import Count
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from assay.downloads import csv_download, zip_download
from assay.htmx import stop_polling_unless
from benchmark.browse import ItemFilterForm, browse_dimensions, browse_items, item_page
from benchmark.exporting import FORMATS, iter_export, release_gaps
from benchmark.hf_release import DEFAULT_LICENSE, LICENSES, release_files
from benchmark.import_forms import ImportForm
from benchmark.import_jobs import bytes_read, do_queue_import
from benchmark.importing import do_import_items
from benchmark.models import Benchmark, ImportJob, Item
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected


@role_required(*Role.values)
def home(request):
    benchmarks = Benchmark.objects.annotate(item_count=Count("items")).order_by("name")
    return render(request, "benchmark/home.html", {"benchmarks": benchmarks})


@role_required(*Role.values)
def item_list(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = ItemFilterForm(benchmark, browse_dimensions(benchmark), request.GET)
    result = browse_items(benchmark, form, request.GET.get("page"))
    template = "benchmark/item_list.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    context = {
        "benchmark": benchmark,
        "form": form,
        "result": result,
        "compact": request.GET.get("density") == "compact",
    }
    return render(request, template, context)


@role_required(*Role.values)
def item_detail(request, slug, item_id):
    item = get_object_or_404(
        Item.objects.select_related("benchmark"), benchmark__slug=slug, pk=item_id
    )
    return render(request, "benchmark/item_detail.html", item_page(item))


@role_required(Role.MANAGER)
def import_items(request):
    form = ImportForm(request.POST or None, request.FILES or None)
    context = {"form": form, "in_request_max": settings.IMPORT_IN_REQUEST_MAX_BYTES}
    status = 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > settings.IMPORT_IN_REQUEST_MAX_BYTES:
            job = do_queue_import(
                upload,
                slug=form.target_slug,
                name=form.cleaned_data["new_name"],
                update=form.cleaned_data["update"],
                layout=form.cleaned_data["layout"],
                user=request.user,
            )
            return redirect("benchmark:import_job", job_id=job.pk)
        try:
            context["summary"] = do_import_items(
                upload,
                slug=form.target_slug,
                name=form.cleaned_data["new_name"],
                update=form.cleaned_data["update"],
                layout=form.cleaned_data["layout"],
                user=request.user,
                filename=upload.name,
            )
        except ImportRejected as rejected:
            context["rejected"], status = rejected, 400
        context["filename"] = upload.name
    elif request.method == "POST":
        status = 400
    return render(request, "benchmark/import.html", context, status=status)


@role_required(Role.MANAGER)
def import_job(request, job_id):
    job = get_object_or_404(ImportJob, pk=job_id)
    # The import may create the benchmark, so the job names it by slug only.
    benchmark_name = (
        Benchmark.objects.filter(slug=job.slug).values_list("name", flat=True).first()
    )
    context = {
        "job": job,
        "bytes_read": bytes_read(job),
        "benchmark_name": benchmark_name or job.slug,
    }
    if request.htmx:
        response = render(request, "benchmark/import_job.html#status", context)
        return stop_polling_unless(not job.is_finished, response)
    return render(request, "benchmark/import_job.html", context)


@role_required(Role.MANAGER)
def export_items(request):
    benchmarks = Benchmark.objects.annotate(item_count=Count("items")).order_by("name")
    rows = [
        {"benchmark": benchmark, "gaps": release_gaps(benchmark)}
        for benchmark in benchmarks
    ]
    context = {"rows": rows, "licenses": LICENSES, "default_license": DEFAULT_LICENSE}
    return render(request, "benchmark/export.html", context)


@role_required(Role.MANAGER)
def export_download(request, slug, fmt):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return export_file(
        benchmark,
        fmt,
        release=request.GET.get("release") == "1",
        license_id=request.GET.get("license"),
    )


def export_file(benchmark, fmt, *, release=False, license_id=None):
    """The export download (this page's and the REST API's): CSV and JSON Lines
    streamed, the Hugging Face release zipped."""
    if fmt == "hf":
        return _hf_release_download(benchmark, license_id)
    if fmt not in FORMATS:
        raise Http404("Unknown export format")
    pieces = iter_export(benchmark, fmt, release=release)
    name = f"{benchmark.slug}{'-release' if release else ''}.{fmt}"
    if fmt == "csv":
        return csv_download(pieces, name)
    response = StreamingHttpResponse(
        (piece.encode("utf-8") for piece in pieces),
        content_type="application/jsonl; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _hf_release_download(benchmark, license_id):
    # The release's files are made whole (a Parquet file is written complete); the
    # zip of them is streamed.
    if (license_id or DEFAULT_LICENSE) not in LICENSES:
        raise Http404("Unknown license")
    files, _report = release_files(benchmark, license_id or DEFAULT_LICENSE)
    return zip_download(files.items(), f"{benchmark.slug}-hf-release.zip")
