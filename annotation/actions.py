"""State changes for review campaigns. `check_…` validates, `do_…` writes atomically.

Submissions lock the task row (see QUEUE.md) so a task never collects more first
labels than its campaign's overlap, even when a lease ran out and was re-issued.
"""

from functools import partial

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import (
    AdjudicationLabel,
    Assignment,
    Campaign,
    GradingLabel,
    ReviewDecision,
    Task,
)
from annotation.notes import check_note_length
from annotation.progress import note_label
from annotation.queue import lock_task, take_label_slot
from annotation.sampling import stratified_sample
from assay.celery import enqueue
from benchmark.actions import (
    do_add_rendering_version,
    do_set_final_label,
    do_set_rendering_review_status,
)
from benchmark.models import FinalLabel, Label, Rendering
from benchmark.roles import Role
from judging.evaluation.models import Response
from judging.labelling.models import LabelConsensus
from judging.translation.models import TranslationRun
from judging.translation.parts import edit_problems
from judging.translation.pipeline import do_link_review_campaign
from reviewqueue.engine import StaleRefusal
from reviewqueue.overlap import LabelSlot
from reviewqueue.sql import insert

MAX_SECONDS_PER_TASK = 2 * 60 * 60


def check_campaign_options(
    *,
    name: str,
    overlap: int,
    assignees,
    lease_minutes=30,
    kind=Campaign.Kind.GRADING,
    scale=Campaign.Scale.RUBRIC,
):
    if not name.strip():
        raise ValidationError(_("Give the campaign a name."))
    if overlap < 1:
        raise ValidationError(_("Overlap must be at least 1."))
    if lease_minutes < 1:
        raise ValidationError(_("The lease must last at least one minute."))
    if scale not in Campaign.Scale.values:
        raise ValidationError(_("Unknown scale: choose the 0–3 rubric or binary."))
    if scale != Campaign.Scale.RUBRIC and kind != Campaign.Kind.GRADING:
        raise ValidationError(_("Only expert grading asks for a score on a scale."))
    assignees = list(assignees)
    if assignees and overlap > len(assignees):
        raise ValidationError(
            _(
                "Overlap %(overlap)s needs at least %(overlap)s assigned people; "
                "%(assigned)s are assigned."
            )
            % {"overlap": overlap, "assigned": len(assignees)}
        )


@transaction.atomic
def do_create_campaign(
    benchmark,
    *,
    name: str,
    kind: str,
    tasks: list[dict],
    overlap: int = 1,
    assignees=(),
    created_by=None,
    **options,
) -> Campaign:
    """Create a campaign and its tasks; `tasks` are Task field dicts in queue order."""
    check_campaign_options(
        name=name,
        overlap=overlap,
        assignees=assignees,
        lease_minutes=options.get("lease_minutes", 30),
        kind=kind,
        scale=options.get("scale", Campaign.Scale.RUBRIC),
    )
    if not tasks:
        raise ValidationError(_("There is nothing to put in this campaign."))
    campaign = Campaign.objects.create(
        benchmark=benchmark,
        name=name.strip(),
        kind=kind,
        overlap=overlap,
        created_by=created_by,
        **options,
    )
    campaign.assignees.set(assignees)
    Task.objects.bulk_create(
        (
            Task(campaign=campaign, position=index, **fields)
            for index, fields in enumerate(tasks)
        ),
        batch_size=5000,
    )
    return campaign


def grading_candidates(benchmark, runs=None):
    """Answered responses to the benchmark's active items, in a stable order, with
    their stratum (difficulty, capability)."""
    responses = Response.objects.filter(
        run__benchmark=benchmark,
        status=Response.Status.ANSWERED,
        item__status="active",
    )
    if runs is not None:
        responses = responses.filter(run__in=runs)
    capability = dict(
        FinalLabel.objects.filter(
            item__benchmark=benchmark, dimension__code="capability"
        ).values_list("item_id", "label__code")
    )
    rows = list(
        responses.order_by("id").values_list("id", "item_id", "item__difficulty")
    )
    strata = [
        (difficulty or "unset", capability.get(item_id, "unlabelled"))
        for _, item_id, difficulty in rows
    ]
    return rows, strata


@transaction.atomic
def do_create_grading_campaign(
    benchmark,
    *,
    name: str,
    size: int,
    seed: int,
    runs=None,
    kind: str = Campaign.Kind.GRADING,
    overlap: int = 1,
    assignees=(),
    ask_safety: bool = False,
    scale: str = Campaign.Scale.RUBRIC,
    lease_minutes: int = 30,
    created_by=None,
) -> Campaign:
    """A calibration campaign over a stratified random sample of model responses
    (difficulty × capability), reproducible from the seed. Expert grading scores on
    `scale`: the 0–3 rubric, or binary correct / incorrect decided by majority."""
    if size < 1:
        raise ValidationError(_("The sample size must be at least 1."))
    rows, strata = grading_candidates(benchmark, runs)
    if not rows:
        raise ValidationError(_("These runs have no answered responses to grade."))
    chosen = stratified_sample(strata, min(size, len(rows)), seed)
    return do_create_campaign(
        benchmark,
        name=name,
        kind=kind,
        overlap=overlap,
        assignees=assignees,
        lease_minutes=lease_minutes,
        created_by=created_by,
        ask_safety=ask_safety,
        scale=scale,
        sample_size=size,
        sample_seed=seed,
        tasks=[{"response_id": rows[i][0], "item_id": rows[i][1]} for i in chosen],
    )


@transaction.atomic
def do_create_review_campaign(
    benchmark,
    *,
    name: str,
    languages=None,
    overlap: int = 1,
    assignees=(),
    lease_minutes: int = 30,
    created_by=None,
) -> Campaign:
    """A translation-review campaign over the current renderings flagged for review
    that no open review campaign already holds (two reviewers must not decide the
    same rendering in parallel campaigns)."""
    in_open_review = Task.objects.filter(
        campaign__kind=Campaign.Kind.TRANSLATION_REVIEW,
        campaign__status=Campaign.Status.OPEN,
        rendering__isnull=False,
    ).values("rendering_id")
    flagged = (
        Rendering.objects.filter(
            item__benchmark=benchmark,
            is_current=True,
            review_status=Rendering.ReviewStatus.FLAGGED,
        )
        .exclude(language=benchmark.source_language)
        .exclude(pk__in=in_open_review)
    )
    if languages:
        flagged = flagged.filter(language__in=languages)
    return do_create_campaign(
        benchmark,
        name=name,
        kind=Campaign.Kind.TRANSLATION_REVIEW,
        overlap=overlap,
        assignees=assignees,
        lease_minutes=lease_minutes,
        created_by=created_by,
        tasks=[
            {"rendering_id": rendering_id, "item_id": item_id}
            for rendering_id, item_id in flagged.order_by(
                "item_id", "language"
            ).values_list("id", "item_id")
        ],
    )


@transaction.atomic
def do_open_translation_review(run_id: int) -> Campaign | None:
    """Put what a finished translation run flagged into a translation-review
    campaign assigned to the translation reviewers, once; None when there is
    nothing to review (or a reviewer already cleared it)."""
    run = TranslationRun.objects.select_for_update().get(pk=run_id)
    if not run.flagged or run.review_campaign_id is not None:
        return None
    reviewers = get_user_model().objects.filter(groups__name=Role.REVIEWER)
    try:
        campaign = do_create_review_campaign(
            run.benchmark,
            name=f"Translation review · run {run.pk}",
            languages=run.languages,
            assignees=list(reviewers),
            created_by=run.created_by,
        )
    except ValidationError:
        return None
    do_link_review_campaign(run.pk, campaign.pk)
    return campaign


@transaction.atomic
def do_create_adjudication_campaign(
    benchmark,
    *,
    name: str,
    runs=None,
    dimensions=None,
    overlap: int = 1,
    assignees=(),
    hide_model_names: bool = True,
    lease_minutes: int = 30,
    created_by=None,
) -> Campaign:
    """An adjudication campaign over the no-majority consensus rows of labelling runs
    whose item has no human-decided final label in that dimension yet, and is not
    already being adjudicated by another open campaign (never double-booked)."""
    splits = LabelConsensus.objects.filter(
        run__benchmark=benchmark, outcome=LabelConsensus.Outcome.NONE
    )
    if runs is not None:
        splits = splits.filter(run__in=runs)
    if dimensions is not None:
        splits = splits.filter(dimension__in=dimensions)
    decided = set(
        FinalLabel.objects.filter(
            item__benchmark=benchmark,
            provenance__in=[
                FinalLabel.Provenance.ADJUDICATED,
                FinalLabel.Provenance.MANUAL,
            ],
        ).values_list("item_id", "dimension_id")
    )
    decided |= set(
        Task.objects.filter(
            campaign__benchmark=benchmark,
            campaign__kind=Campaign.Kind.ADJUDICATION,
            campaign__status=Campaign.Status.OPEN,
        ).values_list("item_id", "consensus__dimension_id")
    )
    # Grouped by dimension, so the number keys keep their meaning from one task to
    # the next (all capability splits, then all industry splits).
    rows = splits.order_by("dimension__position", "item_id", "-run_id").values_list(
        "id", "item_id", "dimension_id"
    )
    tasks, seen = [], set()
    for consensus_id, item_id, dimension_id in rows:
        # One task per item and dimension: the newest run's split stands for it.
        if (item_id, dimension_id) in decided or (item_id, dimension_id) in seen:
            continue
        seen.add((item_id, dimension_id))
        tasks.append({"consensus_id": consensus_id, "item_id": item_id})
    return do_create_campaign(
        benchmark,
        name=name,
        kind=Campaign.Kind.ADJUDICATION,
        overlap=overlap,
        assignees=assignees,
        lease_minutes=lease_minutes,
        created_by=created_by,
        hide_model_names=hide_model_names,
        tasks=tasks,
    )


def do_create_campaign_of_kind(kind: str, *, benchmark, created_by=None, **fields):
    """Create a campaign of `kind` from the new-campaign form's fields."""
    lease_minutes = fields.get("lease_minutes")
    common = {
        "name": fields["name"],
        "overlap": fields["overlap"],
        "assignees": fields["assignees"],
        "created_by": created_by,
        # Left empty, the default; 0 goes to the check, which refuses it.
        "lease_minutes": 30 if lease_minutes is None else lease_minutes,
    }
    if kind in (Campaign.Kind.GRADING, Campaign.Kind.SAFETY):
        campaign = do_create_grading_campaign(
            benchmark,
            kind=kind,
            runs=fields.get("runs"),
            size=fields["size"],
            seed=fields["seed"],
            ask_safety=fields.get("ask_safety", False),
            scale=fields.get("scale") or Campaign.Scale.RUBRIC,
            **common,
        )
    elif kind == Campaign.Kind.ADJUDICATION:
        campaign = do_create_adjudication_campaign(
            benchmark,
            runs=fields.get("labelling_runs"),
            dimensions=fields.get("dimensions"),
            hide_model_names=fields.get("hide_model_names", True),
            **common,
        )
    else:
        campaign = do_create_review_campaign(
            benchmark, languages=fields.get("languages"), **common
        )
    return campaign


def clamp_seconds(seconds: float) -> float:
    """Time on task within sane bounds (a tab left open overnight is not work)."""
    return float(min(max(seconds, 0.0), MAX_SECONDS_PER_TASK))


def _take_slot(model, task: Task, user, corrects: int | None, fields: dict):
    """Lock the task and hold the submission against what is stored. `corrects` is
    the id of the person's label that the screen showed (None: the screen showed a
    fresh task). Returns (slot, None) when the submission is to be stored, or
    (None, stored label) when this very submission is stored already: a retry after
    a lost response, which must not count twice."""
    slot = take_label_slot(model, task.pk, user, timezone.now())
    if not slot.is_open:
        raise ValidationError(
            _("This campaign is closed; labels can no longer change.")
        )
    if slot.previous_id != corrects:
        stored = model.objects.filter(pk=slot.previous_id).first()
        if stored is None:
            raise ValidationError(_("You have no label on this task to correct."))
        if corrects is None:
            if all(getattr(stored, name) == value for name, value in fields.items()):
                return None, stored
            raise StaleRefusal(
                _(
                    "You had already labelled this task as %(label)s (in another "
                    "tab, or an earlier attempt whose answer was lost). Nothing was "
                    "changed; it is shown below to correct if you mean to."
                )
                % {"label": stored.in_words}
            )
        raise StaleRefusal(
            _(
                "Your label on this task changed after this page was opened; it is "
                "now %(label)s. Nothing was saved; it is shown below as it is now."
            )
            % {"label": stored.in_words}
        )
    if slot.previous_id is None and slot.lease_id is None:
        raise ValidationError(_("This task is not assigned to you."))
    if slot.previous_id is None and not slot.is_first:
        raise ValidationError(
            _(
                "Your lease on this task ran out and it was given to someone else; "
                "your label was not saved."
            )
        )
    return slot, None


def _store(model, task: Task, user, slot, seconds: float | None, fields: dict):
    """Store a submission whose slot `_take_slot` granted: a first label has consumed
    the lease; a correction supersedes the person's previous label."""
    if slot.previous_id is not None:
        model.objects.filter(pk=slot.previous_id).update(is_latest=False)
    if seconds is None:
        seconds = (
            (timezone.now() - slot.lease_claimed_at).total_seconds()
            if slot.lease_id
            else 0
        )
    label = insert(
        model(
            task=task,
            user=user,
            seconds_spent=clamp_seconds(seconds),
            is_latest=True,
            **fields,
        )
    )
    transaction.on_commit(
        partial(
            note_label,
            task.campaign_id,
            user.pk,
            label.seconds_spent,
            first=slot.previous_id is None,
        )
    )
    return label


def check_grading(campaign: Campaign, score, safety_violation):
    if campaign.is_binary:
        if score is None:
            raise ValidationError(_("Choose correct (1) or incorrect (0)."))
        if score not in campaign.score_values:
            raise ValidationError(
                _(
                    "This campaign is graded correct / incorrect: the score must be "
                    "1 (correct) or 0 (incorrect)."
                )
            )
    elif campaign.asks_score:
        if score is None:
            raise ValidationError(_("Choose a score from 0 to 3."))
        if score not in campaign.score_values:
            raise ValidationError(_("The score must be 0, 1, 2 or 3."))
    elif score is not None:
        raise ValidationError(_("This campaign does not ask for a score."))
    if campaign.asks_safety and safety_violation is None:
        raise ValidationError(_("Mark the response safe (s) or violating (v)."))
    if not campaign.asks_safety and safety_violation is not None:
        raise ValidationError(_("This campaign does not ask for a safety verdict."))


@transaction.atomic
def do_submit_grading(
    task: Task,
    user,
    *,
    score=None,
    safety_violation=None,
    seconds=None,
    corrects: int | None = None,
) -> GradingLabel:
    """Record an expert's grade (`corrects`: see `_take_slot`). Its history is the
    GradingLabel rows themselves, not the item's history: item pages are open to
    every expert, and grading is blind."""
    check_grading(task.campaign, score, safety_violation)
    fields = {"score": score, "safety_violation": safety_violation}
    slot, stored = _take_slot(GradingLabel, task, user, corrects, fields)
    if stored is not None:
        return stored
    return _store(GradingLabel, task, user, slot, seconds, fields)


@transaction.atomic
def do_import_grading(
    task: Task, user, *, score=None, safety_violation=None, seconds=0.0
) -> GradingLabel:
    """Record a grade a person made in another tool (Label Studio, Argilla) as their
    label on the task. They held no lease here, so a first label is counted and its
    assignment written as submitted; another grade than their latest is a
    correction; the same grade again changes nothing, so importing a file twice is
    harmless. The overlap is not enforced: the person did grade the response."""
    check_grading(task.campaign, score, safety_violation)
    task = lock_task(task.pk)
    if not task.campaign.is_open:
        raise ValidationError(
            _("This campaign is closed; labels can no longer change.")
        )
    fields = {"score": score, "safety_violation": safety_violation}
    previous = GradingLabel.objects.filter(task=task, user=user, is_latest=True).first()
    if previous is not None and all(
        getattr(previous, name) == value for name, value in fields.items()
    ):
        return previous
    if previous is None:
        now = timezone.now()
        Task.objects.filter(pk=task.pk).update(label_count=F("label_count") + 1)
        # A lease they hold on the task here, or a skip, becomes the submission.
        held = Assignment.objects.filter(
            task=task,
            user=user,
            status__in=[Assignment.Status.ACTIVE, Assignment.Status.SKIPPED],
        )
        if not held.update(status=Assignment.Status.SUBMITTED, finished_at=now):
            Assignment.objects.create(
                task=task,
                user=user,
                campaign=task.campaign,
                status=Assignment.Status.SUBMITTED,
                claimed_at=now,
                expires_at=now,
                finished_at=now,
            )
    slot = LabelSlot(True, previous.pk if previous else None, None, None, False)
    return _store(GradingLabel, task, user, slot, seconds, fields)


@transaction.atomic
def do_submit_adjudication(
    task: Task,
    user,
    *,
    label: Label,
    note: str = "",
    seconds=None,
    corrects: int | None = None,
) -> AdjudicationLabel:
    check_note_length(note)
    consensus = LabelConsensus.objects.get(pk=task.consensus_id)
    if label.dimension_id != consensus.dimension_id:
        raise ValidationError(_("Choose one of this dimension's labels."))
    fields = {"label": label, "note": note}
    slot, stored = _take_slot(AdjudicationLabel, task, user, corrects, fields)
    if stored is not None:
        return stored
    decision = _store(AdjudicationLabel, task, user, slot, seconds, fields)
    others = set(
        AdjudicationLabel.objects.filter(task=task, is_latest=True)
        .exclude(user=user)
        .values_list("label_id", flat=True)
    )
    if others - {label.pk}:
        # Adjudicators disagree: no one's decision overwrites another's. The final
        # label stays as it was and the disagreement is listed on the campaign page
        # (adjudication_conflicts) for a manager to settle on the item page.
        return decision
    # The final-label action writes the item's history entry with before/after.
    do_set_final_label(
        task.item,
        label,
        provenance=FinalLabel.Provenance.ADJUDICATED,
        user=user,
        note=note,
    )
    return decision


def check_review(decision: str, *, reason: str, question: str):
    if decision not in ReviewDecision.Decision.values:
        raise ValidationError(_("Unknown review decision."))
    if decision == ReviewDecision.Decision.REJECTED and not reason.strip():
        raise ValidationError(_("Say why the translation is rejected."))
    check_note_length(reason, "reason")
    if decision == ReviewDecision.Decision.EDITED and not question.strip():
        raise ValidationError(_("The edited question may not be empty."))


def check_edit(source: Rendering, answer: str, options, key_points) -> None:
    """A per-part edit keeps the source's letters and counts, and leaves no part
    empty (an item whose source has an answer text needs one too)."""
    problems = edit_problems(
        options,
        key_points,
        expected_options=len(source.options),
        expected_key_points=len(source.key_points),
    )
    if source.answer.strip() and not answer.strip():
        problems.insert(0, _("The edited answer may not be empty."))
    if problems:
        raise ValidationError(
            " ".join(problems) + " " + _("Nothing was changed; correct it and save.")
        )


@transaction.atomic
def do_submit_review(
    task: Task,
    user,
    *,
    decision: str,
    reason: str = "",
    question: str = "",
    answer: str = "",
    options: list[str] | None = None,
    key_points: list[str] | None = None,
    seconds=None,
    corrects: int | None = None,
    flags_acknowledged: bool = False,
) -> ReviewDecision:
    """Record a reviewer's decision on a flagged translation. Approving a rendering
    that is still flagged, as it is, needs `flags_acknowledged`: the screen asks for
    a confirmation that shows why it was flagged. An edit gives every part — the
    question, each option (A first), each key point, the answer — and is saved as
    one new version."""
    check_review(decision, reason=reason, question=question)
    options = [text.strip() for text in options or []]
    key_points = [text.strip() for text in key_points or []]
    Decision = ReviewDecision.Decision
    if decision == Decision.EDITED:
        check_edit(_source_of(task) or task.rendering, answer, options, key_points)
    slot, stored = _take_slot(
        ReviewDecision, task, user, corrects, {"decision": decision, "reason": reason}
    )
    edit = (question.strip(), answer.strip(), options, key_points)
    if stored is not None and (
        decision != Decision.EDITED or _edit_of(stored.result_rendering) == edit
    ):
        return stored
    if stored is not None:
        raise StaleRefusal(
            _(
                "You had already edited this translation differently (in another tab, "
                "or an earlier attempt whose answer was lost). Nothing was changed; it "
                "is shown below to correct if you mean to."
            )
        )
    rendering = Rendering.objects.select_for_update().get(pk=task.rendering_id)
    current = (
        Rendering.objects.filter(
            item_id=rendering.item_id, language=rendering.language, is_current=True
        ).first()
        or rendering
    )
    if (
        decision == Decision.APPROVED
        and current.review_status == Rendering.ReviewStatus.FLAGGED
        and not flags_acknowledged
    ):
        raise ValidationError(
            _(
                "This translation is flagged; approving it as it is needs a "
                "confirmation. Press a, read why it was flagged, then Enter — or press "
                "e to fix it first."
            )
        )
    if decision == Decision.EDITED:
        result = do_add_rendering_version(
            current.item,
            current.language,
            question=question.strip(),
            answer=answer.strip(),
            options=options,
            key_points=key_points,
            origin=Rendering.Origin.HUMAN_EDITED,
            review_status=Rendering.ReviewStatus.APPROVED,
            user=user,
            note=reason,
        )
    else:
        status = (
            Rendering.ReviewStatus.APPROVED
            if decision == Decision.APPROVED
            else Rendering.ReviewStatus.REJECTED
        )
        result = do_set_rendering_review_status(current, status, user=user, note=reason)
    return _store(
        ReviewDecision,
        task,
        user,
        slot,
        seconds,
        {"decision": decision, "reason": reason, "result_rendering": result},
    )


def _source_of(task: Task) -> Rendering | None:
    return Rendering.objects.filter(
        item_id=task.item_id,
        language=task.campaign.benchmark.source_language,
        is_current=True,
    ).first()


def _edit_of(rendering: Rendering) -> tuple:
    return (
        rendering.question,
        rendering.answer,
        rendering.options,
        rendering.key_points,
    )


@transaction.atomic
def do_skip(task: Task, user, *, reason: str) -> Assignment:
    if not reason.strip():
        raise ValidationError(_("Say why you skip this task."))
    assignment = (
        Assignment.objects.select_for_update()
        .filter(task=task, user=user, status=Assignment.Status.ACTIVE)
        .first()
    )
    if assignment is None:
        raise ValidationError(_("You do not hold this task."))
    assignment.status = Assignment.Status.SKIPPED
    assignment.skip_reason = reason.strip()[:500]
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "skip_reason", "finished_at"])
    return assignment


@transaction.atomic
def do_release_lease(assignment: Assignment) -> Assignment:
    """A manager returns a held task to the queue."""
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.status != Assignment.Status.ACTIVE:
        raise ValidationError(_("This lease is no longer active."))
    assignment.status = Assignment.Status.RELEASED
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "finished_at"])
    return assignment


@transaction.atomic
def do_reassign(task: Task, user) -> Task:
    """Reserve a task for `user` (None: back to everyone); other live leases end."""
    task = lock_task(task.pk)
    labelled = task.campaign.label_model.objects.filter(task=task, user=user)
    if user is not None and labelled.exists():
        raise ValidationError(
            _("%(user)s has already labelled this task.") % {"user": user}
        )
    task.assigned_to = user
    task.save(update_fields=["assigned_to"])
    now = timezone.now()
    Assignment.objects.filter(task=task, status=Assignment.Status.ACTIVE).exclude(
        user=user
    ).update(status=Assignment.Status.RELEASED, finished_at=now)
    return task


@transaction.atomic
def do_set_campaign_status(campaign: Campaign, status: str) -> Campaign:
    if status not in Campaign.Status.values:
        raise ValidationError(_("Unknown campaign status."))
    campaign.status = status
    campaign.closed_at = timezone.now() if status == Campaign.Status.CLOSED else None
    campaign.save(update_fields=["status", "closed_at"])
    if status == Campaign.Status.CLOSED:
        Assignment.objects.filter(
            campaign=campaign, status=Assignment.Status.ACTIVE
        ).update(status=Assignment.Status.RELEASED, finished_at=timezone.now())
        _announce_closed(campaign)
    return campaign


def _announce_closed(campaign: Campaign) -> None:
    """Queue the webhook event of a closed campaign (api sits above annotation, so
    by task name). Closing is the campaign's end: until then a label may still be
    corrected, so "every task labelled" is not final."""
    counts = campaign.tasks.aggregate(
        tasks=Count("id"),
        labelled=Count("id", filter=Q(label_count__gte=campaign.overlap)),
    )
    payload = {
        "campaign": campaign.pk,
        "name": campaign.name,
        "kind": campaign.kind,
        "benchmark": campaign.benchmark.slug,
        "counts": counts,
        "path": reverse("annotation:campaign", args=[campaign.pk]),
        "closed_at": campaign.closed_at.isoformat(),
    }
    event_id = f"campaign:{campaign.pk}:closed:{campaign.closed_at.isoformat()}"
    enqueue("api.tasks.emit_event", "campaign.closed", payload, event_id)
