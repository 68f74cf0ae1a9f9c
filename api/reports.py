"""Every report table as JSON: the agreement reports (annotation.agreement.loading), the
leaderboard with its diagnostic tables (judging.evaluation.scores), each from the
cache its page fills, and the translation report."""

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from ninja import Query, Router

from annotation.agreement.loading import REPORT_TITLES, build_report
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from judging.leaderboard.building import cached_report
from judging.translation.report import as_rows, translation_report

router = Router(tags=["reports"])

# The cross-judge report's judge set is chosen by name, as on its page.
MAX_JUDGES = 64


@router.get("/benchmarks/{slug}/reports/{name}", response=dict[str, Any])
@role_required(Role.MANAGER)
def agreement_report(
    request,
    slug: str,
    name: str,
    judge: list[str] | None = Query(
        None, description="cross-judge: the judges to compare (default: the page's)"
    ),
):
    """One agreement report, as its page's JSON download: consensus, cross-judge,
    judge-pairs, calibration or sv-validation."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if name not in REPORT_TITLES:
        raise Http404("No such report.")
    judges = tuple(judge_name for judge_name in judge or () if judge_name)
    return build_report(benchmark, name, judges=judges[:MAX_JUDGES]).as_dict()


@router.get("/benchmarks/{slug}/leaderboard", response=dict[str, Any])
@role_required(Role.MANAGER)
def leaderboard(
    request, slug: str, language: str | None = None, subset: int | None = None
):
    """The leaderboard and every diagnostic table in `language` (default: the
    source language, or the first with runs), with each run's metrics; `subset`:
    a saved item subset's id, every table computed on its items."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if language is not None and language not in benchmark.languages:
        raise Http404(f"{benchmark.name} has no such language.")
    chosen = get_object_or_404(benchmark.subsets, pk=subset) if subset else None
    return cached_report(benchmark, language=language, subset=chosen).as_dict()


@router.get("/benchmarks/{slug}/translation-report", response=list[dict[str, Any]])
@role_required(Role.MANAGER)
def translation_report_rows(request, slug: str):
    """The translation report, one row per target language, as its page and CSV."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return as_rows(translation_report(benchmark))
