"""Runs in and out of other tools' files: the Inspect AI log download, and the
import page, whose mapping step (scorer or metric, the value map, epochs, item
ids) re-renders its preview as the form changes. Managers only."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from assay.downloads import zip_download
from benchmark.models import Benchmark
from benchmark.notes import translated
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import EvaluationRun
from judging.interop import score_maps
from judging.interop.detect import FORMAT_NAMES
from judging.interop.exporting import inspect_eval_members
from judging.interop.importing import PENDING, Choices, make_reader, preview_file

manager_required = role_required(Role.MANAGER)
MAP_PREFIX = "map:"


@manager_required
def export_run_inspect(request, pk):
    run = get_object_or_404(EvaluationRun.objects.select_related("benchmark"), pk=pk)
    filename = f"{run.benchmark.slug}-run-{run.pk}.eval"
    return zip_download(inspect_eval_members(run), filename)


def _number(text: str) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def _choices(request) -> Choices:
    """The mapping step's answers. A value map posted for another scorer than
    the one now chosen is dropped, so switching scorers starts from the default."""
    post = request.POST
    scorer = post.get("scorer", "")
    values = {}
    if post.get("map_for") == scorer:
        for key, target in post.items():
            if key.startswith(MAP_PREFIX):
                value = key.removeprefix(MAP_PREFIX)
                values[value] = None if target == PENDING else _number(target)
    results = request.FILES.get("results")
    return Choices(
        scorer=scorer,
        values=values,
        full=_number(post.get("full", "")) if post.get("map_for") == scorer else None,
        epoch=_number(post.get("epoch", "")),
        ids=post.get("ids", ""),
        filter_name=post.get("filter", ""),
        results=results.read() if results else b"",
        assume_no_violation=post.get("assume_no_violation") == "on",
    )


def _targets(top: int) -> list[tuple[str, str]]:
    if top == score_maps.BINARY_TOP:
        return [("0", _("incorrect")), ("1", _("correct")), (PENDING, _("pending"))]
    return [(str(n), str(n)) for n in range(top + 1)] + [(PENDING, _("pending"))]


@manager_required
def import_run(request, slug):
    """Upload a run file; its format is detected and, for Inspect and lm-eval,
    the mapping step shows what each score becomes before anything is written."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    problems, preview, form = [], None, {"language": benchmark.source_language}
    if request.method == "POST":
        form = request.POST
        upload = request.FILES.get("file")
        if upload is None:
            problems = [_("Choose a run file to import.")]
        else:
            data = upload.read()
            choices = _choices(request)
            preview = preview_file(benchmark, data, choices)
            if request.htmx:
                return render(
                    request,
                    "judging/interop/import_run.html#mapping",
                    _context(benchmark, preview, form, problems),
                )
            try:
                run = do_import_run(
                    benchmark,
                    data,
                    filename=upload.name,
                    model_name=form.get("model_name", ""),
                    language=form.get("language", ""),
                    thinking=form.get("thinking") == "on",
                    model_category=form.get("category", ""),
                    user=request.user,
                    reader=make_reader(benchmark, data, choices),
                )
            except ImportRejected as rejected:
                problems = [p.translated() for p in rejected.problems]
            else:
                messages.success(
                    request,
                    _("Imported %(count)s answers as run “%(run)s”.")
                    % {"count": run.total_items, "run": run},
                )
                return redirect("judging:evaluation_run", pk=run.pk)
    return render(
        request,
        "judging/interop/import_run.html",
        _context(benchmark, preview, form, problems),
    )


def _context(benchmark, preview, form, problems) -> dict:
    top = preview.top if preview else score_maps.RUBRIC_TOP
    return {
        "benchmark": benchmark,
        "problems": problems,
        "form": form,
        "preview": preview,
        "format_name": translated(FORMAT_NAMES.get(preview.format, ""))
        if preview
        else "",
        "targets": _targets(top),
        "binary": top == score_maps.BINARY_TOP,
        "map_prefix": MAP_PREFIX,
        "epoch_numbers": range(1, preview.epochs + 1) if preview else [],
        "language_differs": bool(
            preview
            and preview.language
            and preview.language != form.get("language", "")
        ),
    }
