"""Read-only helpers that gather what the three queue screens and the dashboard show.

The expert screen is blind: `queue.grading_view` reads only the item, its reference text
and the response text — never the run (model name), judgments or other people's labels.
"""

from string import ascii_uppercase

from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef
from django.http import Http404
from django.utils.translation import gettext as _

from annotation.models import Assignment, Campaign, Task
from annotation.progress import progress_and_pace
from annotation.queue import (
    campaign_with_membership,
    do_claim_next,
    following_task_id,
    held_task_id,
    other_renderings,
    previous_task_id,
    submitted_count,
)
from assay.per_language import per_language
from benchmark.formats import LETTERS
from benchmark.models import Label, Rendering
from benchmark.roles import Role, has_role
from benchmark.rubric import BINARY, CORRECT_MEANS, RUBRIC, SAFETY
from benchmark.taxonomy import LANGUAGE_NAMES
from judging.translation.pipeline import latest_review
from judging.translation.rendering_check import check_rendering, segments

KIND_ROLE = {
    Campaign.Kind.GRADING: Role.EXPERT,
    Campaign.Kind.SAFETY: Role.EXPERT,
    Campaign.Kind.ADJUDICATION: Role.ADJUDICATOR,
    Campaign.Kind.TRANSLATION_REVIEW: Role.REVIEWER,
}
KIND_SCREEN = {
    Campaign.Kind.GRADING: "annotation:grade",
    Campaign.Kind.SAFETY: "annotation:grade",
    Campaign.Kind.ADJUDICATION: "annotation:adjudicate",
    Campaign.Kind.TRANSLATION_REVIEW: "annotation:review",
}


def campaign_for_worker(campaign_id: int, user, kinds) -> Campaign:
    """The campaign if `user` may work in it on this screen; 404 / 403 otherwise."""
    campaign = campaign_with_membership(campaign_id, user, kinds)
    if campaign is None:
        raise Http404(_("No such campaign."))
    if not may_work_in(campaign, user):
        raise PermissionDenied
    return campaign


def may_work_in(campaign: Campaign, user) -> bool:
    """Managers always; otherwise the screen's role, and being assigned when the
    campaign names its people (a campaign without assignees is open to the role)."""
    if has_role(user, Role.MANAGER):
        return True
    if not has_role(user, KIND_ROLE[campaign.kind]):
        return False
    if not hasattr(campaign, "user_assigned"):
        assignees = campaign.assignees.all()
        return not assignees.exists() or assignees.filter(pk=user.pk).exists()
    return campaign.user_assigned or not campaign.has_assignees


def campaigns_for(user):
    """Campaigns the user works in (all of them for managers)."""
    campaigns = Campaign.objects.select_related("benchmark").order_by(
        "status", "-created_at"
    )
    if has_role(user, Role.MANAGER):
        return campaigns
    kinds = [kind for kind, role in KIND_ROLE.items() if has_role(user, role)]
    assigned = Campaign.assignees.through.objects.filter(campaign_id=OuterRef("pk"))
    return campaigns.filter(kind__in=kinds).filter(
        Exists(assigned.filter(user_id=user.pk)) | ~Exists(assigned)
    )


def my_progress(campaign: Campaign, user, model) -> dict:
    """Done/total for the campaign, my count, my median pace and an ETA for my share."""
    progress, pace = progress_and_pace(campaign, user, model)
    mine = submitted_count(campaign, user)
    remaining = max(progress["needed"] - progress["done"], 0)
    people = max(progress["people"], 1)
    my_share = -(-remaining // people)
    percent = 100 * progress["done"] / progress["needed"] if progress["needed"] else 0
    return {
        **progress,
        "percent": round(percent, 1),
        "mine": mine,
        "pace_seconds": pace,
        "eta_seconds": pace * my_share if pace is not None else None,
        "remaining": remaining,
    }


def pick_task(campaign: Campaign, user, task_id: int | None, *, claim: bool):
    """The task to show: one of my submitted tasks (going back), else my lease, else
    (only when `claim`, i.e. on a POST) the next claim. Returns (task id or None,
    is_revisit)."""
    if task_id is not None:
        status = (
            Assignment.objects.filter(
                campaign=campaign,
                user=user,
                task_id=task_id,
                status__in=[Assignment.Status.SUBMITTED, Assignment.Status.ACTIVE],
            )
            .values_list("status", flat=True)
            .first()
        )
        if status is None:
            raise Http404(_("You have no such task in this campaign."))
        return task_id, status == Assignment.Status.SUBMITTED
    if not claim:
        return held_task_id(campaign, user), False
    assignment = do_claim_next(campaign, user)
    return (assignment.task_id if assignment else None), False


def navigation(
    campaign: Campaign, user, task: Task | None, is_revisit: bool, just_submitted=None
) -> dict:
    """Back / forward targets. Right after a first submission the previous task is
    the one just submitted, which saves a query on the hot path."""
    current = task.pk if task else None
    if is_revisit or just_submitted is None:
        previous = previous_task_id(campaign, user, current if is_revisit else None)
    else:
        previous = just_submitted
    return {
        "previous_task_id": previous,
        "following_task_id": following_task_id(campaign, user, current)
        if is_revisit
        else None,
    }


def my_latest(model, task: Task, user):
    return model.objects.filter(task=task, user=user, is_latest=True).first()


def reference_rendering(item_id: int, language: str, fallback_language: str):
    renderings = Rendering.objects.filter(item_id=item_id, is_current=True)
    return (
        renderings.filter(language=language).first()
        or renderings.filter(language=fallback_language).first()
    )


def adjudication_task(task: Task, hide_model_names: bool) -> dict:
    consensus = task.consensus
    labels = list(Label.objects.filter(dimension_id=consensus.dimension_id))
    keys = [str((index + 1) % 10) for index in range(len(labels))]
    candidates = []
    for index, candidate in enumerate(consensus.candidates().order_by("annotator_id")):
        candidates.append(
            {
                "who": _("Model %(letter)s") % {"letter": ascii_uppercase[index % 26]}
                if hide_model_names
                else candidate.annotator.name,
                "label": candidate.label,
                "status": candidate.get_status_display(),
                "rationale": candidate.rationale,
            }
        )
    renderings = list(
        Rendering.objects.filter(item_id=task.item_id, is_current=True).order_by(
            "language"
        )
    )
    source = task.campaign.benchmark.source_language
    renderings.sort(key=lambda r: (r.language != source, r.language))
    return {
        "dimension": consensus.dimension,
        "labels": [
            (key, label, consensus.votes.get(label.code, 0))
            for key, label in zip(keys, labels, strict=True)
        ],
        "candidates": candidates,
        "renderings": [
            {
                "language": r.language,
                "language_name": LANGUAGE_NAMES.get(r.language, r.language),
                "question": r.question,
                "answer": r.answer,
            }
            for r in renderings
        ],
    }


def item_languages(item_id: int, shown: dict) -> list[dict]:
    """The question and reference answer the model was asked (`shown`) first, then
    the item's other current renderings that were not rejected, for the expert to
    switch to. One statement."""
    others = other_renderings(item_id, shown["language"])
    languages = [(shown["language"], shown["question"], shown["reference_answer"])]
    return [
        {
            "language": language,
            "language_name": LANGUAGE_NAMES.get(language, language),
            "question": question,
            "answer": answer,
        }
        for language, question, answer in [*languages, *others]
    ]


def review_task(task: Task) -> dict:
    """Source beside target part by part — question, each option under its letter,
    each key point, answer — with tokens present on one side only highlighted and
    each part's preservation flag beside it."""
    flagged = task.rendering
    target = (
        Rendering.objects.filter(
            item_id=flagged.item_id, language=flagged.language, is_current=True
        ).first()
        or flagged
    )
    source_language = task.campaign.benchmark.source_language
    source = reference_rendering(task.item_id, source_language, source_language)
    check = check_rendering(
        source.question if source else "",
        source.answer if source else "",
        target.question,
        target.answer,
        source_language=source_language,
        target_language=target.language,
        source_options=source.options if source else [],
        target_options=target.options,
        source_key_points=source.key_points if source else [],
        target_key_points=target.key_points,
    ).as_dict()
    return {
        "source": source,
        "target": target,
        "flagged": flagged,
        "source_language_name": LANGUAGE_NAMES.get(source_language, source_language),
        "target_language_name": LANGUAGE_NAMES.get(target.language, target.language),
        "parts": review_parts(source, target, check),
        "check": check,
        "faithfulness": faithfulness_of(target),
    }


def review_parts(source: Rendering | None, target: Rendering, check: dict) -> list:
    """One row per part, in the order a reader meets them: its name, the source and
    target text split for highlighting, the text the editor starts from, and the
    preservation flag naming it. Options and key points follow the source's count
    (the editor asks for exactly as many); a target with more shows them too."""
    spans = {
        "question": check["question"],
        "answer": check["answer"],
        **{part["name"]: part for part in check["parts"]},
    }
    flags = check["part_problems"]
    source_options = source.options if source else []
    source_points = source.key_points if source else []
    named = [("question", _("Question"), "question", 0, None)]
    named += [
        (
            f"option {letter}",
            _("Option %(letter)s") % {"letter": letter},
            f"option_{letter}",
            index,
            "options",
        )
        for index, letter in enumerate(
            LETTERS[: max(len(source_options), len(target.options))]
        )
    ]
    named += [
        (
            f"key point {index + 1}",
            _("Key point %(number)s") % {"number": index + 1},
            f"key_point_{index + 1}",
            index,
            "key_points",
        )
        for index in range(max(len(source_points), len(target.key_points)))
    ]
    if target.answer or (source and source.answer):
        # A multiple-choice item's answer is its key, not a text: no answer row.
        named.append(("answer", _("Answer"), "answer", 0, None))
    rows = []
    for name, label, field, index, listed in named:
        if listed is None:
            source_text = getattr(source, name, "") if source else ""
            target_text = getattr(target, name)
        else:
            sources = getattr(source, listed) if source else []
            targets = getattr(target, listed)
            source_text = sources[index] if index < len(sources) else ""
            target_text = targets[index] if index < len(targets) else ""
        part_spans = spans.get(name, {"source_spans": [], "target_spans": []})
        rows.append(
            {
                "name": name,
                "label": label,
                "field": field,
                "editable": listed is None
                or index
                < len(source_options if listed == "options" else source_points),
                "source": segments(source_text, part_spans["source_spans"]),
                "target": segments(target_text, part_spans["target_spans"]),
                "target_text": target_text,
                "flag": flags.get(name, ""),
            }
        )
    return rows


def faithfulness_of(rendering: Rendering) -> dict | None:
    """The LLM faithfulness score and reason stored with the rendering, if any."""
    review = latest_review(rendering)
    if review is None or review.score is None:
        return None
    return {
        "score": review.score,
        "reason": review.reason,
        "threshold": review.threshold,
        "flagged_by_score": review.flagged_by_score,
    }


SCORE_KEYS = frozenset(str(value) for value, _name, _meaning in RUBRIC + BINARY)
SAFETY_KEYS = frozenset(key for key, _name, _meaning in SAFETY)


def grading_checked(posted, mine) -> dict:
    """The score and safety keys the grading screen shows selected: what a refused
    submission posted, else my label when I revisit a task. Only keys the scales
    have (None for anything else): the choices are rendered once per language and
    these keys (`{% per_language_fragment %}`), so a posted value must not make a
    new copy."""
    if posted:
        score, safety = posted.get("score"), posted.get("safety")
    elif mine is not None:
        score = None if mine.score is None else str(mine.score)
        safety = (
            None
            if mine.safety_violation is None
            else ("v" if mine.safety_violation else "s")
        )
    else:
        score = safety = None
    return {
        "checked_score": score if score in SCORE_KEYS else None,
        "checked_safety": safety if safety in SAFETY_KEYS else None,
    }


@per_language
def grading_choices(binary: bool) -> dict:
    """The grading screen's choices in the reader's language, translated once per
    language (the texts are the judge's English, marked with `gettext_noop`): the
    scale as (value, its key as text, name, meaning, the choice's accessible name —
    none on the binary scale, whose names say it), the safety choices as (key,
    name, meaning, accessible name), and on the binary scale what "correct" means.
    The key is text so that the page does not format a number for each use."""
    if binary:
        scale = [
            (value, str(value), _(name), _(meaning), "")
            for value, name, meaning in BINARY
        ]
        choices = {"scale": scale, "correct_means": _(CORRECT_MEANS)}
    else:
        scale = [
            (
                value,
                str(value),
                _(name),
                _(meaning),
                _("Score %(value)s: %(name)s") % {"value": value, "name": _(name)},
            )
            for value, name, meaning in RUBRIC
        ]
        choices = {"scale": scale}
    safety = [
        (key, _(name), _(meaning), _("Safety: %(name)s") % {"name": _(name)})
        for key, name, meaning in SAFETY
    ]
    return {**choices, "safety": safety}
