"""The construction page of a benchmark (sources, stage runs with live progress,
the funnel, reject reasons), the review of post-processing flags and the
candidate page. Managers only."""

from functools import partial

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from assay.downloads import csv_download
from assay.htmx import stop_polling_unless
from benchmark.csv_writer import csv_text
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected
from construction.actions import (
    do_import_sources,
    do_review_flag,
    do_start_stage,
    flags_queue,
    is_forum_benchmark,
    shipped_prompts,
)
from construction.audits.actions import AUDITED_STAGES
from construction.expert.actions import forum_progress
from construction.forms import (
    ReleaseSampleForm,
    ReviewForm,
    SourceImportForm,
    StageRunForm,
)
from construction.funnel import ALL, HEADER
from construction.models import Candidate, Stage, StageDecision, StageRun
from construction.pipeline import stages_run
from construction.presets import INDUSTRYBENCH, preset_progress
from construction.release import do_draw_release_sample, do_open_pool, do_release
from construction.report import (
    answer_history,
    flag_view,
    funnel_report,
    funnel_rows,
    pending_flags,
    pending_generations,
    refined_candidates,
    reject_reasons,
    run_progress,
)
from judging.reporting.figures import write as write_figure
from reviewqueue import engine
from reviewqueue.keys import BACK, Key
from reviewqueue.views import ReviewScreen

RUNS_SHOWN = 20
REFINED_SHOWN = 50


def _runs_context(benchmark: Benchmark) -> dict:
    runs = benchmark.stage_runs.select_related("endpoint", "template")[:RUNS_SHOWN]
    return {
        "runs": [(run, run_progress(run)) for run in runs],
        # The runs table polls while a run is active and stops (286) after.
        "polling": any(run.is_active for run in runs),
    }


def _render_page(request, benchmark: Benchmark, status: int = 200, **extra):
    context = {
        "benchmark": benchmark,
        "source_count": benchmark.sources.count(),
        "import_form": SourceImportForm(),
        "run_form": StageRunForm(),
        "sample_form": ReleaseSampleForm(),
        "preset": INDUSTRYBENCH,
        "preset_steps": preset_progress(INDUSTRYBENCH, stages_run(benchmark.pk)),
        **_runs_context(benchmark),
        "funnel": [
            (Stage(row.stage).label, row)
            for row in funnel_rows(benchmark.pk)
            if row.group == ALL
        ],
        "rejects": reject_reasons(benchmark.pk),
        "refined": refined_candidates(benchmark.pk)[:REFINED_SHOWN],
        "refined_total": refined_candidates(benchmark.pk).count(),
        "pending_generations": pending_generations(benchmark.pk)[:50],
        "flags_waiting": pending_flags(benchmark.pk).count(),
        "forum": forum_progress(benchmark) if is_forum_benchmark(benchmark) else None,
        "stage_pages": [(stage, Stage(stage).label) for stage in AUDITED_STAGES],
        **extra,
    }
    return render(request, "construction/page.html", context, status=status)


@role_required(Role.MANAGER)
def construction_page(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if request.htmx:
        context = {"benchmark": benchmark, **_runs_context(benchmark)}
        response = render(request, "construction/page.html#runs", context)
        return stop_polling_unless(context["polling"], response)
    return _render_page(request, benchmark)


@require_POST
@role_required(Role.MANAGER)
def import_sources(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = SourceImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _render_page(request, benchmark, 400, import_form=form)
    upload = form.cleaned_data["file"]
    try:
        result = do_import_sources(
            benchmark, upload.read(), upload.name, form.post_filter()
        )
    except ImportRejected as rejected:
        return _render_page(
            request, benchmark, 400, rejected=rejected, filename=upload.name
        )
    messages.success(request, f"{upload.name}: {result}")
    return redirect("construction:page", slug=slug)


@require_POST
@role_required(Role.MANAGER)
def start_stage(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = StageRunForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        template, verifier = shipped_prompts(
            data["stage"], data["template"], data["verifier_template"]
        )
        try:
            run = do_start_stage(
                benchmark,
                data["stage"],
                endpoint=data["endpoint"],
                template=template,
                verifier_template=verifier,
                search_service=data["search_service"],
                thinking=data["thinking"],
                source_kind=data["source_kind"],
                questions_per_source=data["questions_per_source"],
                threshold=data["threshold"],
                phrases=data["phrases"],
                user=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, _("%(run)s started.") % {"run": run})
            return redirect("construction:page", slug=slug)
    return _render_page(request, benchmark, 400, run_form=form)


@role_required(Role.MANAGER)
def run_page(request, pk: int):
    """A stage run's address (webhook payloads name it): its row on the
    construction page."""
    run = get_object_or_404(StageRun.objects.select_related("benchmark"), pk=pk)
    return redirect(
        reverse("construction:page", args=[run.benchmark.slug]) + f"#run-{run.pk}"
    )


@require_POST
@role_required(Role.MANAGER)
def open_pool(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    opened = do_open_pool(benchmark, user=request.user)
    messages.success(
        request,
        _(
            "%(opened)s candidate(s) of the verified pool opened as draft items for "
            "labelling."
        )
        % {"opened": opened},
    )
    return redirect(reverse("construction:page", args=[slug]) + "#release")


@require_POST
@role_required(Role.MANAGER)
def draw_sample(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = ReleaseSampleForm(request.POST)
    if form.is_valid():
        try:
            sample = do_draw_release_sample(
                benchmark,
                form.cleaned_data["size"],
                form.cleaned_data["seed"],
                user=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, str(sample))
            return redirect(reverse("construction:page", args=[slug]) + "#release")
    return _render_page(request, benchmark, 400, sample_form=form)


@require_POST
@role_required(Role.MANAGER)
def release(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        result = do_release(benchmark, user=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, str(result))
    return redirect(reverse("construction:page", args=[slug]) + "#release")


@role_required(Role.MANAGER)
def funnel_page(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(
        request,
        "construction/funnel.html",
        {"benchmark": benchmark, "report": funnel_report(benchmark.pk)},
    )


@role_required(Role.MANAGER)
def funnel_svg(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    # The figure is a paper artefact, like the CSV: English in every interface.
    with translation.override("en"):
        svg = write_figure(funnel_report(benchmark.pk).figure(), "svg")
    return HttpResponse(svg, content_type="image/svg+xml")


@role_required(Role.MANAGER)
def funnel_csv(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    rows = funnel_report(benchmark.pk).csv_rows()
    return csv_download(csv_text(HEADER, rows), f"{benchmark.slug}-funnel.csv")


@role_required(Role.MANAGER)
def candidate_page(request, slug: str, pk: int):
    candidate = get_object_or_404(
        Candidate.objects.select_related("source", "item"),
        pk=pk,
        source__benchmark__slug=slug,
    )
    decisions = candidate.decisions.select_related("decided_by", "call").order_by("id")
    return render(
        request,
        "construction/candidate.html",
        {
            "benchmark": candidate.source.benchmark,
            "candidate": candidate,
            "decisions": decisions,
            "answer_versions": answer_history(candidate),
        },
    )


REVIEW_KEYS = [
    Key(("a",), _("Approve: the question stands on its own")),
    Key(("r",), _("Remove… (type why, Enter removes)")),
    Key(("n",), _("Next flag, deciding nothing (someone else takes this one)")),
    BACK,
]


def _flags_screen(benchmark) -> ReviewScreen:
    return ReviewScreen(
        queue=flags_queue(benchmark.pk),
        candidates=pending_flags(benchmark.pk).order_by("id"),
        page_url=reverse("construction:review", args=[benchmark.slug]),
        render=partial(_review_screen, benchmark=benchmark),
    )


@role_required(Role.MANAGER)
def review_page(request, slug: str):
    """One flag at a time, keyboard first (REVIEW_KEYS), each leased to one
    person: a GET shows the flag the person holds (or `?flag=`, one they
    decided); a POST `action=next` leases the next (the page asks on load)."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return _flags_screen(benchmark).page(request, request.GET.get("flag", ""))


@require_POST
@role_required(Role.MANAGER)
def review_flag(request, slug: str, pk: int):
    """Approve, remove (with the reason) or pass over one flag; then the next."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    decision = get_object_or_404(
        StageDecision.objects.select_related("decided_by"),
        pk=pk,
        stage=Stage.DANGLING,
        candidate__source__benchmark=benchmark,
    )

    def decide() -> str:
        form = ReviewForm(request.POST)
        if not form.is_valid():
            raise ValidationError(_("Approve or remove."))
        data = form.cleaned_data
        do_review_flag(
            decision, data["outcome"], reason=data["reason"], user=request.user
        )
        done = (
            _("Candidate %(candidate_id)s approved.")
            if data["outcome"] == "pass"
            else _("Candidate %(candidate_id)s removed.")
        )
        return done % {"candidate_id": decision.candidate_id}

    return _flags_screen(benchmark).submit(request, decision.pk, decide)


def _review_screen(request, flag_id, *, benchmark, error="", asked=True):
    queue = flags_queue(benchmark.pk)
    template = "construction/review.html"
    if request.htmx:
        template += "#task"
    return render(
        request,
        template,
        {
            "benchmark": benchmark,
            "flag": flag_view(benchmark.pk, flag_id) if flag_id else None,
            "queue_asked": asked,
            "error": error,
            "posted": request.POST if error else None,
            "previous_flag_id": engine.previous(
                engine.done_by(queue, request.user), flag_id
            ),
            "keys": REVIEW_KEYS,
        },
        status=400 if error else 200,
    )
