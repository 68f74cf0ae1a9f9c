"""The paper set as one download. Managers only."""

from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.paper.collect import PRESETS, paper_set
from assay.downloads import zip_download
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required


@role_required(Role.MANAGER)
def paper_archive(request, slug):
    """Every paper table and figure with its manifest, as one zip (`manage.py
    paper_tables` writes the same files to a folder)."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    preset = request.GET.get("preset") or None
    if preset is not None and preset not in PRESETS:
        raise Http404("No such preset.")
    files = paper_set(benchmark, preset=preset).files
    suffix = f"-{preset}" if preset else ""
    return zip_download(
        sorted(files.items()), f"{benchmark.slug}-paper-tables{suffix}.zip"
    )
