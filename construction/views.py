"""The construction page of a benchmark: its sources, stage runs and funnel."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected
from construction.actions import do_import_sources
from construction.forms import SourceImportForm


def _page_context(benchmark: Benchmark, **extra) -> dict:
    return {
        "benchmark": benchmark,
        "source_count": benchmark.sources.count(),
        "import_form": SourceImportForm(),
        **extra,
    }


@role_required(Role.MANAGER)
def construction_page(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(request, "construction/page.html", _page_context(benchmark))


@require_POST
@role_required(Role.MANAGER)
def import_sources(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = SourceImportForm(request.POST, request.FILES)
    if not form.is_valid():
        context = _page_context(benchmark, import_form=form)
        return render(request, "construction/page.html", context, status=400)
    upload = form.cleaned_data["file"]
    try:
        result = do_import_sources(benchmark, upload.read(), upload.name)
    except ImportRejected as rejected:
        context = _page_context(benchmark, rejected=rejected, filename=upload.name)
        return render(request, "construction/page.html", context, status=400)
    messages.success(request, f"{upload.name}: {result}")
    return redirect("construction:page", slug=slug)
