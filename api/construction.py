"""Building a benchmark from sources, as the construction pages do: import sources,
start a stage run and follow it, the funnel, candidates, the review of
dangling-reference flags, the stage audits' measures, and the release in
IndustryBench's order (open the verified pool, draw the stratified sample,
release). Each route calls the construction app's actions and read helpers.
Managers only, as those pages."""

from datetime import date, datetime
from typing import Any, Literal

from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404
from ninja import Field, File, Query, Router, Schema, Status
from ninja.files import UploadedFile

from api.cursor import BadCursor, decode_cursor, encode_cursor
from api.schemas import Cell, InSchema, answers, invalid, refused
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected
from construction.actions import (
    RUNNABLE_STAGES,
    do_import_sources,
    do_review_flag,
    do_start_stage,
    shipped_prompts,
)
from construction.audits.read import stage_audits
from construction.expert.actions import (
    do_open_expert_review,
    do_release_forum,
    do_verify_item,
    waiting,
)
from construction.forum.posts import PostFilter
from construction.funnel import HEADER
from construction.models import Candidate, Stage, StageDecision, StageRun
from construction.release import do_draw_release_sample, do_open_pool, do_release
from construction.report import funnel_report, pending_flags, run_progress
from construction.search.models import SearchService
from judging.llm.models import Endpoint, PromptTemplate

router = Router(tags=["construction"])


class SourceImportOut(Schema):
    added: int
    already_present: int = Field(
        description="In the benchmark before, or earlier in the same file"
    )
    filtered_out: int = Field(
        0, description="Forum posts outside the views / replies / votes / date filter"
    )


@router.post(
    "/benchmarks/{slug}/construction/sources",
    response=answers({201: SourceImportOut}, 400, 404, 422),
)
@role_required(Role.MANAGER)
def import_sources(
    request,
    slug: str,
    file: File[UploadedFile],
    min_views: int = 0,
    min_replies: int = 0,
    min_votes: int | None = None,
    posted_from: date | None = None,
    posted_to: date | None = None,
):
    """Add a CSV or JSONL file's sources, all or nothing, skipping those already
    there (by content hash); a 422 lists the file's problems. Forum posts below
    the query's thresholds (views, replies, votes, dates) are left out."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    post_filter = PostFilter(
        min_views=min_views,
        min_replies=min_replies,
        min_votes=min_votes,
        posted_from=posted_from,
        posted_to=posted_to,
    )
    try:
        result = do_import_sources(benchmark, file.read(), file.name, post_filter)
    except ImportRejected as rejected:
        listed = "; ".join(str(problem) for problem in rejected.problems[:20])
        return Status(422, {"detail": f"{rejected}: {listed}"})
    return Status(201, result)


class PromptRef(InSchema):
    name: str
    version: int


class StageStartIn(InSchema):
    """The construction page's stage form, with endpoints, prompts and services by
    name; null prompts are the shipped ones, as on the page."""

    stage: Literal[tuple(RUNNABLE_STAGES)]  # type: ignore[valid-type]
    endpoint: str = Field(
        "", description="Chat endpoint; dedup: an embeddings one ('' offline)"
    )
    template: PromptRef | None = None
    verifier_template: PromptRef | None = None
    search_service: str = ""
    source_kind: str = Field("", description="Generation: only these sources")
    questions_per_source: int = Field(3, ge=1, le=20)
    threshold: float = Field(0.9, ge=0.05, le=1, description="Dedup: cosine")
    phrases: str = Field("", description="Dangling check: one phrase a line")
    thinking: bool | None = Field(
        None, description="Deep verification: thinking mode (default: on)"
    )


class StageRunOut(Schema):
    id: int
    benchmark: str
    stage: str
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    input_tokens: int
    output_tokens: int
    cost: float
    progress: dict[str, Any] = Field(
        description="Units total, finished, pending, open; elapsed_seconds, "
        "calls_per_second, eta_seconds"
    )


class NamesNothing(Exception):
    """A name in the call that names nothing: a 422, as the action's refusals."""


@router.post(
    "/benchmarks/{slug}/construction/stages",
    response=answers({201: StageRunOut}, 400, 404, 422),
)
@role_required(Role.MANAGER)
def start_stage(request, slug: str, call: StageStartIn):
    """Start a stage run, checked and queued by the page's action."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        template, verifier = shipped_prompts(
            call.stage, _prompt(call.template), _prompt(call.verifier_template)
        )
        run = do_start_stage(
            benchmark,
            call.stage,
            endpoint=_named(Endpoint, call.endpoint),
            template=template,
            verifier_template=verifier,
            search_service=_named(SearchService, call.search_service),
            source_kind=call.source_kind,
            questions_per_source=call.questions_per_source,
            threshold=call.threshold,
            phrases=call.phrases,
            thinking=call.thinking,
            user=request.user,
        )
    except NamesNothing as error:
        return Status(422, {"detail": str(error)})
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(201, _stage_run(run))


def _named(model, name: str):
    if not name:
        return None
    found = model.objects.filter(name=name).first()
    if found is None:
        raise NamesNothing(f"No {model._meta.verbose_name} named {name!r}.")
    return found


def _prompt(ref: PromptRef | None) -> PromptTemplate | None:
    if ref is None:
        return None
    found = PromptTemplate.objects.filter(name=ref.name, version=ref.version).first()
    if found is None:
        raise NamesNothing(f"No prompt {ref.name} version {ref.version}.")
    return found


@router.get("/construction/runs/{run_id}", response=answers({200: StageRunOut}, 404))
@role_required(Role.MANAGER)
def get_stage_run(request, run_id: int):
    """A stage run's status and progress, as the construction page polls it."""
    run = get_object_or_404(StageRun.objects.select_related("benchmark"), pk=run_id)
    return _stage_run(run)


def _stage_run(run: StageRun) -> dict:
    return {
        "id": run.pk,
        "benchmark": run.benchmark.slug,
        "stage": run.stage,
        "status": run.status,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "cost": float(run.cost),
        "progress": run_progress(run),
    }


class FunnelOut(Schema):
    columns: list[str]
    rows: list[list[Cell]] = Field(description="As the funnel page's CSV download")


@router.get(
    "/benchmarks/{slug}/construction/funnel", response=answers({200: FunnelOut}, 404)
)
@role_required(Role.MANAGER)
def funnel(request, slug: str):
    """The funnel table by source family and label, as the funnel page's CSV."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return {
        "columns": list(HEADER),
        "rows": [list(row) for row in funnel_report(benchmark.pk).csv_rows()],
    }


class CandidateOut(Schema):
    id: int
    source_reference: str
    question: str
    reference_answer: str
    label: str
    version: int
    item: str | None = Field(description="The released item's external id")
    created_at: datetime


class CandidatePage(Schema):
    candidates: list[CandidateOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page"
    )


@router.get(
    "/benchmarks/{slug}/construction/candidates",
    response=answers({200: CandidatePage}, 404, 422),
)
@role_required(Role.MANAGER)
def list_candidates(
    request,
    slug: str,
    cursor: str | None = None,
    limit: int = Query(200, ge=1, le=1000),
):
    """Every candidate in the order they were made, `limit` per page."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        after = decode_cursor(cursor) if cursor else 0
    except BadCursor as error:
        raise invalid("cursor", str(error)) from None
    page = list(
        Candidate.objects.filter(source__benchmark=benchmark, pk__gt=after)
        .select_related("source", "item")
        .order_by("pk")[: limit + 1]
    )
    more, page = len(page) > limit, page[:limit]
    return {
        "candidates": [
            {
                "id": candidate.pk,
                "source_reference": candidate.source.reference,
                "question": candidate.question,
                "reference_answer": candidate.reference_answer,
                "label": candidate.label,
                "version": candidate.version,
                "item": candidate.item.external_id if candidate.item else None,
                "created_at": candidate.created_at,
            }
            for candidate in page
        ],
        "next_cursor": encode_cursor(page[-1].pk) if more else None,
    }


class FlagOut(Schema):
    id: int = Field(description="The dangling-reference decision's id")
    candidate: int
    question: str
    reference_answer: str
    outcome: str = Field(description="pending, pass (approved) or reject (removed)")
    reason: str
    dangling: dict[str, Any] = Field(
        description="The matched dangling-reference phrases per field"
    )


@router.get(
    "/benchmarks/{slug}/construction/flags", response=answers({200: list[FlagOut]}, 404)
)
@role_required(Role.MANAGER)
def list_flags(request, slug: str):
    """The dangling-reference flags waiting for a person, oldest first."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    flags = pending_flags(benchmark.pk).select_related("candidate").order_by("id")
    return [_flag(decision) for decision in flags]


class FlagReviewIn(InSchema):
    outcome: Literal["pass", "reject"] = Field(description="Approve or remove")
    reason: str = Field("", description="Why it is removed (required to remove)")


@router.post(
    "/benchmarks/{slug}/construction/flags/{decision_id}",
    response=answers({200: FlagOut}, 400, 404, 409, 422),
)
@role_required(Role.MANAGER)
def review_flag(request, slug: str, decision_id: int, call: FlagReviewIn):
    """Approve or remove a flagged candidate, as the review screen's a / r keys; a
    flag decided the other way is a 409, the action's other refusals (no reason to
    remove) 422."""
    decision = get_object_or_404(
        StageDecision.objects.select_related("candidate"),
        pk=decision_id,
        stage=Stage.DANGLING,
        candidate__source__benchmark__slug=slug,
    )
    try:
        decided = do_review_flag(
            decision, call.outcome, reason=call.reason, user=request.user
        )
    except ValidationError as error:
        return refused(error)
    decided.candidate = decision.candidate
    return Status(200, _flag(decided))


def _flag(decision: StageDecision) -> dict:
    return {
        "id": decision.pk,
        "candidate": decision.candidate_id,
        "question": decision.candidate.question,
        "reference_answer": decision.candidate.reference_answer,
        "outcome": decision.outcome,
        "reason": decision.reason,
        "dangling": decision.evidence.get("dangling", {}),
    }


class RateOut(Schema):
    successes: int
    n: int
    value: float | None
    low: float | None = Field(description="Wilson interval, 95 %")
    high: float | None


class AuditOut(Schema):
    id: int
    stage: str
    prompt_version: str
    sample_size: int
    population: int
    created_at: datetime
    items: int
    answered: int
    measured: int = Field(description="Items with people's verdict (no tie)")
    agreement: RateOut
    precision: RateOut = Field(description="People's rejects among the stage's")
    recall: RateOut = Field(description="The stage's rejects among people's")


@router.get(
    "/benchmarks/{slug}/construction/stages/{stage}/audits",
    response=answers({200: list[AuditOut]}, 404),
)
@role_required(Role.MANAGER)
def list_stage_audits(request, slug: str, stage: str):
    """A stage's audits with what people found, as the stage page shows them."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if stage not in Stage.values:
        raise Http404("No such stage.")
    return [_audit(row) for row in stage_audits(benchmark.pk, stage)]


def _rate(rate) -> dict:
    return {
        "successes": rate.successes,
        "n": rate.n,
        "value": rate.value,
        "low": rate.low,
        "high": rate.high,
    }


def _audit(row: dict) -> dict:
    audit, progress, measure = row["audit"], row["progress"], row["measure"]
    return {
        "id": audit.pk,
        "stage": audit.stage,
        "prompt_version": audit.prompt_version,
        "sample_size": audit.sample_size,
        "population": audit.population,
        "created_at": audit.created_at,
        "items": progress.items,
        "answered": progress.answered,
        "measured": measure.answered,
        "agreement": _rate(measure.agreement),
        "precision": _rate(measure.precision),
        "recall": _rate(measure.recall),
    }


class CountOut(Schema):
    count: int
    message: str


class SampleIn(InSchema):
    size: int = Field(ge=1, description="Items in the release sample (paper: 2,083)")
    seed: int = Field(0, description="The sample's seed; a second sample is refused")


@router.post(
    "/benchmarks/{slug}/construction/pool",
    response=answers({200: CountOut}, 404),
)
@role_required(Role.MANAGER)
def open_pool(request, slug: str):
    """The verified pool's candidates become draft items, to be labelled."""
    opened = do_open_pool(get_object_or_404(Benchmark, slug=slug), user=request.user)
    return {"count": opened, "message": f"{opened} draft item(s) opened."}


@router.post(
    "/benchmarks/{slug}/construction/sample",
    response=answers({200: CountOut}, 400, 404, 422),
)
@role_required(Role.MANAGER)
def draw_sample(request, slug: str, call: SampleIn):
    """The release sample, stratified by capability × industry."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        sample = do_draw_release_sample(
            benchmark, call.size, call.seed, user=request.user
        )
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(200, {"count": sample.drawn, "message": str(sample)})


@router.post(
    "/benchmarks/{slug}/construction/release",
    response=answers({200: CountOut}, 404, 422),
)
@role_required(Role.MANAGER)
def release(request, slug: str):
    """The sample's candidates that passed its checks become active items."""
    try:
        result = do_release(get_object_or_404(Benchmark, slug=slug), user=request.user)
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(200, {"count": result.released, "message": str(result)})


# -- LPFQA's forum construction: expert verification and release ---------------


class ExpertItemOut(Schema):
    id: int = Field(description="The expert decision")
    candidate: int
    post: str = Field(description="The forum post's reference")
    format: str
    question: str
    options: list[str]
    correct: list[str]
    answer: str
    key_points: list[str]
    outcome: str
    reason: str


class ExpertVerdictIn(InSchema):
    outcome: Literal["pass", "refine", "reject"] = Field(
        description="Approve, edit (the fields below replace the item's) or reject"
    )
    reason: str = Field("", description="Why it is rejected (required to reject)")
    question: str = ""
    options: list[str] = Field(default_factory=list, description="Edit: 5–7")
    correct: str = Field("", description="Edit: the key's letter")
    answer: str = ""
    key_points: list[str] = Field(default_factory=list, description="Edit: 1–5")


@router.post(
    "/benchmarks/{slug}/construction/expert/open",
    response=answers({200: CountOut}, 404, 422),
)
@role_required(Role.MANAGER)
def open_expert_review(request, slug: str):
    """Every converted forum candidate waits for an expert."""
    try:
        opened = do_open_expert_review(get_object_or_404(Benchmark, slug=slug))
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(200, {"count": opened, "message": f"{opened} item(s) opened."})


@router.get(
    "/benchmarks/{slug}/construction/expert",
    response=answers({200: list[ExpertItemOut]}, 404),
)
@role_required(Role.EXPERT)
def list_expert_items(request, slug: str):
    """The forum items waiting for expert verification, oldest first."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    decisions = waiting(benchmark.pk).select_related("candidate__source")
    return [_expert_item(decision) for decision in decisions]


@router.post(
    "/benchmarks/{slug}/construction/expert/{decision_id}",
    response=answers({200: ExpertItemOut}, 400, 404, 409, 422),
)
@role_required(Role.EXPERT)
def verify_expert_item(request, slug: str, decision_id: int, call: ExpertVerdictIn):
    """Approve, edit or reject a forum item, as the queue's a / e / r keys; an item
    decided otherwise (or another expert's now) is a 409, the action's other
    refusals (a broken edit, no reason) 422."""
    decision = get_object_or_404(
        StageDecision,
        pk=decision_id,
        stage=Stage.EXPERT,
        candidate__source__benchmark__slug=slug,
    )
    try:
        decided = do_verify_item(
            decision,
            call.outcome,
            reason=call.reason,
            edit=expert_edit(call),
            user=request.user,
        )
    except ValidationError as error:
        return refused(error)
    decided = StageDecision.objects.select_related("candidate__source").get(
        pk=decided.pk
    )
    return Status(200, _expert_item(decided))


def expert_edit(call: ExpertVerdictIn) -> dict:
    """The edit fields of a verdict, as the action takes them."""
    return call.dict(include={"question", "options", "correct", "answer", "key_points"})


@router.post(
    "/benchmarks/{slug}/construction/forum-release",
    response=answers({200: CountOut}, 404, 422),
)
@role_required(Role.MANAGER)
def release_forum_items(request, slug: str):
    """What the experts passed becomes active MC / short-answer items."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        result = do_release_forum(benchmark, user=request.user)
    except ValidationError as error:
        return Status(422, {"detail": " ".join(error.messages)})
    return Status(200, {"count": result.released, "message": str(result)})


def _expert_item(decision: StageDecision) -> dict:
    form = decision.candidate.form
    return {
        "id": decision.pk,
        "candidate": decision.candidate_id,
        "post": decision.candidate.source.reference,
        "format": form.get("format", ""),
        "question": form.get("question", ""),
        "options": form.get("options") or [],
        "correct": form.get("correct") or [],
        "answer": form.get("answer", ""),
        "key_points": form.get("key_points") or [],
        "outcome": decision.outcome,
        "reason": decision.reason,
    }
