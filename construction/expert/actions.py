"""Expert verification and release of forum items (LPFQA §3.2.3), the actions.

    convert ─open─▶ expert decisions (pending) ─experts─▶ pass / refine / reject
    ─▶ released items (multiple choice with options, short answer with key points)

1. `do_open_expert_review`: every converted candidate in the pool gets a pending
   `expert` decision; the experts' queue (`expert_queue`, leased through
   reviewqueue like every review screen) hands them out one at a time.
2. `do_verify_item`: an expert approves (pass), edits (refine: the edited form
   replaces the candidate's, the decision keeps before and after) or rejects
   with the reason. The same verdict twice is stored once; a verdict against
   one already given is refused with what is stored (StaleRefusal).
3. `do_release_forum`: what the experts passed becomes active items of the
   LPFQA formats, with the post's provenance and a `released` decision each;
   refused while an item waits for its expert.

The paper's last step, filtering by model accuracy (LPFQA⁻ / LPFQA⁼), runs on
the released items as evaluation subsets (judging.reporting.subsets).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop, ngettext

from benchmark.creating import NewItem, do_create_item
from benchmark.models import Benchmark, Item
from benchmark.notes import Note
from construction.forum import outputs
from construction.forum.stages import MULTIPLE_CHOICE, SHORT_ANSWER
from construction.models import Candidate, Stage, StageDecision
from construction.pipeline import pool_ids, stages_run
from construction.release import (
    ReleaseResult,
    provenance,
    record_released,
    release_external_id,
)
from reviewqueue import engine
from reviewqueue.engine import StaleRefusal

Outcome = StageDecision.Outcome
EXPERT_VERSION = "expert"
# A verdict refused because the item was decided otherwise before.
ALREADY = {
    Outcome.PASS: gettext_lazy("Candidate %(id)s was already approved by %(who)s."),
    Outcome.REFINE: gettext_lazy("Candidate %(id)s was already edited by %(who)s."),
    Outcome.REJECT: gettext_lazy("Candidate %(id)s was already rejected by %(who)s."),
}
VERDICTS = {
    Outcome.PASS: "approved",
    Outcome.REFINE: "edited",
    Outcome.REJECT: "rejected",
}


def expert_queue(benchmark_id: int) -> str:
    """The reviewqueue queue of a benchmark's expert verification."""
    return f"forum-expert:{benchmark_id}"


def waiting(benchmark_id: int):
    """The expert decisions still pending, oldest first."""
    return StageDecision.objects.filter(
        candidate__source__benchmark_id=benchmark_id,
        stage=Stage.EXPERT,
        outcome=Outcome.PENDING,
    ).order_by("id")


@transaction.atomic
def do_open_expert_review(benchmark: Benchmark) -> int:
    """A pending expert decision for each converted candidate without one;
    returns how many were opened (opening again adds nothing)."""
    if Stage.CONVERT not in stages_run(benchmark.pk):
        raise ValidationError(_("Run the conversion stage first."))
    pool = pool_ids(benchmark.pk, Stage.EXPERT)
    opened = set(
        StageDecision.objects.filter(
            stage=Stage.EXPERT, prompt_version=EXPERT_VERSION, candidate_id__in=pool
        ).values_list("candidate_id", flat=True)
    )
    new = [candidate_id for candidate_id in pool if candidate_id not in opened]
    StageDecision.objects.bulk_create(
        [
            StageDecision(
                candidate_id=candidate_id,
                stage=Stage.EXPERT,
                outcome=Outcome.PENDING,
                reason="Waits for an expert",
                model="expert",
                prompt_version=EXPERT_VERSION,
            )
            for candidate_id in new
        ],
        # An opening racing this one adds each decision once.
        ignore_conflicts=True,
    )
    return len(new)


def forum_progress(benchmark: Benchmark) -> dict:
    """What the construction page shows of the forum pipeline's people steps."""
    expert = StageDecision.objects.filter(
        candidate__source__benchmark=benchmark, stage=Stage.EXPERT
    )
    return {
        "waiting": expert.filter(outcome=Outcome.PENDING).count(),
        "verified": expert.exclude(outcome=Outcome.PENDING).count(),
        "released": StageDecision.objects.filter(
            candidate__source__benchmark=benchmark, stage=Stage.RELEASED
        ).count(),
    }


# -- an expert's verdict ---------------------------------------------------------


def edited_form(form: dict, edit: dict) -> dict:
    """The candidate's form with the expert's edit applied, or ValidationError
    naming what the edit breaks (LPFQA's rules: 5–7 distinct options and one
    key; a reference answer and 1–5 key points)."""
    question = (edit.get("question") or "").strip()
    problems = [] if question else ["the question must not be empty"]
    new = {**form, "question": question}
    if form.get("format") == SHORT_ANSWER:
        answer = (edit.get("answer") or "").strip()
        points = [p.strip() for p in edit.get("key_points") or [] if p.strip()]
        problems += outputs.key_point_issues(answer, points)
        new |= {"answer": answer, "key_points": points}
    else:
        options = [o.strip() for o in edit.get("options") or [] if o.strip()]
        correct = [(edit.get("correct") or "").strip().upper()]
        problems += outputs.option_issues(options, correct)
        new |= {"options": options, "correct": correct}
    if problems:
        text = "; ".join(problems)
        raise ValidationError(text[0].upper() + text[1:] + ".")
    return new


def check_verify(decision: StageDecision, outcome: str, reason: str) -> None:
    if decision.stage != Stage.EXPERT:
        raise ValidationError(_("Only an expert verification is decided here."))
    if outcome not in VERDICTS:
        raise ValidationError(_("Approve, edit or reject."))
    if outcome == Outcome.REJECT and not reason.strip():
        raise ValidationError(_("Say why the item is rejected."))


@transaction.atomic
def do_verify_item(
    decision: StageDecision,
    outcome: str,
    *,
    reason: str = "",
    edit: dict | None = None,
    user,
) -> StageDecision:
    """An expert's verdict on one item: approve (pass), edit (refine, with the
    edited question and options / answer and key points) or reject (with the
    reason)."""
    check_verify(decision, outcome, reason)
    decision = StageDecision.objects.select_for_update().get(pk=decision.pk)
    candidate = Candidate.objects.select_for_update().get(pk=decision.candidate_id)
    new_form = edited_form(candidate.form, edit or {}) if outcome == "refine" else None
    if decision.outcome != Outcome.PENDING:
        same = decision.outcome == outcome and (
            new_form is None or decision.evidence.get("after") == new_form
        )
        if same:
            return decision
        raise StaleRefusal(
            ALREADY[decision.outcome]
            % {"id": candidate.pk, "who": decision.decided_by or _("someone")}
        )
    engine.finish(expert_queue(candidate.source.benchmark_id), decision.pk, user)
    decision.outcome = outcome
    decision.decided_by = user
    if outcome == Outcome.REJECT:
        decision.reason = reason.strip()
    elif new_form is not None:
        decision.reason = "Edited by the expert"
        decision.evidence = {"before": candidate.form, "after": new_form}
        candidate.form = new_form
        candidate.save(update_fields=["form"])
    else:
        decision.reason = "Approved"
    decision.save(update_fields=["outcome", "reason", "evidence", "decided_by"])
    return decision


# -- release ---------------------------------------------------------------------


def check_release_forum(benchmark: Benchmark) -> None:
    if Stage.EXPERT not in stages_run(benchmark.pk):
        raise ValidationError(_("Open the expert verification first."))
    count = waiting(benchmark.pk).count()
    if count:
        raise ValidationError(
            ngettext(
                "%(count)s item waits for expert verification: decide it first.",
                "%(count)s items wait for expert verification: decide each first.",
                count,
            )
            % {"count": count}
        )
    if not pool_ids(benchmark.pk, Stage.RELEASED):
        raise ValidationError(_("No item passed the expert verification."))


@transaction.atomic
def do_release_forum(benchmark: Benchmark, *, user=None) -> ReleaseResult:
    """Each candidate the experts passed becomes an active item of its form;
    releasing again adds nothing."""
    check_release_forum(benchmark)
    pool = list(
        Candidate.objects.select_for_update(of=("self",))
        .filter(pk__in=pool_ids(benchmark.pk, Stage.RELEASED))
        .select_related("source")
        .order_by("id")
    )
    fresh = [candidate for candidate in pool if candidate.item_id is None]
    for candidate in fresh:
        candidate.item = _item(benchmark, candidate, user)
        candidate.save(update_fields=["item"])
    record_released(fresh, user, lambda c: {"format": c.form["format"]})
    return ReleaseResult(released=len(fresh), already=len(pool) - len(fresh))


def _item(benchmark: Benchmark, candidate: Candidate, user) -> Item:
    form = candidate.form
    multiple = form["format"] == MULTIPLE_CHOICE
    found = provenance(candidate)
    found["explanation"] = form.get("explanation", "")
    return do_create_item(
        benchmark,
        NewItem(
            external_id=release_external_id(candidate),
            question=form["question"],
            answer="" if multiple else form["answer"],
            source_kind=Item.SourceKind.OTHER,
            source_reference=candidate.source.reference,
            knowledge_text=candidate.knowledge_text,
            summary=Note(
                gettext_noop(
                    "Released from forum post %(source)s (construction candidate "
                    "%(candidate)s), verified by an expert"
                ),
                source=candidate.source.reference,
                candidate=candidate.pk,
            ),
            provenance=found,
            item_format=form["format"],
            options=form["options"] if multiple else None,
            correct_options=form["correct"] if multiple else None,
            key_points=None if multiple else form["key_points"],
        ),
        user=user,
    )
