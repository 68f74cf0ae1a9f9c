"""Queue screens (expert grading, adjudication, translation review) and the managers'
campaign pages. Each screen is one view: GET shows a task, POST submits or skips it
and, for HTMX, answers with the next task's partial."""

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST
from django_htmx.http import push_url

from annotation import actions, dashboard, queue, screens
from annotation.forms import CampaignForm
from annotation.models import (
    AdjudicationLabel,
    Assignment,
    Campaign,
    GradingLabel,
    ReviewDecision,
    Task,
)
from annotation.notes import NOTE_MAX
from annotation.progress import campaigns_progress
from assay.downloads import csv_download
from assay.per_language import per_language
from benchmark.csv_writer import csv_lines
from benchmark.models import Label
from benchmark.roles import Role, role_required
from judging.translation.parts import edited_parts
from reviewqueue.engine import StaleRefusal
from reviewqueue.keys import BACK, FORWARD, SKIP, SUBMIT, TO_QUEUE, Key

GRADING_KINDS = (Campaign.Kind.GRADING, Campaign.Kind.SAFETY)
COMMON_KEYS = [BACK, FORWARD, SKIP, TO_QUEUE]
GRADING_COMMON_KEYS = [
    Key(("s", "v"), _("Safe / violating (when asked)")),
    Key(("l",), _("Switch the question's language (the first is the one asked)")),
    SUBMIT,
    *COMMON_KEYS,
]
GRADING_KEYS = [
    Key(("0", "1", "2", "3"), _("Score by the rubric")),
    *GRADING_COMMON_KEYS,
]
BINARY_GRADING_KEYS = [
    Key(("1",), _("Correct")),
    Key(("0",), _("Incorrect")),
    *GRADING_COMMON_KEYS,
]
ADJUDICATION_KEYS = [
    Key(("1", "…", "9", "0"), _("Pick the final label (0 is the tenth)")),
    Key(("l",), _("Switch the question's language")),
    Key(("/",), _("Write a note")),
    SUBMIT,
    *COMMON_KEYS,
]
REVIEW_KEYS = [
    Key(("a",), _("Approve as it is: shows why it was flagged; Enter confirms")),
    Key(
        ("e",),
        _("Edit the translation part by part; Ctrl+Enter saves and approves"),
    ),
    Key(("Tab", "Shift+Tab"), _("In the editor: the next / previous part")),
    Key(("r",), _("Reject; type the reason, Enter submits")),
    *COMMON_KEYS,
]


def _int_or_none(raw):
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def _seconds(request):
    elapsed = _int_or_none(request.POST.get("elapsed_ms"))
    return elapsed / 1000 if elapsed is not None else None


def _corrects(request) -> int | None:
    """The label the screen showed when it was opened on one of my earlier tasks."""
    if request.POST.get("revisit") != "1":
        return None
    return _int_or_none(request.POST.get("corrects"))


def _task_in(campaign, request) -> Task:
    task = queue.task_in(campaign, _int_or_none(request.POST.get("task")))
    if task is None:
        raise Http404(_("No such task in this campaign."))
    return task


def _after_post(request, campaign, task, error):
    """Which task to show after a POST: the same one on error (while it is still
    mine), the next one in my history after a correction, else the queue."""
    if request.POST.get("revisit") != "1" and not error:
        return None
    if error:
        still_mine = Assignment.objects.filter(
            task=task,
            user=request.user,
            status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED],
        ).exists()
        return task.pk if still_mine else None
    return screens.following_task_id(campaign, request.user, task.pk)


# Kept and compared by identity (one per screen): its keys are translated once
# per language and screen (`_key_rows`).
@dataclass(frozen=True, eq=False)
class Screen:
    template: str
    label_model: type
    keys: list
    load: Callable  # (campaign, task id) -> (task, context of the task's content)
    # (what a refused submission posted or None, my label or None) -> which
    # choices the screen shows selected, for screens that render them once per
    # language (`grading_checked`).
    checked: Callable | None = None


@per_language
def _key_rows(screen: Screen) -> list[tuple]:
    """The key dialog's rows, (keys, meaning) with the meaning translated: the
    dialog is on every task the screen shows."""
    return [(key.keys, str(key.meaning)) for key in screen.keys]


def _render(
    request,
    campaign,
    screen: Screen,
    task_id,
    error=None,
    submitted=None,
    claim=True,
    stale=False,
):
    task_id, is_revisit = screens.pick_task(
        campaign, request.user, task_id, claim=claim
    )
    task, content = screen.load(campaign, task_id) if task_id else (None, {})
    context = {
        "campaign": campaign,
        "task": task,
        "is_revisit": is_revisit,
        "queue_asked": claim,
        "error": error,
        # A refused submission shows the task again with what was entered; one
        # refused as stale shows what is saved now, never the refused choice.
        "posted": request.POST if error and not stale else None,
        "keys": _key_rows(screen),
        "note_max": NOTE_MAX,
        "progress": screens.my_progress(campaign, request.user, screen.label_model),
        "mine": screens.my_latest(screen.label_model, task, request.user)
        if is_revisit
        else None,
        **screens.navigation(campaign, request.user, task, is_revisit, submitted),
        **content,
    }
    if screen.checked is not None:
        context.update(screen.checked(context["posted"], context["mine"]))
    template = screen.template
    if request.htmx:
        template += "#task"
    response = render(request, template, context, status=400 if error else 200)
    if request.htmx and not error:
        shown = f"?task={task.pk}" if is_revisit else ""
        response = push_url(response, request.path + shown)
    return response


def _work(request, campaign, screen: Screen, submit):
    """GET shows the task I hold (or `?task=` from my history) and changes nothing;
    POST `action=next` leases me the next task (the page asks on load); any other
    POST skips or submits the posted task with `submit(task)`, then shows what comes
    next."""
    if request.method != "POST":
        return _render(
            request,
            campaign,
            screen,
            _int_or_none(request.GET.get("task")),
            claim=False,
        )
    if request.POST.get("action") == "next":
        return _render(request, campaign, screen, None)
    task = _task_in(campaign, request)
    error = submitted = None
    stale = False
    try:
        if request.POST.get("action") == "skip":
            actions.do_skip(task, request.user, reason=request.POST.get("reason", ""))
        else:
            submit(task)
            submitted = task.pk
    except ValidationError as exc:
        error = " ".join(exc.messages)
        stale = isinstance(exc, StaleRefusal)
    shown = _after_post(request, campaign, task, error)
    return _render(
        request,
        campaign,
        screen,
        shown,
        error,
        submitted if shown is None and not error else None,
        stale=stale,
    )


def _task_with(campaign, task_id, *related) -> Task:
    task = Task.objects.select_related(*related).get(pk=task_id)
    task.campaign = campaign
    return task


def _grading_view(campaign, task_id):
    # The hot path of the benchmark (every expert's Enter): one plain statement.
    task, view = queue.grading_view(campaign, task_id)
    view["languages"] = screens.item_languages(task.item_id, view)
    return task, {"view": view, **screens.grading_choices(campaign.is_binary)}


def _adjudication_view(campaign, task_id):
    task = _task_with(campaign, task_id, "item", "consensus__dimension")
    return task, {"view": screens.adjudication_task(task, campaign.hide_model_names)}


def _review_view(campaign, task_id):
    task = _task_with(campaign, task_id, "item", "rendering")
    return task, {"view": screens.review_task(task)}


GRADING = Screen(
    "annotation/grade.html",
    GradingLabel,
    GRADING_KEYS,
    _grading_view,
    screens.grading_checked,
)
BINARY_GRADING = Screen(
    "annotation/grade.html",
    GradingLabel,
    BINARY_GRADING_KEYS,
    _grading_view,
    screens.grading_checked,
)
ADJUDICATION = Screen(
    "annotation/adjudicate.html",
    AdjudicationLabel,
    ADJUDICATION_KEYS,
    _adjudication_view,
)
REVIEW = Screen("annotation/review.html", ReviewDecision, REVIEW_KEYS, _review_view)


@role_required(Role.EXPERT)
def grade(request, campaign_id):
    campaign = screens.campaign_for_worker(campaign_id, request.user, GRADING_KINDS)

    def submit(task):
        safety = {"s": False, "v": True}.get(request.POST.get("safety", ""))
        actions.do_submit_grading(
            task,
            request.user,
            score=_int_or_none(request.POST.get("score"))
            if campaign.asks_score
            else None,
            safety_violation=safety if campaign.asks_safety else None,
            seconds=_seconds(request),
            corrects=_corrects(request),
        )

    return _work(
        request, campaign, BINARY_GRADING if campaign.is_binary else GRADING, submit
    )


@role_required(Role.ADJUDICATOR)
def adjudicate(request, campaign_id):
    campaign = screens.campaign_for_worker(
        campaign_id, request.user, [Campaign.Kind.ADJUDICATION]
    )

    def submit(task):
        label = Label.objects.filter(pk=_int_or_none(request.POST.get("label"))).first()
        if label is None:
            raise ValidationError(_("Pick the final label (number keys)."))
        actions.do_submit_adjudication(
            task,
            request.user,
            label=label,
            note=request.POST.get("note", "").strip(),
            seconds=_seconds(request),
            corrects=_corrects(request),
        )

    return _work(request, campaign, ADJUDICATION, submit)


@role_required(Role.REVIEWER)
def review(request, campaign_id):
    campaign = screens.campaign_for_worker(
        campaign_id, request.user, [Campaign.Kind.TRANSLATION_REVIEW]
    )

    def submit(task):
        options, key_points = edited_parts(request.POST)
        actions.do_submit_review(
            task,
            request.user,
            decision=request.POST.get("decision", ""),
            reason=request.POST.get("reason", "").strip(),
            question=request.POST.get("question", ""),
            answer=request.POST.get("answer", ""),
            options=options,
            key_points=key_points,
            seconds=_seconds(request),
            corrects=_corrects(request),
            flags_acknowledged=request.POST.get("flags_acknowledged") == "1",
        )

    return _work(request, campaign, REVIEW, submit)


@role_required(*Role.values)
def queues(request):
    """Every signed-in person's start page for review work."""
    campaigns = list(screens.campaigns_for(request.user))
    progress = campaigns_progress(campaigns)
    rows = [
        {
            "campaign": campaign,
            "screen": reverse(screens.KIND_SCREEN[campaign.kind], args=[campaign.pk]),
            "progress": progress[campaign.pk],
        }
        for campaign in campaigns
    ]
    return render(
        request,
        "annotation/queues.html",
        {"rows": rows, "new_kinds": Campaign.Kind.choices},
    )


@role_required(Role.MANAGER)
def campaign_new(request):
    kind = request.GET.get("kind") or request.POST.get("kind") or "grading"
    scale = request.GET.get("scale") or request.POST.get("scale") or "rubric"
    if kind not in Campaign.Kind.values or scale not in Campaign.Scale.values:
        raise Http404(_("Unknown campaign kind or scale."))
    form = CampaignForm(request.POST or None, kind=kind, scale=scale)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = actions.do_create_campaign_of_kind(
                kind, created_by=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            count = campaign.tasks.count()
            messages.success(
                request,
                ngettext(
                    "Campaign created with %(count)d task.",
                    "Campaign created with %(count)d tasks.",
                    count,
                )
                % {"count": count},
            )
            return redirect("annotation:campaign", campaign.pk)
    return render(
        request,
        "annotation/campaign_new.html",
        {
            "form": form,
            "kind": kind,
            "kinds": Campaign.Kind.choices,
            "scale": scale,
            "scales": Campaign.Scale.choices,
        },
        status=400 if form.errors else 200,
    )


@role_required(Role.MANAGER)
def campaign(request, campaign_id):
    campaign = get_object_or_404(
        Campaign.objects.select_related("benchmark"), pk=campaign_id
    )
    context = dashboard.campaign_dashboard(campaign, request.GET.get("labels_page"))
    context["screen"] = reverse(screens.KIND_SCREEN[campaign.kind], args=[campaign.pk])
    template = "annotation/campaign.html"
    if request.htmx:
        template += "#live"
    return render(request, template, context)


@require_POST
@role_required(Role.MANAGER)
def campaign_status(request, campaign_id):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    status = request.POST.get("status", "")
    if status == Campaign.Status.CLOSED and request.POST.get("confirm") != "yes":
        messages.error(
            request, _("Closing was not confirmed; the campaign stays open.")
        )
        return redirect("annotation:campaign", campaign.pk)
    try:
        actions.do_set_campaign_status(campaign, status)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request,
            _("Campaign closed.")
            if campaign.status == Campaign.Status.CLOSED
            else _("Campaign open."),
        )
    return redirect("annotation:campaign", campaign.pk)


@require_POST
@role_required(Role.MANAGER)
def release_lease(request, assignment_id):
    assignment = get_object_or_404(Assignment, pk=assignment_id)
    try:
        actions.do_release_lease(assignment)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, _("Lease released; the task is back in the queue."))
    return redirect("annotation:campaign", assignment.campaign_id)


@require_POST
@role_required(Role.MANAGER)
def reassign(request, task_id):
    task = get_object_or_404(Task.objects.select_related("campaign"), pk=task_id)
    username = request.POST.get("username", "").strip()
    user = None
    if username:
        user = task.campaign.assignees.filter(username=username).first()
        if user is None:
            messages.error(
                request,
                _("%(user)s is not assigned to this campaign.") % {"user": username},
            )
            return redirect("annotation:campaign", task.campaign_id)
    try:
        actions.do_reassign(task, user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request,
            (
                _("Task %(number)s reserved for %(user)s.")
                % {"number": task.position + 1, "user": user}
            )
            if user
            else _("Task %(number)s is open to everyone again.")
            % {"number": task.position + 1},
        )
    return redirect("annotation:campaign", task.campaign_id)


@role_required(Role.MANAGER)
def export(request, campaign_id, fmt):
    if fmt not in ("csv", "jsonl"):
        raise Http404(_("Export as .csv or .jsonl."))
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if request.GET.get("per") == "response":
        if not campaign.is_binary:
            raise Http404(
                _("Votes per response are exported from binary campaigns only.")
            )
        rows, columns = dashboard.vote_rows(campaign), dashboard.VOTE_COLUMNS
        filename = f"campaign-{campaign.pk}-votes.{fmt}"
    else:
        rows, columns = dashboard.export_rows(campaign), dashboard.EXPORT_COLUMNS
        filename = f"campaign-{campaign.pk}-labels.{fmt}"
    if fmt == "csv":
        return csv_download(_csv_lines(columns, rows), filename)
    body = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    response = StreamingHttpResponse(body, content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _csv_lines(columns, rows):
    return csv_lines(columns, ([row[column] for column in columns] for row in rows))
