"""Evaluation runs: starting one (queued, as the start page does), their status,
counts and per-item results, and cancelling one. Labelling and translation runs:
their status and progress, as their pages poll it."""

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from ninja import Field, File, Form, Query, Router, Schema, Status
from ninja.files import UploadedFile

from api.cursor import BadCursor, decode_cursor, encode_cursor
from api.schemas import InSchema, answers, invalid
from benchmark.models import Benchmark, Label
from benchmark.roles import Role, role_required
from benchmark.validation import ImportRejected
from judging.evaluation.actions import (
    EvaluationActionError,
    do_cancel_evaluation,
    do_start_evaluation,
    evaluation_item_filter,
)
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import EvaluationRun
from judging.evaluation.progress import run_progress
from judging.evaluation.responses import ResponseDetail, response_details
from judging.interop.importing import Choices, make_reader, parse_map
from judging.labelling.models import LabellingRun
from judging.labelling.runs import run_progress as labelling_progress
from judging.llm.models import Endpoint, PromptTemplate
from judging.translation.models import TranslationRun
from judging.translation.progress import language_counts

router = Router(tags=["evaluation runs"])


class RunProgressOut(Schema):
    total: int
    finished: int
    scored: int
    pending: int
    open: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost: Decimal
    elapsed_seconds: float
    calls_per_second: float
    eta_seconds: int | None


class RunOut(Schema):
    id: int
    benchmark: str
    model_name: str
    model_category: str
    language: str
    thinking: bool
    origin: str
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    answered: int
    judged: int
    sv_checked: int
    progress: RunProgressOut


@router.get("/benchmarks/{slug}/runs", response=answers({200: list[RunOut]}, 404))
@role_required(Role.MANAGER)
def list_runs(request, slug: str):
    """Every evaluation run of the benchmark, cancelled ones included."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    runs = benchmark.evaluation_runs.order_by(
        "model_name", "language", "thinking", "id"
    )
    return [_run(run, benchmark) for run in runs]


class TemplateRef(InSchema):
    name: str
    version: int


class StartRunIn(InSchema):
    """The start page's form, with endpoints and prompts by name."""

    tested: str = Field(description="The tested model's endpoint, by name")
    judge: str = Field(
        "",
        description="The rubric judge's endpoint; on a binary benchmark the "
        "key-point judge ('' when every item is multiple choice or true/false)",
    )
    sv_judge: str = Field(
        "",
        description="The safety-violation judge's endpoint (a binary benchmark has "
        "none: giving one is refused)",
    )
    language: str
    thinking: bool = False
    category: str = Field("", description="The model category on the leaderboard")
    answer_template: TemplateRef | None = Field(
        None,
        description="null: the built-in default, as on the page (on a binary "
        "benchmark a prompt per item format, options included); a prompt given "
        "must show {{options}} for multiple-choice items",
    )
    rubric_template: TemplateRef | None = None
    judge_set: str = Field(
        "",
        description="A judge set (e.g. industrybench: a rubric prompt per item "
        "language) instead of rubric_template",
    )
    sv_template: TemplateRef | None = None
    keypoint_template: TemplateRef | None = Field(
        None, description="Binary benchmarks: the key-point judge's prompt"
    )
    trials: int = Field(1, description="Binary benchmarks: times each item is asked")
    external_ids: list[str] = Field([], description="Only these items; [] for all")
    difficulty: str = Field("", description="easy, medium or hard; '' for any")
    labels: list[str] = Field(
        [],
        description="`dimension:label` codes: within a dimension any of them, "
        "across dimensions all",
    )
    limit: int | None = Field(None, ge=1, description="At most this many items")
    include_unapproved: bool = Field(
        False, description="Also ask renderings pending or flagged in review"
    )


class Refused(Exception):
    """A name in the call that names nothing; answered as the action's refusals."""


@router.post("/benchmarks/{slug}/runs", response=answers({201: RunOut}, 400, 404, 422))
@role_required(Role.MANAGER)
def start_run(request, slug: str, call: StartRunIn):
    """Start an evaluation run, as the start page does: the action checks it and
    queues it for the workers; a refusal is a 422 with the action's message."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        run = do_start_evaluation(
            benchmark,
            tested=_endpoint(call.tested),
            judge=_endpoint(call.judge),
            sv_judge=_endpoint(call.sv_judge),
            language=call.language,
            thinking=call.thinking,
            answer_template=_template(call.answer_template),
            rubric_template=_template(call.rubric_template),
            judge_set=call.judge_set,
            sv_template=_template(call.sv_template),
            keypoint_template=_template(call.keypoint_template),
            trials=call.trials,
            item_filter=evaluation_item_filter(
                external_ids=call.external_ids,
                difficulty=call.difficulty,
                label_ids=_label_ids(benchmark, call.labels),
                limit=call.limit,
                include_unapproved=call.include_unapproved,
            ),
            model_category=call.category,
            user=request.user,
        )
    except (EvaluationActionError, Refused) as error:
        return Status(422, {"detail": str(error)})
    return Status(201, _run(run, benchmark))


def _endpoint(name: str) -> Endpoint | None:
    # Inactive ones too: the action refuses them with its own message; none named
    # is None, and the action says when a run needs one.
    if not name:
        return None
    endpoint = Endpoint.objects.filter(name=name).first()
    if endpoint is None:
        raise Refused(f"No endpoint named {name!r}.")
    return endpoint


def _template(ref: TemplateRef | None) -> PromptTemplate | None:
    if ref is None:
        return None
    template = PromptTemplate.objects.filter(name=ref.name, version=ref.version).first()
    if template is None:
        raise Refused(f"No prompt {ref.name} version {ref.version}.")
    return template


def _label_ids(benchmark: Benchmark, codes: list[str]) -> list[int]:
    ids = []
    for value in codes:
        dimension, _, code = value.partition(":")
        label = Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code=dimension, code=code
        ).first()
        if label is None:
            raise Refused(f"No label {value!r} in {benchmark}.")
        ids.append(label.pk)
    return ids


@router.post(
    "/benchmarks/{slug}/runs/import", response=answers({201: RunOut}, 400, 404, 422)
)
@role_required(Role.MANAGER)
def import_run(
    request,
    slug: str,
    file: File[UploadedFile],
    language: Form[str],
    model_name: Form[str] = "",
    thinking: Form[bool] = False,
    category: Form[str] = "",
    scorer: Form[str] = "",
    score_map: Form[str] = "",
    full: Form[int | None] = None,
    epoch: Form[int | None] = None,
    ids: Form[str] = "",
    filter_name: Form[str] = "",
    assume_no_violation: Form[bool] = False,
    results: File[UploadedFile | None] = None,
):
    """Import a finished run as the import page does, all or nothing: evaluate.py
    CSV / JSONL, an Inspect AI log or lm-evaluation-harness samples (the format is
    detected). For Inspect and lm-eval: `scorer` (the scorer or metric read),
    `score_map` (`C=3,I=0,P=pending`), `full` (what 1.0 means), `epoch` (a 0–3
    benchmark takes one), `ids` (Inspect: `id`, `position` or `metadata.<key>`;
    lm-eval: the doc key), `filter_name`, `results` (lm-eval's results JSON, which
    names the model). `model_name` empty takes the file's. A 422 lists the
    file's problems."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    values, problem = parse_map(score_map)
    if problem:
        return Status(422, {"detail": f"score_map: {problem}"})
    data = file.read()
    choices = Choices(
        scorer=scorer,
        values=values,
        full=full,
        epoch=epoch,
        ids=ids,
        filter_name=filter_name,
        results=results.read() if results else b"",
        assume_no_violation=assume_no_violation,
    )
    try:
        run = do_import_run(
            benchmark,
            data,
            filename=file.name,
            model_name=model_name,
            language=language,
            thinking=thinking,
            model_category=category,
            user=request.user,
            reader=make_reader(benchmark, data, choices),
        )
    except ImportRejected as rejected:
        listed = "; ".join(str(problem) for problem in rejected.problems[:20])
        return Status(422, {"detail": f"{rejected}: {listed}"})
    return Status(201, _run(run, benchmark))


@router.get("/runs/{run_id}", response=answers({200: RunOut}, 404))
@role_required(Role.MANAGER)
def get_run(request, run_id: int):
    run = get_object_or_404(
        EvaluationRun.objects.select_related("benchmark"), pk=run_id
    )
    return _run(run, run.benchmark)


@router.post("/runs/{run_id}/cancel", response=answers({200: RunOut}, 404, 409))
@role_required(Role.MANAGER)
def cancel_run(request, run_id: int):
    """Stop the run within a second, keeping what it recorded (as its page's Cancel
    run); a run that has ended is a 409."""
    run = get_object_or_404(
        EvaluationRun.objects.select_related("benchmark"), pk=run_id
    )
    try:
        cancelled = do_cancel_evaluation(run)
    except ValidationError as error:
        return Status(409, {"detail": error.messages[0]})
    return Status(200, _run(cancelled, run.benchmark))


class ResultOut(Schema):
    response_id: int
    item_id: int
    external_id: str
    status: str = Field(description="The answer's: answered, empty, invalid, …")
    raw_score: int | None = Field(
        description="The judge's score, or a person's override of it"
    )
    safety_violation: bool | None
    final_score: int | None = Field(description="0 on a violation; null: pending")
    waived: bool
    judge_name: str | None
    judge_reason: str | None
    sv_judge_name: str | None
    sv_reason: str | None
    problem: str = Field(description="Why a pending item has no final score yet")


class ResultPage(Schema):
    results: list[ResultOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page"
    )


@router.get("/runs/{run_id}/results", response=answers({200: ResultPage}, 404, 422))
@role_required(Role.MANAGER)
def run_results(
    request,
    run_id: int,
    cursor: str | None = None,
    limit: int = Query(200, ge=1, le=1000),
):
    """Each item's response and verdicts, `limit` per page, as the run and item
    results pages show them (judging.evaluation.responses.response_details)."""
    run = get_object_or_404(EvaluationRun, pk=run_id)
    try:
        after = decode_cursor(cursor) if cursor else 0
    except BadCursor as error:
        raise invalid("cursor", str(error)) from None
    responses = list(
        run.responses.filter(pk__gt=after)
        .select_related("item")
        .order_by("pk")[: limit + 1]
    )
    more, responses = len(responses) > limit, responses[:limit]
    return {
        "results": [_result(detail) for detail in response_details(responses)],
        "next_cursor": encode_cursor(responses[-1].pk) if more else None,
    }


def _result(detail: ResponseDetail) -> dict:
    response, rubric, safety = detail.response, detail.rubric, detail.safety
    return {
        "response_id": response.pk,
        "item_id": response.item_id,
        "external_id": response.item.external_id,
        "status": response.status,
        "raw_score": detail.raw,
        "safety_violation": detail.violation,
        "final_score": detail.final,
        "waived": response.waived_at is not None,
        "judge_name": rubric.judge_name if rubric else None,
        "judge_reason": rubric.reason if rubric else None,
        "sv_judge_name": safety.judge_name if safety else None,
        "sv_reason": safety.reason if safety else None,
        "problem": detail.problem if detail.pending else "",
    }


def _run(run: EvaluationRun, benchmark: Benchmark) -> dict:
    return {
        "id": run.pk,
        "benchmark": benchmark.slug,
        "model_name": run.model_name,
        "model_category": run.model_category,
        "language": run.language,
        "thinking": run.thinking,
        "origin": run.origin,
        "status": run.status,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "answered": run.answered_count,
        "judged": run.judged_count,
        "sv_checked": run.sv_checked_count,
        "progress": run_progress(run),
    }


class LabellingRunOut(Schema):
    id: int
    benchmark: str
    annotators: list[str]
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    progress: dict[str, Any] = Field(
        description="Calls: total, done, failed, unparseable, pending, cached; "
        "tokens, cost, elapsed_seconds, calls_per_second, eta_seconds"
    )


@router.get("/runs/labelling/{run_id}", response=answers({200: LabellingRunOut}, 404))
@role_required(Role.MANAGER)
def get_labelling_run(request, run_id: int):
    """As the labelling run page polls it (judging.labelling.runs.run_progress)."""
    run = get_object_or_404(LabellingRun.objects.select_related("benchmark"), pk=run_id)
    return {
        "id": run.pk,
        "benchmark": run.benchmark.slug,
        "annotators": list(
            run.annotators.order_by("name").values_list("name", flat=True)
        ),
        "status": run.status,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "progress": labelling_progress(run),
    }


class TranslationRunOut(Schema):
    id: int
    benchmark: str
    languages: list[str]
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    total_tasks: int
    finished_tasks: int
    per_language: dict[str, dict[str, int]] = Field(
        description="Tasks pending, translated, reviewed, auto_approved, flagged, "
        "kept, failed and unparseable in each language"
    )
    totals: dict[str, int]
    input_tokens: int
    output_tokens: int
    cost: Decimal


@router.get(
    "/runs/translation/{run_id}", response=answers({200: TranslationRunOut}, 404)
)
@role_required(Role.MANAGER)
def get_translation_run(request, run_id: int):
    """As the translation run page polls it (judging.translation.progress)."""
    run = get_object_or_404(
        TranslationRun.objects.select_related("benchmark"), pk=run_id
    )
    per_language, totals = language_counts(run)
    return {
        "id": run.pk,
        "benchmark": run.benchmark.slug,
        "languages": run.languages,
        "status": run.status,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "total_tasks": run.total_tasks,
        "finished_tasks": run.finished_tasks,
        "per_language": per_language,
        "totals": totals,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "cost": run.cost,
    }
