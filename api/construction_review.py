"""One construction candidate over the API, as its page shows it: every stage's
decision (who or what decided, when, why) with the evidence behind it — Stage 4's
queries and results, Stage 5's searches and verdict per claim, a dedup twin, a
dangling-reference flag, an expert's edit — the reference answer's versions and
where the candidate came from (its source, a forum post's metadata); and a
person's decision on it where the pages take one: a dangling-reference flag
(managers, as the flag review screen) or an expert verification (experts, as the
experts' queue), through the same actions."""

from datetime import datetime
from typing import Any, Literal

from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema, Status

from api.construction import ExpertVerdictIn, expert_edit
from api.schemas import answers, refused
from benchmark.roles import Role, has_role, role_required
from construction.actions import do_review_flag
from construction.expert.actions import do_verify_item
from construction.forum.posts import TEXTS
from construction.models import Candidate, Stage, StageDecision
from construction.release import provenance

router = Router(tags=["construction"])

# What the pages let a person decide on one candidate, and who may: the flag
# review screen is the managers', the verification queue the experts'.
DECIDED_BY = {Stage.DANGLING: Role.MANAGER, Stage.EXPERT: Role.EXPERT}
# Stage 5's verdict on the candidate, as its prompt gives it.
DEEP_VERDICTS = {"pass": "keep", "refine": "refine", "reject": "remove"}
POST_TEXTS = (*TEXTS, "posted_at")


class SearchResultOut(Schema):
    url: str
    title: str = ""
    snippet: str = ""
    rank: int | None = None
    query: int | None = Field(None, description="The number (1-based) of its query")
    retrieved_at: str | None = None


class SearchEvidenceOut(Schema):
    service: str
    queries: list[str]
    results: list[SearchResultOut] = Field(
        description="Every query's results in query order, each URL once"
    )
    supporting: list[int] = Field(
        description="The results (1-based) that corroborate the candidate, in "
        "the verifier's judgement"
    )


class ClaimSearchOut(Schema):
    claim: str
    queries: list[str]
    results: list[SearchResultOut]


class ClaimCheckOut(Schema):
    claim: str
    status: str = Field(description="supported, contradicted or unsupported")
    basis: str


class DeepEvidenceOut(Schema):
    service: str = ""
    thinking: bool = False
    verdict: str | None = Field(
        description="keep, refine or remove; null while pending"
    )
    searched: list[ClaimSearchOut] = Field(
        description="Each claim the checker listed, with its queries and results"
    )
    claims: list[ClaimCheckOut] = Field(
        description="The verifier's finding per claim, over those results and Stage 4's"
    )
    answer_version: int | None = Field(
        None, description="A refine: the reference answer's version it wrote"
    )


class DuplicateOut(Schema):
    twin: int = Field(description="The candidate it repeats (kept)")
    exact: bool
    similarity: float | None = None
    threshold: float | None = None


class DanglingHitOut(Schema):
    phrase: str
    start: int
    end: int


class DanglingOut(Schema):
    hits: dict[str, list[DanglingHitOut]] = Field(
        description="The phrases found, per field (question, reference_answer)"
    )
    flag: str = Field(description="What the check flagged")


class ExpertEditOut(Schema):
    before: dict[str, Any]
    after: dict[str, Any]


class DecisionOut(Schema):
    id: int
    stage: str
    outcome: str = Field(description="pass, refine, reject or pending")
    reason: str
    model: str = Field(description="The model or method that decided")
    prompt_version: str
    decided_by: str | None = Field(description="The person; null when automated")
    created_at: datetime
    run: int | None = Field(description="The stage run that decided it")
    search: SearchEvidenceOut | None = Field(None, description="Search verification")
    deep: DeepEvidenceOut | None = Field(None, description="Deep verification")
    duplicate: DuplicateOut | None = Field(None, description="Dedup, exact dedup")
    dangling: DanglingOut | None = None
    expert_edit: ExpertEditOut | None = None
    evidence: dict[str, Any] = Field(description="The ledger's evidence as stored")


class AnswerVersionOut(Schema):
    version: int
    reference_answer: str
    decision: int | None = Field(description="The refine decision that wrote it")
    created_at: datetime


class SourceOut(Schema):
    id: int
    kind: str
    reference: str
    text: str
    fields: dict[str, Any]


class PostOut(Schema):
    forum: str = ""
    post_id: str = ""
    url: str = ""
    title: str = ""
    posted_at: str = ""
    field: str = ""
    views: int
    replies: int
    votes: int
    screenshots: int


class CandidateReviewOut(Schema):
    id: int
    question: str
    reference_answer: str = Field(description="The newest version")
    version: int
    label: str
    knowledge_text: str
    form: dict[str, Any] = Field(description="A forum candidate's item form")
    item: str | None = Field(description="Its item's external id")
    created_at: datetime
    source: SourceOut
    post: PostOut | None = Field(description="A forum post's provenance")
    decisions: list[DecisionOut] = Field(description="In the order they were made")
    answer_versions: list[AnswerVersionOut] = Field(description="Oldest first")


class CandidateDecisionIn(ExpertVerdictIn):
    """A person's verdict on the candidate at `stage`: a dangling-reference flag
    (pass approves, reject removes, with the reason) or an expert verification
    (pass, refine with the edit, reject with the reason)."""

    stage: Literal[tuple(DECIDED_BY)] = Field(  # type: ignore[valid-type]
        description="dangling (managers) or expert (experts)"
    )


def _candidate(slug: str, candidate_id: int) -> Candidate:
    return get_object_or_404(
        Candidate.objects.select_related("source", "item"),
        pk=candidate_id,
        source__benchmark__slug=slug,
    )


@router.get(
    "/benchmarks/{slug}/construction/candidates/{candidate_id}",
    response=answers({200: CandidateReviewOut}, 404),
)
@role_required(Role.MANAGER)
def get_candidate(request, slug: str, candidate_id: int):
    """One candidate with every stage's decision and its evidence, its answer's
    versions and its provenance, as the candidate page."""
    candidate = _candidate(slug, candidate_id)
    decisions = candidate.decisions.select_related("decided_by").order_by("id")
    versions = candidate.answer_versions.order_by("version")
    source = candidate.source
    post = provenance(candidate).get("post")
    return {
        "id": candidate.pk,
        "question": candidate.question,
        "reference_answer": candidate.reference_answer,
        "version": candidate.version,
        "label": candidate.label,
        "knowledge_text": candidate.knowledge_text,
        "form": candidate.form,
        "item": candidate.item.external_id if candidate.item else None,
        "created_at": candidate.created_at,
        "source": {
            "id": source.pk,
            "kind": source.kind,
            "reference": source.reference,
            "text": source.text,
            "fields": source.fields,
        },
        "post": _post(post) if post else None,
        "decisions": [_decision(decision) for decision in decisions],
        "answer_versions": [
            {
                "version": version.version,
                "reference_answer": version.reference_answer,
                "decision": version.decision_id,
                "created_at": version.created_at,
            }
            for version in versions
        ],
    }


@router.post(
    "/benchmarks/{slug}/construction/candidates/{candidate_id}/decision",
    response=answers({200: DecisionOut}, 400, 404, 409, 422),
)
@role_required(*DECIDED_BY.values())
def decide_candidate(request, slug: str, candidate_id: int, call: CandidateDecisionIn):
    """A person's verdict on the candidate's newest decision at `stage`, as the
    flag review screen (managers) or the experts' queue (experts) takes it; decided
    the other way (or held by another person now) is a 409, the action's other
    refusals (no reason to remove, an edit that breaks the form) 422; neither
    changes anything."""
    candidate = _candidate(slug, candidate_id)
    if not has_role(request.user, DECIDED_BY[call.stage]):
        raise PermissionDenied
    decision = candidate.decisions.filter(stage=call.stage).order_by("-id").first()
    if decision is None:
        return Status(
            422,
            {
                "detail": _(
                    "Candidate %(id)s has no decision at the “%(stage)s” stage to "
                    "review."
                )
                % {"id": candidate.pk, "stage": Stage(call.stage).label}
            },
        )
    edit = expert_edit(call)
    try:
        if call.stage == Stage.EXPERT:
            decided = do_verify_item(
                decision, call.outcome, reason=call.reason, edit=edit, user=request.user
            )
        elif any(edit.values()):
            raise ValidationError(_("Only an expert verification takes an edit."))
        else:
            decided = do_review_flag(
                decision, call.outcome, reason=call.reason, user=request.user
            )
    except ValidationError as error:
        return refused(error)
    return Status(200, _decision(decided))


def _decision(decision: StageDecision) -> dict:
    evidence = decision.evidence
    found = {
        "id": decision.pk,
        "stage": decision.stage,
        "outcome": decision.outcome,
        "reason": decision.reason,
        "model": decision.model,
        "prompt_version": decision.prompt_version,
        "decided_by": decision.decided_by.username if decision.decided_by else None,
        "created_at": decision.created_at,
        "run": decision.run_id,
        "evidence": evidence,
    }
    if decision.stage == Stage.SEARCH and "queries" in evidence:
        found["search"] = {
            "service": evidence.get("service", ""),
            "queries": evidence["queries"],
            "results": evidence.get("results", []),
            "supporting": evidence.get("supporting", []),
        }
    elif decision.stage == Stage.DEEP:
        found["deep"] = {
            "service": evidence.get("service", ""),
            "thinking": evidence.get("thinking", False),
            "verdict": DEEP_VERDICTS.get(decision.outcome),
            "searched": evidence.get("searched", []),
            "claims": evidence.get("claims", []),
            "answer_version": evidence.get("answer_version"),
        }
    elif "twin" in evidence:
        found["duplicate"] = {
            "twin": evidence["twin"],
            "exact": evidence.get("exact", False),
            "similarity": evidence.get("similarity"),
            "threshold": evidence.get("threshold"),
        }
    elif "dangling" in evidence:
        # A reviewed flag keeps what the check said under "flag"; its reason
        # is then the person's.
        found["dangling"] = {
            "hits": {
                field: [
                    {"phrase": phrase, "start": start, "end": end}
                    for phrase, start, end in hits
                ]
                for field, hits in evidence["dangling"].items()
            },
            "flag": evidence.get("flag", decision.reason),
        }
    elif "before" in evidence and "after" in evidence:
        found["expert_edit"] = {
            "before": evidence["before"],
            "after": evidence["after"],
        }
    return found


def _post(post: dict) -> dict:
    # A post's texts may have been imported as numbers (a post id).
    return {**post, **{name: str(post[name]) for name in POST_TEXTS if name in post}}
