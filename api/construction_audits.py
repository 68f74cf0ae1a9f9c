"""A stage audit worked over the API, as on the audit screen (reviewers): the
benchmark's audits with their progress, the next item for the caller (a lease
from the same review queue as the screen, so two callers never hold one item),
and the caller's answer on an item — agree or disagree with the stage's
decision, with a note — through the same action."""

from datetime import datetime

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status

from api.schemas import InSchema, answers, refused
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from construction.audits.actions import audit_queue, do_answer
from construction.audits.read import (
    audit_progress,
    latest_answer,
    open_audits,
    shown_item,
    unanswered,
)
from construction.models import AuditAnswer, AuditItem, StageAudit
from reviewqueue import engine

router = Router(tags=["construction"])


class AuditProgressOut(Schema):
    id: int
    stage: str
    prompt_version: str
    items: int
    answered: int = Field(description="Items with at least one answer")
    left: int


class AnswerOut(Schema):
    id: int
    item: int
    reviewer: str
    agrees: bool
    note: str
    created_at: datetime


class AuditItemOut(Schema):
    id: int = Field(description="The audit item, to answer")
    position: int = Field(description="Its place in the audit's drawn order")
    decision: int = Field(description="The stage's decision under audit")
    candidate: int
    question: str
    reference_answer: str
    source: str = Field(description="The source's reference")
    source_text: str
    outcome: str = Field(description="The stage's verdict: pass, refine or reject")
    reason: str = Field(description="Why the stage decided so")
    mine: AnswerOut | None = Field(description="The caller's latest answer on it")


class AuditTaskOut(Schema):
    item: AuditItemOut | None = Field(
        description="The item the caller now holds; null when none is left for them"
    )
    progress: AuditProgressOut


class AnswerIn(InSchema):
    agrees: bool = Field(description="Agree (true) or disagree with the verdict")
    note: str = Field("", description="Why (optional)")
    corrects: int | None = Field(
        None, description="Answering again: the id of the caller's answer it replaces"
    )


def _audit(slug: str, audit_id: int) -> StageAudit:
    return get_object_or_404(
        StageAudit.objects.select_related("benchmark"),
        pk=audit_id,
        benchmark__slug=slug,
    )


@router.get(
    "/benchmarks/{slug}/construction/audits",
    response=answers({200: list[AuditProgressOut]}, 404),
)
@role_required(Role.REVIEWER)
def list_audits(request, slug: str):
    """The benchmark's audits with their progress, those with items left first,
    as the reviewers' list of audits."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return [
        _progress(audit, progress)
        for audit, progress in open_audits()
        if audit.benchmark_id == benchmark.pk
    ]


@router.post(
    "/benchmarks/{slug}/construction/audits/{audit_id}/next",
    response=answers({200: AuditTaskOut}, 404),
)
@role_required(Role.REVIEWER)
def next_audit_item(request, slug: str, audit_id: int):
    """The item the caller holds, else a lease on the next unanswered item nobody
    else holds (as the audit screen's next); `item` is null when none is left."""
    audit = _audit(slug, audit_id)
    item_id = engine.claim(audit_queue(audit.pk), request.user, unanswered(audit))
    return _task(audit, shown_item(audit, item_id), request.user)


@router.post(
    "/benchmarks/{slug}/construction/audits/{audit_id}/items/{item_id}/answer",
    response=answers({200: AnswerOut}, 400, 404, 409, 422),
)
@role_required(Role.REVIEWER)
def answer_audit_item(request, slug: str, audit_id: int, item_id: int, call: AnswerIn):
    """Agree or disagree with the stage's verdict on an item, as the audit screen's
    a / d keys: answers are appended, the caller's latest counts, the same answer
    again is stored once. An item another reviewer holds now is a 409, a note too
    long a 422; neither changes anything. Then ask for the next item."""
    audit = _audit(slug, audit_id)
    item = get_object_or_404(AuditItem, pk=item_id, audit=audit)
    try:
        answer = do_answer(
            item,
            agrees=call.agrees,
            note=call.note,
            user=request.user,
            corrects=call.corrects,
        )
    except ValidationError as error:
        return refused(error)
    return Status(200, _answer(answer))


def _progress(audit: StageAudit, progress) -> dict:
    return {
        "id": audit.pk,
        "stage": audit.stage,
        "prompt_version": audit.prompt_version,
        "items": progress.items,
        "answered": progress.answered,
        "left": progress.left,
    }


def _task(audit: StageAudit, item: AuditItem | None, user) -> dict:
    return {
        "item": _item(item, latest_answer(item, user)) if item else None,
        "progress": _progress(audit, audit_progress(audit)),
    }


def _item(item: AuditItem, mine: AuditAnswer | None) -> dict:
    decision = item.decision
    candidate = decision.candidate
    return {
        "id": item.pk,
        "position": item.position,
        "decision": decision.pk,
        "candidate": candidate.pk,
        "question": candidate.question,
        "reference_answer": candidate.reference_answer,
        "source": candidate.source.reference,
        "source_text": candidate.source.text,
        "outcome": decision.outcome,
        "reason": decision.reason,
        "mine": _answer(mine) if mine else None,
    }


def _answer(answer: AuditAnswer) -> dict:
    return {
        "id": answer.pk,
        "item": answer.item_id,
        "reviewer": answer.reviewer.username,
        "agrees": answer.agrees,
        "note": answer.note,
        "created_at": answer.created_at,
    }
