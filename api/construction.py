"""Construction over the REST API: what a script needs to run a construction end
to end — import sources, start a stage run and follow it, read the funnel and
a candidate's ledger, review the dangling-reference flags, and the release in
IndustryBench's order (open the pool, draw the sample, release). Thin: each
route calls the action or read helper the pages call. Managers only, as the
construction pages."""

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema
from ninja.responses import Status

from api.schemas import Detail
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected
from construction.actions import (
    LLM_STAGES,
    VERIFIERS,
    do_import_sources,
    do_review_flag,
    do_start_stage,
)
from construction.funnel import ALL
from construction.models import Candidate, SearchService, StageDecision, StageRun
from construction.release import do_draw_release_sample, do_open_pool, do_release
from construction.report import funnel_rows, pending_flags, run_progress
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import default_template

router = Router(tags=["construction"])


class SourcesIn(Schema):
    filename: str = Field(description="Its ending says the format: .csv or .jsonl")
    content: str = Field(description="The file's text (UTF-8)")


class SourcesOut(Schema):
    added: int
    already_present: int


class Problem(Schema):
    line: int | None
    field: str
    message: str


class Rejected(Schema):
    detail: str
    problems: list[Problem]


class StageIn(Schema):
    stage: str
    endpoint: str = Field(
        "", description="Endpoint name (LLM stages; dedup: embeddings)"
    )
    template: str = Field("", description="Prompt template name (empty: shipped)")
    verifier_template: str = Field("", description="Search and deep verification")
    search_service: str = Field("", description="Search and deep verification")
    thinking: bool = Field(True, description="Deep verification: thinking mode")
    source_kind: str = ""
    questions_per_source: int = 3
    threshold: float = 0.9
    phrases: str = ""
    trial_size: int = 0
    trial_seed: int = 0


class RunOut(Schema):
    id: int
    benchmark: str
    stage: str
    status: str
    prompt_version: str
    total: int
    finished: int
    pending: int
    created_at: datetime
    finished_at: datetime | None


class FunnelRowOut(Schema):
    stage: str
    ran: bool
    entered: int
    passed: int
    rejected: int
    pending: int


class DecisionOut(Schema):
    id: int
    stage: str
    outcome: str
    reason: str
    model: str
    prompt_version: str
    evidence: dict[str, Any]
    decided_by: str | None


class CandidateOut(Schema):
    id: int
    question: str
    reference_answer: str
    version: int
    source_reference: str
    item: str | None
    decisions: list[DecisionOut]


class ReviewIn(Schema):
    outcome: str = Field(description='"pass" (approve) or "reject" (remove)')
    reason: str = ""


class SampleIn(Schema):
    size: int
    seed: int = 0


class CountOut(Schema):
    count: int
    message: str


def _benchmark(slug: str) -> Benchmark:
    return get_object_or_404(Benchmark, slug=slug)


@router.post(
    "/benchmarks/{slug}/construction/sources",
    response={200: SourcesOut, 422: Rejected},
)
@role_required(Role.MANAGER)
def construction_import_sources(request, slug: str, body: SourcesIn):
    """All or nothing; a source already in the benchmark is skipped."""
    try:
        result = do_import_sources(
            _benchmark(slug), body.content.encode(), body.filename
        )
    except ImportRejected as rejected:
        problems = [
            {"line": p.line, "field": p.field, "message": p.message}
            for p in rejected.problems
        ]
        return Status(422, {"detail": str(rejected), "problems": problems})
    return Status(200, result.__dict__)


def _named(model, name: str):
    return model.objects.filter(name=name).order_by("-pk").first() if name else None


def _template(name: str, purpose):
    if name:
        return PromptTemplate.objects.filter(name=name).order_by("-version").first()
    return default_template(purpose)


@router.post(
    "/benchmarks/{slug}/construction/stages",
    response={201: RunOut, 422: Detail},
)
@role_required(Role.MANAGER)
def construction_start_stage(request, slug: str, body: StageIn):
    """Start a stage run (as the page's Start a stage); a worker does the work.
    The shipped prompts are used where none is named."""
    benchmark = _benchmark(slug)
    template = verifier = None
    if body.stage in LLM_STAGES:
        template = _template(body.template, LLM_STAGES[body.stage][0])
    if body.stage in VERIFIERS:
        verifier = _template(body.verifier_template, VERIFIERS[body.stage][0])
    try:
        run = do_start_stage(
            benchmark,
            body.stage,
            endpoint=_named(Endpoint, body.endpoint),
            template=template,
            verifier_template=verifier,
            search_service=_named(SearchService, body.search_service),
            thinking=body.thinking,
            source_kind=body.source_kind,
            questions_per_source=body.questions_per_source,
            threshold=body.threshold,
            phrases=body.phrases,
            trial_size=body.trial_size,
            trial_seed=body.trial_seed,
            user=request.user,
        )
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(201, _run(run))


@router.get("/construction/runs/{run_id}", response=RunOut)
@role_required(Role.MANAGER)
def construction_run(request, run_id: int):
    """A stage run's state and progress (poll it until `status` has ended)."""
    return _run(
        get_object_or_404(StageRun.objects.select_related("benchmark"), pk=run_id)
    )


def _run(run: StageRun) -> dict:
    progress = run_progress(run)
    return {
        "id": run.pk,
        "benchmark": run.benchmark.slug,
        "stage": run.stage,
        "status": run.status,
        "prompt_version": run.prompt_version if run.stage else "",
        "total": progress["total"],
        "finished": progress["finished"],
        "pending": progress["pending"],
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


@router.get("/benchmarks/{slug}/construction/funnel", response=list[FunnelRowOut])
@role_required(Role.MANAGER)
def construction_funnel(request, slug: str):
    """Every stage in pipeline order (IndustryBench's: … release → exact dedup
    → dangling references → released), overall."""
    return [row for row in funnel_rows(_benchmark(slug).pk) if row.group == ALL]


@router.get(
    "/benchmarks/{slug}/construction/candidates/{candidate_id}",
    response=CandidateOut,
)
@role_required(Role.MANAGER)
def construction_candidate(request, slug: str, candidate_id: int):
    """A candidate with its ledger: every decision with its evidence."""
    candidate = get_object_or_404(
        Candidate.objects.select_related("source", "item"),
        pk=candidate_id,
        source__benchmark__slug=slug,
    )
    return {
        "id": candidate.pk,
        "question": candidate.question,
        "reference_answer": candidate.reference_answer,
        "version": candidate.version,
        "source_reference": candidate.source.reference,
        "item": candidate.item.external_id if candidate.item else None,
        "decisions": [
            _decision(decision)
            for decision in candidate.decisions.select_related("decided_by")
        ],
    }


def _decision(decision: StageDecision) -> dict:
    return {
        "id": decision.pk,
        "stage": decision.stage,
        "outcome": decision.outcome,
        "reason": decision.reason,
        "model": decision.model,
        "prompt_version": decision.prompt_version,
        "evidence": decision.evidence,
        "decided_by": decision.decided_by.username if decision.decided_by else None,
    }


@router.get("/benchmarks/{slug}/construction/flags", response=list[DecisionOut])
@role_required(Role.MANAGER)
def construction_flags(request, slug: str):
    """The dangling-reference flags waiting for a person, oldest first."""
    flags = pending_flags(_benchmark(slug).pk).select_related("decided_by")
    return [_decision(flag) for flag in flags.order_by("id")]


@router.post(
    "/construction/flags/{decision_id}",
    response={200: DecisionOut, 422: Detail},
)
@role_required(Role.MANAGER)
def construction_review_flag(request, decision_id: int, body: ReviewIn):
    """Approve or remove a flag (a removal says why), as the review queue."""
    decision = get_object_or_404(StageDecision, pk=decision_id)
    try:
        decided = do_review_flag(
            decision, body.outcome, reason=body.reason, user=request.user
        )
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(200, _decision(decided))


@router.post("/benchmarks/{slug}/construction/pool", response=CountOut)
@role_required(Role.MANAGER)
def construction_open_pool(request, slug: str):
    """The verified pool's candidates become draft items, to be labelled."""
    opened = do_open_pool(_benchmark(slug), user=request.user)
    return {"count": opened, "message": f"{opened} draft item(s) opened."}


@router.post(
    "/benchmarks/{slug}/construction/sample",
    response={200: CountOut, 422: Detail},
)
@role_required(Role.MANAGER)
def construction_draw_sample(request, slug: str, body: SampleIn):
    """The release sample, stratified by capability × industry."""
    try:
        sample = do_draw_release_sample(
            _benchmark(slug), body.size, body.seed, user=request.user
        )
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(200, {"count": sample.drawn, "message": str(sample)})


@router.post(
    "/benchmarks/{slug}/construction/release",
    response={200: CountOut, 422: Detail},
)
@role_required(Role.MANAGER)
def construction_release(request, slug: str):
    """The sample's candidates that passed its checks become active items."""
    try:
        result = do_release(_benchmark(slug), user=request.user)
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(200, {"count": result.released, "message": str(result)})
