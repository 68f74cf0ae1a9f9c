"""Robustness pages: the study's page (resources, generation, variant runs), a
variant run, the review queue of LLM-written variants and the report."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from assay.downloads import csv_download
from assay.htmx import poll_until_settled
from benchmark.models import Benchmark, ItemVariant
from benchmark.roles import Role, role_required
from benchmark.taxonomy import LANGUAGE_NAMES
from benchmark.validation import ImportRejected
from judging.llm.models import PromptTemplate
from judging.llm.prompts import install_default_templates
from judging.reporting.cache import cached
from judging.robustness import actions, figures, report
from judging.robustness.forms import GenerateForm, ResourcesForm, VariantRunForm
from judging.robustness.generation import stored_entries
from judging.robustness.models import VariantDraft, VariantRun
from judging.robustness.pipeline import run_counts
from judging.robustness.relations import RELATIONS
from judging.robustness.resources import to_csv
from reviewqueue import engine
from reviewqueue.engine import StaleRefusal
from reviewqueue.keys import BACK, Key

manager_required = role_required(Role.MANAGER)
reviewer_required = role_required(Role.REVIEWER)


def _study_page(request, benchmark, *, status=200, **forms):
    variants = dict(
        ItemVariant.objects.filter(seed__benchmark=benchmark)
        .values_list("relation")
        .annotate(n=Count("pk"))
        .values_list("relation", "n")
    )
    drafts = dict(
        VariantDraft.objects.filter(run__benchmark=benchmark)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    entries = stored_entries(benchmark)
    context = {
        "benchmark": benchmark,
        "variant_counts": [(name, variants.get(name, 0)) for name in RELATIONS],
        "variant_total": sum(variants.values()),
        "awaiting": drafts.get(VariantDraft.Status.AWAITING, 0),
        "runs": VariantRun.objects.filter(benchmark=benchmark).select_related(
            "endpoint"
        )[:20],
        "generate_form": forms.get("generate_form") or GenerateForm(benchmark),
        "run_form": forms.get("run_form") or VariantRunForm(benchmark),
        "resources_form": forms.get("resources_form")
        or ResourcesForm(initial={"text": to_csv(entries)}),
        "problems": forms.get("problems"),
        "resource_count": len(entries),
    }
    return render(request, "judging/robustness/page.html", context, status=status)


@manager_required
def study(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    writing = PromptTemplate.Purpose.VARIANT_WRITING
    if not PromptTemplate.objects.filter(purpose=writing).exists():
        install_default_templates()  # the run form offers the shipped prompt
    return _study_page(request, benchmark)


@require_POST
@manager_required
def generate(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = GenerateForm(benchmark, request.POST)
    if not form.is_valid():
        return _study_page(request, benchmark, status=400, generate_form=form)
    try:
        done = actions.do_generate_variants(
            benchmark,
            form.cleaned_data["formats"],
            form.cleaned_data["relations"],
            form.cleaned_data["sector_field"],
            user=request.user,
        )
    except ValidationError as error:
        form.add_error(None, error)
        return _study_page(request, benchmark, status=400, generate_form=form)
    if done.queued:
        messages.info(request, _("A worker generates the variants; reload in a while."))
    else:
        skipped = ", ".join(f"{n} {rel}" for rel, n in done.not_applicable.items())
        sentences = [
            ngettext("%(count)s new variant.", "%(count)s new variants.", done.created)
            % {"count": done.created}
        ]
        if skipped:
            sentences.append(_("Not applicable: %(skipped)s.") % {"skipped": skipped})
        sentences += [f"{refusal}." for refusal in done.refusals()]
        messages.success(request, " ".join(sentences))
    return redirect("judging:robustness", slug=slug)


@require_POST
@manager_required
def start_run(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = VariantRunForm(benchmark, request.POST)
    if not form.is_valid():
        return _study_page(request, benchmark, status=400, run_form=form)
    data = form.cleaned_data
    try:
        run = actions.do_start_variant_run(
            benchmark,
            relation=data["relation"],
            endpoint=data["endpoint"],
            template=data["template"],
            sector_field=data["sector_field"],
            item_formats=data["formats"],
            user=request.user,
        )
    except ValidationError as error:
        form.add_error(None, error)
        return _study_page(request, benchmark, status=400, run_form=form)
    return redirect("judging:variant_run", pk=run.pk)


@require_POST
@manager_required
def save_resources(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = ResourcesForm(request.POST, request.FILES)
    if not form.is_valid():
        return _study_page(request, benchmark, status=400, resources_form=form)
    try:
        count = actions.do_replace_resources(benchmark, form.cleaned_data["text"])
    except ImportRejected as rejected:
        return _study_page(
            request,
            benchmark,
            status=400,
            resources_form=form,
            problems=rejected,
        )
    messages.success(request, _("Saved %(count)s resource entries.") % {"count": count})
    return redirect("judging:robustness", slug=slug)


@manager_required
def variant_run(request, pk):
    run = get_object_or_404(VariantRun.objects.select_related("benchmark"), pk=pk)
    pending = run.drafts.filter(status=VariantDraft.Status.PENDING).select_related(
        "seed"
    )
    context = {
        "run": run,
        "counts": run_counts(run),
        "pending": pending[:100],
        "live": run.is_active,
    }
    if request.htmx:
        response = render(request, "judging/robustness/run.html#progress", context)
        return poll_until_settled(not run.is_active, response)
    return render(request, "judging/robustness/run.html", context)


REVIEW_KEYS = [
    Key(("a",), _("Approve the variant as written")),
    Key(("e",), _("Edit it; Ctrl+Enter saves and approves")),
    Key(("r",), _("Reject; type the reason, Enter submits")),
    Key(("k",), _("Pass over it (someone else reviews it)")),
    BACK,
]


@reviewer_required
def review(request, slug):
    """One LLM-written variant at a time, oldest first, each leased to one
    reviewer: approve, edit or reject; `?draft=` one the reviewer decided."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    queue = actions.drafts_queue(benchmark.pk)
    error = ""
    draft_id = None
    asked = request.method == "POST"
    skipped = _int_or_none(request.POST.get("draft"))
    if request.method == "POST" and request.POST.get("action") == "skip":
        if skipped is not None:
            engine.skip(queue, skipped, request.user)
    elif request.method == "POST" and request.POST.get("action") != "next":
        try:
            actions.do_review_draft(
                _draft_id(request.POST.get("draft")),
                request.POST.get("decision", ""),
                user=request.user,
                text=request.POST.get("text", ""),
                reason=request.POST.get("reason", ""),
            )
        except StaleRefusal as stale:
            error = " ".join(stale.messages)
        except ValidationError as problem:
            error = " ".join(problem.messages)
            draft_id = _int_or_none(request.POST.get("draft"))
        else:
            if not request.htmx:
                engine.claim(queue, request.user, actions.awaiting_drafts(benchmark))
                return redirect("judging:variant_review", slug=slug)
    else:
        draft_id = engine.decided(queue, request.user, request.GET.get("draft", ""))
    if draft_id is None:
        if asked:
            awaiting = actions.awaiting_drafts(benchmark)
            draft_id = engine.claim(queue, request.user, awaiting)
        else:
            draft_id = engine.held(queue, request.user)
    draft = (
        VariantDraft.objects.select_related("seed", "run", "reviewed_by")
        .filter(pk=draft_id, run__benchmark=benchmark)
        .first()
    )
    context = {
        "benchmark": benchmark,
        "draft": draft,
        "error": error,
        # A refused decision keeps what was typed (the reason, the edit).
        "posted": request.POST if error and draft_id else None,
        "queue_asked": asked or draft is not None,
        "previous_draft_id": engine.previous(
            engine.done_by(queue, request.user), draft_id
        ),
        "awaiting": actions.awaiting_drafts(benchmark).count(),
        "seed_text": _seed_text(draft, benchmark) if draft else "",
        "keys": REVIEW_KEYS,
        "reason_max": actions.REASON_MAX,
    }
    template = "judging/robustness/review.html"
    if request.htmx:
        template += "#task"
    return render(request, template, context, status=400 if error else 200)


def _int_or_none(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _draft_id(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError(_("No draft named.")) from None


def _seed_text(draft: VariantDraft, benchmark: Benchmark) -> str:
    rendering = draft.seed.renderings.filter(
        is_current=True, language=benchmark.source_language
    ).first()
    return rendering.question if rendering else ""


def _report_language(request, benchmark: Benchmark) -> str:
    """The language asked for (`?language=`), one of the benchmark's; 404 else."""
    language = request.GET.get("language") or benchmark.source_language
    if language not in benchmark.languages:
        raise Http404(
            _("%(benchmark)s has no language %(language)s.")
            % {"benchmark": benchmark, "language": language}
        )
    return language


@manager_required
def robustness_report(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    language = _report_language(request, benchmark)
    built = report.cached_build(benchmark, language)
    heatmaps = cached(f"{built.cache_key}:heatmaps", lambda: _heatmaps(built))
    with_runs = set(report.report_languages(benchmark))
    languages = [
        {
            "code": code,
            "name": LANGUAGE_NAMES.get(code, code),
            "has_runs": code in with_runs,
        }
        for code in benchmark.languages
    ]
    context = {
        "benchmark": benchmark,
        "report": built,
        "heatmaps": heatmaps,
        "languages": languages,
        "language_name": LANGUAGE_NAMES.get(language, language),
    }
    return render(request, "judging/robustness/report.html", context)


def _heatmaps(built: report.Report) -> list[tuple[str, str]]:
    """(grouping, SVG) of correct and incorrect robustness per relation and per
    sector."""
    if built.result is None:
        return []
    heatmaps = []
    for grouping in ("relation", "sector"):
        panels = []
        for side in ("correct", "incorrect"):
            table = built.tables[f"{side}-by-{grouping}"]
            values = [row[1:] for row in table.rows]
            panels.append(
                (f"{side.capitalize()} robustness", table.column_keys, values)
            )
        svg = figures.heatmap_svg(f"Robustness per {grouping}", built.labels, panels)
        heatmaps.append((grouping, svg))
    return heatmaps


@manager_required
def report_download(request, slug, table):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    language = _report_language(request, benchmark)
    built = report.cached_build(benchmark, language)
    if table not in built.tables:
        raise Http404("No such table.")
    suffix = "" if language == benchmark.source_language else f"-{language}"
    return csv_download(
        built.tables[table].to_csv(), f"{benchmark.slug}-{table}{suffix}.csv"
    )
