"""The campaign's exchange with Label Studio and Argilla: the export download and
the grade import page. Managers only.

The import is two steps when the file names annotators Assay cannot tell
(Label Studio's numeric user ids, Argilla's UUIDs): the uploaded files wait in the
cache under a random token while the page asks which Assay user each annotator is;
the second POST imports with that mapping, all or nothing."""

import secrets

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from annotation.interop import label_studio
from annotation.interop.annotators import describe
from annotation.interop.grades import GRADING_KINDS
from annotation.interop.tools import (
    ARGILLA,
    LABEL_STUDIO,
    TOOLS,
    annotators_to_map,
    export_files,
    import_file,
)
from annotation.models import Campaign
from assay.downloads import zip_download
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected

UPLOAD_SECONDS = 3600
TOOL_NAMES = {LABEL_STUDIO: "Label Studio", ARGILLA: "Argilla"}

manager_required = role_required(Role.MANAGER)


@manager_required
def export_for_tool(request, campaign_id, tool):
    if tool not in TOOLS:
        raise Http404("Export for label-studio or argilla.")
    annotators = request.GET.get("annotators", label_studio.SYNTHETIC_EMAIL)
    if annotators not in label_studio.ANNOTATORS:
        raise Http404("annotators is synthetic, predictions or email.")
    campaign = get_object_or_404(Campaign, pk=campaign_id, kind__in=GRADING_KINDS)
    files = export_files(campaign, tool, annotators)
    return zip_download(files.items(), f"campaign-{campaign.pk}-{tool}.zip")


def _upload_key(campaign: Campaign, token: str) -> str:
    return f"grade-import:{campaign.pk}:{token}"


def _read_uploads(request) -> tuple[str, bytes, bytes | None] | None:
    tool = request.POST.get("tool")
    upload = request.FILES.get("file")
    if tool not in TOOLS or upload is None:
        return None
    users = request.FILES.get("users_file")
    return tool, upload.read(), users.read() if users else None


@manager_required
def import_grades(request, campaign_id):
    campaign = get_object_or_404(Campaign, pk=campaign_id, kind__in=GRADING_KINDS)
    context = {"campaign": campaign, "tools": TOOL_NAMES}
    if request.method != "POST":
        return render(request, "annotation/import_grades.html", context)
    token = request.POST.get("token", "")
    if token:
        upload = cache.get(_upload_key(campaign, token))
        if upload is None:
            messages.error(request, _("The upload has expired; choose the file again."))
            return redirect("annotation:import_grades", campaign.pk)
    else:
        upload = _read_uploads(request)
        if upload is None:
            context["error"] = _("Choose the tool and the file to import.")
            return render(request, "annotation/import_grades.html", context, status=400)
        token = secrets.token_urlsafe(16)
        cache.set(_upload_key(campaign, token), upload, UPLOAD_SECONDS)
    tool, data, users_file = upload
    mapping = {
        key: request.POST[f"user-{index}"]
        for index, key in enumerate(request.POST.getlist("key"))
        if request.POST.get(f"user-{index}")
    }
    # Every annotator that needs a mapping, whether or not one is chosen yet, so a
    # page shown again keeps the choices made.
    needed, known, problems = annotators_to_map(tool, data, users_file, {})
    context |= {"tool": tool, "token": token, "tool_name": TOOL_NAMES[tool]}
    if problems:
        return _rejected(request, context, problems.kept, problems.total)
    if needed:
        _add_mapping_step(context, needed, known, mapping)
        if "import" not in request.POST:
            return render(request, "annotation/import_grades.html", context)
    try:
        summary = import_file(
            campaign, tool, data, users_file=users_file, mapping=mapping
        )
    except ImportRejected as rejected:
        return _rejected(request, context, rejected.problems, rejected.total)
    cache.delete(_upload_key(campaign, token))
    for line in summary.lines():
        messages.success(request, line)
    return redirect("annotation:campaign", campaign.pk)


def _add_mapping_step(context, needed, known, mapping):
    context["annotators"] = [
        {
            "key": key,
            "name": describe(key),
            "email": known.get(key, ""),
            "grades": count,
            "chosen": mapping.get(key, ""),
        }
        for key, count in sorted(needed.items())
    ]
    context["users"] = list(
        get_user_model()
        .objects.filter(is_active=True)
        .order_by("username")
        .values_list("username", flat=True)
    )


def _rejected(request, context, problems, total):
    context |= {"problems": problems, "problem_total": total}
    return render(request, "annotation/import_grades.html", context, status=400)
