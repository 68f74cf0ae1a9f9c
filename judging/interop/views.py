"""A run as a file other tools read: the Inspect AI log download. Managers only."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from benchmark.roles import Role, role_required
from judging.evaluation.models import EvaluationRun
from judging.interop.exporting import inspect_eval_file

manager_required = role_required(Role.MANAGER)


@manager_required
def export_run_inspect(request, pk):
    run = get_object_or_404(EvaluationRun.objects.select_related("benchmark"), pk=pk)
    response = HttpResponse(inspect_eval_file(run), content_type="application/zip")
    filename = f"{run.benchmark.slug}-run-{run.pk}.eval"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
