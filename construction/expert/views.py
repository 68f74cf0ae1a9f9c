"""The forum pipeline's pages: the experts' verification queue (one item at a
time, keyboard first, each leased to one expert through reviewqueue) and the
manager's two steps, opening the verification and releasing the items."""

from functools import partial

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from benchmark.formats import LETTERS
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from construction.expert.actions import (
    VERDICTS,
    do_open_expert_review,
    do_release_forum,
    do_verify_item,
    expert_queue,
    waiting,
)
from construction.expert.forms import ExpertVerdictForm
from construction.models import Stage, StageDecision
from reviewqueue import engine
from reviewqueue.keys import BACK, Key
from reviewqueue.views import ReviewScreen

EXPERT_KEYS = [
    Key(("a",), gettext_lazy("Approve: correct, relevant and hard enough")),
    Key(("e",), gettext_lazy("Edit… (Ctrl+Enter saves the edit)")),
    Key(("r",), gettext_lazy("Reject… (type why, Enter rejects)")),
    Key(("n",), gettext_lazy("Next item, deciding nothing (another expert takes it)")),
    BACK,
]


@require_POST
@role_required(Role.MANAGER)
def open_review(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        opened = do_open_expert_review(benchmark)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request,
            _("%(count)d item(s) opened for expert verification.") % {"count": opened},
        )
    return redirect("construction:page", slug=slug)


@require_POST
@role_required(Role.MANAGER)
def release(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        result = do_release_forum(benchmark, user=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, str(result))
    return redirect("construction:page", slug=slug)


def _queue_screen(benchmark) -> ReviewScreen:
    return ReviewScreen(
        queue=expert_queue(benchmark.pk),
        candidates=waiting(benchmark.pk),
        page_url=reverse("construction:forum_review", args=[benchmark.slug]),
        render=partial(_screen, benchmark=benchmark),
    )


@role_required(Role.EXPERT)
def review_page(request, slug: str):
    """A GET shows the item the expert holds (or `?item=`, one they decided);
    a POST `action=next` leases the next (the page asks on load)."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return _queue_screen(benchmark).page(request, request.GET.get("item", ""))


@require_POST
@role_required(Role.EXPERT)
def verify(request, slug: str, pk: int):
    """Approve, edit, reject (with the reason) or pass over one item; then the
    next."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    decision = get_object_or_404(
        StageDecision, pk=pk, stage=Stage.EXPERT, candidate__source__benchmark=benchmark
    )

    def decide() -> str:
        form = ExpertVerdictForm(request.POST)
        if not form.is_valid():
            raise ValidationError(_("Approve, edit or reject."))
        outcome = form.cleaned_data["outcome"]
        do_verify_item(
            decision,
            outcome,
            reason=form.cleaned_data["reason"],
            edit=form.edit(),
            user=request.user,
        )
        return _("Candidate %(id)d %(verdict)s.") % {
            "id": decision.candidate_id,
            "verdict": VERDICTS[outcome],
        }

    return _queue_screen(benchmark).submit(request, decision.pk, decide)


def item_view(decision_id: int) -> dict:
    """What the expert sees: the post with its metadata and screenshots, the
    extracted pair and the converted item, options lettered."""
    decision = StageDecision.objects.select_related(
        "candidate__source", "decided_by"
    ).get(pk=decision_id)
    candidate = decision.candidate
    form = candidate.form
    correct = set(form.get("correct") or [])
    return {
        "decision": decision,
        "candidate": candidate,
        "post": candidate.source,
        "form": form,
        "options": [
            (LETTERS[i], option, LETTERS[i] in correct)
            for i, option in enumerate(form.get("options") or [])
        ],
        "options_text": "\n".join(form.get("options") or []),
        "key_points_text": "\n".join(form.get("key_points") or []),
        "waiting": waiting(candidate.source.benchmark_id).count(),
    }


def _screen(request, decision_id, *, benchmark, error="", asked=True):
    queue = expert_queue(benchmark.pk)
    template = "construction/forum_review.html"
    if request.htmx:
        template += "#task"
    return render(
        request,
        template,
        {
            "benchmark": benchmark,
            "item": item_view(decision_id) if decision_id else None,
            "queue_asked": asked,
            "error": error,
            "posted": request.POST if error else None,
            "previous_id": engine.previous(
                engine.done_by(queue, request.user), decision_id
            ),
            "keys": EXPERT_KEYS,
        },
        status=400 if error else 200,
    )
