"""The checks on the release sample (IndustryBench §3.3), run after the sample
is drawn from the verified pool and before anything is released:

    exact dedup: exact twins among the sample's questions (their normal forms,
                 construction.dedup.normalise) — the earliest is kept, the others
                 rejected;
    dangling:    a dangling-reference phrase (construction.dangling) in a
                 question or its answer leaves the candidate `pending` until a
                 person approves or removes it (actions.do_review_flag).

Neither calls a model; each is one chunk of a StageRun over the whole sample
(a candidate is compared with the others), deciding only the candidates the
run is to decide. The verdict functions serve runs and the demo alike.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from construction.dangling import find_dangling, parse_phrases
from construction.dedup import KEPT, exact_twins
from construction.models import Candidate, Stage, StageDecision, StageRun

Outcome = StageDecision.Outcome
# The `model` of the decisions of these checks.
EXACT_METHOD = "exact-question"
DANGLING_METHOD = "dangling-phrases"
FLAGGED_FIELDS = ("question", "reference_answer")

Verdict = tuple[str, str, dict]


def dangling_reason(phrases) -> str:
    return "dangling reference: " + ", ".join(dict.fromkeys(phrases))


def exact_verdicts(pool: list[Candidate]) -> list[Verdict]:
    """(outcome, reason, evidence) per pool member: exact twins among the pool
    (oldest kept) are rejected, the rest pass."""
    twins = exact_twins([candidate.question for candidate in pool])
    verdicts = []
    for index in range(len(pool)):
        if twins[index] == KEPT:
            verdicts.append((Outcome.PASS, "", {}))
            continue
        twin = pool[twins[index]].pk
        verdicts.append(
            (
                Outcome.REJECT,
                f"Exact duplicate of candidate {twin}",
                {"twin": twin, "exact": True},
            )
        )
    return verdicts


def dangling_verdicts(pool: list[Candidate], phrases: list[str]) -> list[Verdict]:
    """(outcome, reason, evidence) per pool member: a dangling reference in a
    question or answer is pending for a person, the rest pass."""
    verdicts = []
    for candidate in pool:
        hits = {
            field: find_dangling(getattr(candidate, field), phrases)
            for field in FLAGGED_FIELDS
        }
        if not any(hits.values()):
            verdicts.append((Outcome.PASS, "", {}))
            continue
        reason = dangling_reason(
            hit.phrase for field in FLAGGED_FIELDS for hit in hits[field]
        )
        evidence = {
            "dangling": {
                field: [[hit.phrase, hit.start, hit.end] for hit in found]
                for field, found in hits.items()
                if found
            }
        }
        verdicts.append((Outcome.PENDING, reason, evidence))
    return verdicts


def check_sample(run: StageRun, pool: list[Candidate], candidate_ids) -> None:
    """Run's check over the whole pool (the sample, or what passed exact dedup);
    decisions for the candidates the run is to decide."""
    if run.stage == Stage.EXACT:
        verdicts, method = exact_verdicts(pool), EXACT_METHOD
    else:
        verdicts = dangling_verdicts(pool, parse_phrases(run.phrases))
        method = DANGLING_METHOD
    wanted = set(candidate_ids)
    decisions = [
        StageDecision(
            candidate=candidate,
            stage=run.stage,
            outcome=outcome,
            reason=reason,
            model=method,
            prompt_version=run.prompt_version,
            evidence=evidence,
            run=run,
        )
        for candidate, (outcome, reason, evidence) in zip(pool, verdicts, strict=True)
        if candidate.pk in wanted
    ]
    with transaction.atomic():
        # ignore_conflicts: the checks give the same result every time, and a
        # flag a person has already decided must keep that person's decision.
        StageDecision.objects.bulk_create(decisions, ignore_conflicts=True)
        StageRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
