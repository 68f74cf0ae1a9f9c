"""State changes for evaluation runs: start (form and command), retry and waive
pending items, re-judge, model categories, panel difficulty, item subsets derived
from the runs (LPFQA⁻ / LPFQA⁼). People's overrides of judge verdicts are in
`overrides.py`."""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from assay.celery import enqueue as queue_task
from benchmark.actions import do_save_item_subset, do_set_item_difficulties
from benchmark.models import Benchmark, FinalLabel, Item, ItemSubset, Label, Rendering
from judging.evaluation.choices import CHOICE_FORMATS
from judging.evaluation.grades import load_binary
from judging.evaluation.models import (
    EvaluationRun,
    Response,
)
from judging.evaluation.pipeline import (
    EVALUATION,
    prompt_version,
    scores_changed,
    warm_leaderboard,
)
from judging.evaluation.progress import failed_call, refresh_counts, scored
from judging.evaluation.scores import load_scores
from judging.llm.asking import (
    OptionsNotShown,
    check_options_shown,
    choose_answer_prompts,
)
from judging.llm.models import PromptTemplate
from judging.llm.prompts import (
    JUDGE_SETS,
    check_template,
    default_template,
    judge_for,
)
from judging.llm.thinking import ThinkingModeUnavailable, thinking_request
from judging.reporting import scoring, subsets
from judging.runs import lifecycle
from judging.runs.items import first_n, narrowed


class EvaluationActionError(ValueError):
    """A request that cannot be carried out; the message says why."""


@transaction.atomic
def do_set_model_category(benchmark, model_name: str, category: str) -> int:
    """Set the category (closed, open MoE, …) of every run of `model_name`."""
    category = category.strip()
    if len(category) > 100:
        raise EvaluationActionError(_("A category has at most 100 characters."))
    runs = list(
        EvaluationRun.objects.filter(benchmark=benchmark, model_name=model_name)
    )
    if not runs:
        raise EvaluationActionError(
            _("No run of model %(model_name)s in this benchmark.")
            % {"model_name": repr(model_name)}
        )
    EvaluationRun.objects.filter(pk__in=[run.pk for run in runs]).update(
        model_category=category
    )
    for language in sorted({run.language for run in runs}):
        warm_leaderboard(benchmark.pk, language)
    return len(runs)


def pending_responses(run: EvaluationRun):
    """Responses of `run` still missing a verdict its metrics need (not waived).

    While the run is active only those a finished call left so (`failed_call`):
    the others are still being asked, not waiting for a manager."""
    if run.binary:
        responses = run.responses.filter(waived_at__isnull=True).exclude(scored(run))
    else:
        matrix = load_scores([run])
        item_ids = matrix.item_ids[matrix.pending()[0]].tolist()
        responses = run.responses.filter(item_id__in=item_ids)
    if run.is_active:
        responses = responses.filter(failed_call(run))
    return responses.select_related("item").order_by("item__external_id", "trial")


@transaction.atomic
def do_waive_pending(run: EvaluationRun, response_ids, *, user, note: str) -> int:
    """Waive pending items: they leave every metric and are reported as waived.

    Only pending responses can be waived, and only with a note saying why.
    """
    note = note.strip()
    if not note:
        raise EvaluationActionError(_("Say why the items are waived."))
    pending = set(pending_responses(run).values_list("pk", flat=True))
    if not all(str(pk).isdigit() for pk in response_ids):
        raise EvaluationActionError(_("Only pending items can be waived."))
    wanted = {int(pk) for pk in response_ids}
    if not wanted:
        raise EvaluationActionError(_("Choose the pending items to waive."))
    if not wanted <= pending:
        raise EvaluationActionError(_("Only pending items can be waived."))
    waived = Response.objects.filter(pk__in=wanted).update(
        waived_at=timezone.now(), waived_by=user, waive_note=note[:500]
    )
    scores_changed(run)
    refresh_counts(run)
    _complete_if_resolved(run)
    warm_leaderboard(run.benchmark_id, run.language)
    return waived


@transaction.atomic
def do_retry_pending(run: EvaluationRun, *, enqueue: bool = True) -> int:
    """Ask again for every pending item's missing answer or verdict.

    Only pending items are asked; the retry records its calls under a fresh gateway
    scope, so verdicts that stayed unparseable are asked again, not served from the
    record. Returns the number of pending items.
    """
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.status == EvaluationRun.Status.CANCELLED:
        raise EvaluationActionError(_("A cancelled run cannot be retried."))
    if run.origin != EvaluationRun.Origin.PIPELINE:
        raise EvaluationActionError(
            _(
                "Only runs made in Assay can be retried; waive an imported run's "
                "pending items or import it again."
            )
        )
    count = pending_responses(run).count()
    if not count:
        raise EvaluationActionError(_("No item of this run is pending."))
    run.retry_round += 1
    run.save(update_fields=["retry_round"])
    lifecycle.mark_running(run)
    if enqueue:
        _enqueue(run)
    return count


def do_resume_evaluation(run: EvaluationRun) -> int:
    """Resume, as every run page says it: ask again for the pending items."""
    try:
        return do_retry_pending(run)
    except EvaluationActionError as error:
        raise ValidationError(str(error)) from error


def do_cancel_evaluation(run: EvaluationRun) -> EvaluationRun:
    """Stop a run: queued chunks do nothing and running ones stop within a second;
    what it already recorded is kept (Retry continues from there)."""
    return lifecycle.cancel(run)


def _complete_if_resolved(run: EvaluationRun) -> None:
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.status not in {EvaluationRun.Status.RUNNING, EvaluationRun.Status.ATTENTION}:
        return
    if run.binary:
        resolved = not pending_responses(run).exists()
    else:
        resolved = not run.responses.filter(
            status=Response.Status.PENDING
        ).exists() and not (load_scores([run]).pending().any())
    if resolved:
        # refresh_counts wrote the counts with an UPDATE: read them for the event.
        run.refresh_from_db(fields=["total_items", "scored_count", "failed_count"])
        lifecycle.end(EVALUATION, run, EvaluationRun.Status.COMPLETE)


@dataclass(frozen=True)
class SubsetDerivation:
    """What a subset rule keeps of a benchmark's items, over a set of runs."""

    rule: str
    description: str
    runs: list
    solved_at: int
    item_ids: list[int]
    scored_items: int
    histogram: list[int]  # items solved by k runs, k = 0..len(runs)

    @property
    def derived_from(self) -> dict:
        return {
            "runs": [{"id": run.pk, "label": str(run)} for run in self.runs],
            "solved_at": self.solved_at,
            "scored_items": self.scored_items,
            "solved_by": self.histogram,
        }


def default_solved_at(benchmark) -> int:
    """Solved means correct on a binary benchmark, a perfect 3 on the 0–3
    rubric."""
    return 1 if benchmark.scoring_scale == Benchmark.ScoringScale.BINARY else 3


def check_derive_subset(
    benchmark, *, rule: str, runs: list[EvaluationRun], solved_at: int
) -> SubsetDerivation:
    """Apply `rule` (judging.reporting.subsets) to the final scores of `runs`; an
    item is solved when its final score reaches `solved_at`."""
    if rule not in subsets.RULES:
        raise EvaluationActionError(
            _("Choose a rule: %(value)s.") % {"value": ", ".join(subsets.RULES)}
        )
    if len(runs) < 2:
        raise EvaluationActionError(
            _(
                "Choose at least two runs: solved by no model / every model needs "
                "a panel."
            )
        )
    if not 1 <= solved_at <= 3:
        raise EvaluationActionError(
            _("An item is solved at a final score of 1, 2 or 3.")
        )
    if any(run.binary for run in runs):
        if not all(run.binary for run in runs):
            raise EvaluationActionError(
                _("Choose runs graded the same way: all binary or all 0–3.")
            )
        # Solved: right in at least one trial (a flagged answer is not right).
        matrix = load_binary(runs)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            final = np.nanmax(matrix.tested_score(), axis=2)
    else:
        matrix = load_scores(runs)
        final = matrix.final()
    solved, scored = subsets.solved_counts(final, solved_at)
    keep = subsets.subset_mask(solved, scored, rule)
    return SubsetDerivation(
        rule=rule,
        description=subsets.RULES[rule],
        runs=runs,
        solved_at=solved_at,
        item_ids=[int(pk) for pk in matrix.item_ids[keep]],
        scored_items=int((scored > 0).sum()),
        histogram=subsets.solved_histogram(solved, scored, len(runs)),
    )


@transaction.atomic
def do_derive_subset(
    benchmark, *, name: str, rule: str, runs, solved_at: int, user
) -> ItemSubset:
    """Derive and save a named subset (benchmark.actions.do_save_item_subset)."""
    derivation = check_derive_subset(
        benchmark, rule=rule, runs=runs, solved_at=solved_at
    )
    try:
        return do_save_item_subset(
            benchmark,
            name=name,
            rule=rule,
            description=(
                f"{derivation.description}, solved = final score ≥ {solved_at}, "
                f"over {len(runs)} runs"
            ),
            item_ids=derivation.item_ids,
            derived_from=derivation.derived_from,
            user=user,
        )
    except ValidationError as error:
        raise EvaluationActionError(" ".join(error.messages)) from None


def panel_difficulty(benchmark, runs: list[EvaluationRun]) -> dict[int, str]:
    """Item id -> easy/medium/hard from the panel's mean raw scores."""
    if not runs:
        raise EvaluationActionError(_("Choose at least one run for the panel."))
    if any(run.benchmark_id != benchmark.pk for run in runs):
        raise EvaluationActionError(_("Every panel run must belong to this benchmark."))
    matrix = load_scores(runs)
    keys = dict(
        Item.objects.filter(pk__in=matrix.item_ids.tolist()).values_list(
            "pk", "external_id"
        )
    )
    terciles, _means = scoring.difficulty_terciles(
        matrix.raw_scores(), [keys[int(pk)] for pk in matrix.item_ids]
    )
    return {
        int(pk): scoring.TERCILE_NAMES[code]
        for pk, code in zip(matrix.item_ids, terciles, strict=True)
        if code >= 0
    }


def panel_provenance(runs: list[EvaluationRun]) -> str:
    ids = ",".join(str(pk) for pk in sorted(run.pk for run in runs))
    return f"panel terciles of mean raw score, runs {ids}"[:200]


def do_write_panel_difficulty(benchmark, runs: list[EvaluationRun], *, user) -> int:
    """Write panel-derived terciles to the items, recording the panel as provenance."""
    difficulties = panel_difficulty(benchmark, runs)
    return do_set_item_difficulties(
        benchmark, difficulties, provenance=panel_provenance(runs), user=user
    )


ITEM_FILTER_KEYS = {
    "external_ids",
    "difficulty",
    "labels",
    "limit",
    "include_unapproved",
}
# What each stage's prompt is given (judging.evaluation.pipeline); a template may use
# only these, and must use the ones a verdict cannot do without. The rubric judge is
# never shown the source text (the paper's protocol); the SV judge may be.
STAGE_PLACEHOLDERS = {
    # Options and reply line of the item's format (llm.answer_prompts); without
    # {{options}} an MC item must list its options itself (check_options_shown).
    PromptTemplate.Purpose.ANSWERING: (
        {"question"},
        {"question", "options", "answer_format"},
    ),
    PromptTemplate.Purpose.RUBRIC_JUDGING: (
        {"reference_answer", "response"},
        {"question", "reference_answer", "response"},
    ),
    PromptTemplate.Purpose.SAFETY_CHECK: (
        {"response"},
        {"question", "reference_answer", "response", "knowledge_text"},
    ),
    # LPFQA: the key-point judge is never shown the question.
    PromptTemplate.Purpose.KEYPOINT_JUDGING: (
        {"reference_answer", "key_points", "response"},
        {"reference_answer", "key_points", "response"},
    ),
}
MAX_TRIALS = 10


def evaluation_item_filter(
    *,
    external_ids: list[str],
    difficulty: str,
    label_ids: list[int],
    limit: int | None,
    include_unapproved: bool,
) -> dict:
    """The item filter an evaluation run stores (read by `evaluation_items`), built
    the same way by the start form and the REST API."""
    return {
        "external_ids": list(external_ids),
        "difficulty": difficulty,
        "labels": list(label_ids),
        "limit": limit,
        "include_unapproved": include_unapproved,
    }


def evaluation_items(benchmark, language: str, item_filter: dict):
    """(item id, rendering id) of the active items with a current, approved
    `language` rendering that match `item_filter`: external_ids (list), difficulty,
    labels (label ids; an item needs one of the chosen labels in each dimension
    chosen from), limit (the first N by external id), include_unapproved (also
    renderings pending or flagged in review; a rejected one never). A benchmark on
    the 0–3 rubric asks its open items only; a binary one every format."""
    statuses = [Rendering.ReviewStatus.APPROVED]
    if item_filter.get("include_unapproved"):
        statuses += [Rendering.ReviewStatus.PENDING, Rendering.ReviewStatus.FLAGGED]
    items = Item.objects.filter(
        benchmark=benchmark,
        status=Item.Status.ACTIVE,
        renderings__language=language,
        renderings__is_current=True,
        renderings__review_status__in=statuses,
    )
    if benchmark.scoring_scale != Benchmark.ScoringScale.BINARY:
        items = items.filter(format=Item.Format.OPEN)
    items = narrowed(items, item_filter)
    by_dimension: dict[int, list[int]] = {}
    for dimension_id, label_id in Label.objects.filter(
        pk__in=item_filter.get("labels") or [], dimension__benchmark=benchmark
    ).values_list("dimension_id", "pk"):
        by_dimension.setdefault(dimension_id, []).append(label_id)
    for label_ids in by_dimension.values():
        items = items.filter(
            Exists(
                FinalLabel.objects.filter(item=OuterRef("pk"), label_id__in=label_ids)
            )
        )
    return list(first_n(items.values_list("pk", "renderings__pk"), item_filter))


def _check_parts_present(items, language: str) -> None:
    """An item asked in `language` must have that language's options (multiple
    choice) or key points (short answer): a translation that lacks them would be
    asked, or judged, without them."""
    lacking = (
        Rendering.objects.filter(pk__in=[rendering for _, rendering in items])
        .filter(
            Q(item__format=Item.Format.MULTIPLE_CHOICE, options=[])
            | Q(item__format=Item.Format.SHORT_ANSWER, key_points=[])
        )
        .values_list("item__format", flat=True)
    )
    counts = Counter(lacking)
    if counts:
        parts = [
            f"{n} {noun}{'s' if n != 1 else ''} without {what}"
            for n, noun, what in (
                (
                    counts[Item.Format.MULTIPLE_CHOICE],
                    "multiple-choice item",
                    "options",
                ),
                (counts[Item.Format.SHORT_ANSWER], "short-answer item", "key points"),
            )
            if n
        ]
        raise EvaluationActionError(
            _(
                "In %(language)s, the selection has %(value)s. Translate them "
                "first (a translation run carries options and key points), or "
                "leave them out of this run."
            )
            % {"language": language, "value": " and ".join(parts)}
        )


def _check_template(template: PromptTemplate, purpose: str) -> None:
    needed, allowed = STAGE_PLACEHOLDERS[purpose]
    try:
        check_template(template, purpose, needed=needed, provided=allowed)
    except ValidationError as error:
        raise EvaluationActionError(error.messages[0]) from error


def _judge_set_templates(name: str) -> dict:
    if name not in JUDGE_SETS:
        raise EvaluationActionError(
            _("No judge set %(name)s (there are: %(value)s).")
            % {"name": repr(name), "value": ", ".join(sorted(JUDGE_SETS))}
        )
    return JUDGE_SETS[name].resolve()


def check_start_evaluation(
    benchmark,
    *,
    tested,
    judge,
    sv_judge,
    language: str,
    thinking: bool,
    answer_template,
    rubric_template,
    sv_template,
    item_filter: dict,
    keypoint_template=None,
    trials: int = 1,
    answer_templates: dict | None = None,
) -> list:
    """Validate a new run; returns its (item id, rendering id) pairs.

    `answer_templates` ({answer kind: template}) asks the items of those kinds
    with their own prompt, the others with `answer_template`.

    On a binary benchmark no SV judge is asked and the judge is the key-point
    judge, needed only when some item is not multiple choice or true/false."""
    binary = benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
    if not 1 <= trials <= MAX_TRIALS:
        raise EvaluationActionError(
            _("Trials: a whole number from 1 to %(MAX_TRIALS)s.")
            % {"MAX_TRIALS": MAX_TRIALS}
        )
    if trials > 1 and not binary:
        raise EvaluationActionError(
            _(
                "Several trials per item are for benchmarks on the binary scale; this "
                "one is graded 0–3 once per item."
            )
        )
    if language not in benchmark.languages:
        raise EvaluationActionError(
            _(
                "Language %(language)s is not one of this benchmark's languages "
                "(%(value)s)."
            )
            % {"language": repr(language), "value": ", ".join(benchmark.languages)}
        )
    asked = [tested, judge] if binary else [tested, judge, sv_judge]
    if tested is None or (not binary and (judge is None or sv_judge is None)):
        raise EvaluationActionError(
            _("Choose the tested model.")
            if binary
            else _(
                "Choose the tested model, the rubric judge and the safety-violation "
                "judge."
            )
        )
    inactive = [e.name for e in asked if e is not None and not e.is_active]
    if inactive:
        raise EvaluationActionError(
            _("Inactive endpoints: %(value)s.") % {"value": ", ".join(inactive)}
        )
    try:
        thinking_request(tested, thinking)
    except ThinkingModeUnavailable as error:
        raise EvaluationActionError(str(error)) from None
    for template in {answer_template, *(answer_templates or {}).values()}:
        _check_template(template, PromptTemplate.Purpose.ANSWERING)
    if binary:
        _check_template(keypoint_template, PromptTemplate.Purpose.KEYPOINT_JUDGING)
    else:
        _check_template(rubric_template, PromptTemplate.Purpose.RUBRIC_JUDGING)
        _check_template(sv_template, PromptTemplate.Purpose.SAFETY_CHECK)
    unexpected = set(item_filter) - ITEM_FILTER_KEYS
    if unexpected:
        raise EvaluationActionError(
            _("Unknown item filter: %(value)s.") % {"value": ", ".join(unexpected)}
        )
    wanted = item_filter.get("external_ids") or []
    if wanted:
        known = set(
            Item.objects.filter(
                benchmark=benchmark, external_id__in=wanted
            ).values_list("external_id", flat=True)
        )
        unknown = [key for key in wanted if key not in known]
        if unknown:
            shown = ", ".join(unknown[:10]) + (" …" if len(unknown) > 10 else "")
            raise EvaluationActionError(
                _("No such items in %(benchmark)s: %(shown)s.")
                % {"benchmark": benchmark, "shown": shown}
            )
    items = evaluation_items(benchmark, language, item_filter)
    if not items:
        raise EvaluationActionError(
            f"No active item matching the filter has a current {language} "
            "rendering to ask"
            + ("." if item_filter.get("include_unapproved") else " that is approved.")
        )
    _check_parts_present(items, language)
    try:
        check_options_shown(items, answer_template, answer_templates or {})
    except OptionsNotShown as error:
        raise EvaluationActionError(str(error)) from None
    if binary and judge is None:
        judged = (
            Item.objects.filter(pk__in=[item_id for item_id, _ in items])
            .exclude(format__in=CHOICE_FORMATS)
            .count()
        )
        if judged:
            raise EvaluationActionError(
                _(
                    "%(judged)s of the items are short-answer or open items, "
                    "graded by the key-point judge: choose one (multiple-choice "
                    "and true/false answers need none)."
                )
                % {"judged": judged}
            )
    return items


@transaction.atomic
def do_start_evaluation(
    benchmark,
    *,
    tested,
    judge,
    sv_judge,
    language: str,
    thinking: bool = False,
    answer_template=None,
    rubric_template=None,
    sv_template=None,
    item_filter: dict | None = None,
    limit: int | None = None,
    model_category: str = "",
    user=None,
    enqueue: bool = True,
    judge_set: str = "",
    keypoint_template=None,
    trials: int = 1,
) -> EvaluationRun:
    """Create a pipeline run with one pending response per item and trial and
    queue it on commit. `limit` is shorthand for item_filter={"limit": limit}.
    `judge_set` (a name in JUDGE_SETS) instead of `rubric_template` judges with
    the set's template for `language`.

    On a binary benchmark `judge` is the key-point judge (None when every item is
    multiple choice or true/false) and there is no `sv_judge`."""
    item_filter = {key: value for key, value in (item_filter or {}).items() if value}
    if limit:
        item_filter["limit"] = limit
    binary = benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
    answer_template, answer_templates = choose_answer_prompts(
        benchmark, language, answer_template
    )
    set_versions = {}
    if binary:
        if judge_set:
            raise EvaluationActionError(
                _(
                    "A judge set scores on the 0–3 rubric; a binary benchmark is "
                    "judged by key points."
                )
            )
        if sv_judge is not None:
            raise EvaluationActionError(
                _("A binary benchmark has no safety-violation judge: leave it out.")
            )
        rubric_template = sv_template = None
        keypoint_template = keypoint_template or default_template("keypoint_judging")
    else:
        keypoint_template = None
        if judge_set:
            if rubric_template is not None:
                raise EvaluationActionError(
                    _("Choose a rubric prompt or a judge set, not both.")
                )
            set_templates = _judge_set_templates(judge_set)
            rubric_template = judge_for(set_templates, language)
            set_versions = {
                code: prompt_version(template)
                for code, template in set_templates.items()
            }
        rubric_template = rubric_template or default_template("rubric_judging")
        sv_template = sv_template or default_template("safety_check")
    items = check_start_evaluation(
        benchmark,
        tested=tested,
        judge=judge,
        sv_judge=sv_judge,
        language=language,
        thinking=thinking,
        answer_template=answer_template,
        rubric_template=rubric_template,
        sv_template=sv_template,
        item_filter=item_filter,
        keypoint_template=keypoint_template,
        trials=trials,
        answer_templates=answer_templates,
    )
    model_category = model_category.strip()
    if len(model_category) > 100:
        raise EvaluationActionError(_("A category has at most 100 characters."))
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=tested.name,
        model_category=model_category,
        language=language,
        thinking=thinking,
        origin=EvaluationRun.Origin.PIPELINE,
        status=EvaluationRun.Status.PENDING,
        tested_endpoint=tested,
        answer_template=answer_template,
        answer_templates={kind: t.pk for kind, t in answer_templates.items()},
        judge_endpoint=judge,
        rubric_template=rubric_template,
        keypoint_template=keypoint_template,
        sv_endpoint=sv_judge,
        sv_template=sv_template,
        binary=binary,
        trials=trials,
        judge_name=judge.name if judge else "",
        judge_prompt_version=prompt_version(keypoint_template or rubric_template),
        judge_set=judge_set,
        judge_set_versions=set_versions,
        sv_judge_name=sv_judge.name if sv_judge else "",
        sv_prompt_version=prompt_version(sv_template),
        item_filter=item_filter,
        total_items=len(items) * trials,
        created_by=user,
    )
    Response.objects.bulk_create(
        [
            Response(run=run, item_id=item_id, rendering_id=rendering_id, trial=trial)
            for item_id, rendering_id in items
            for trial in range(trials)
        ],
        batch_size=2000,
    )
    if enqueue:
        _enqueue(run)
    return run


@transaction.atomic
def do_rejudge(
    run: EvaluationRun,
    *,
    judge=None,
    rubric_template=None,
    sv_judge=None,
    sv_template=None,
    enqueue: bool = True,
    judge_set: str = "",
) -> EvaluationRun:
    """Score the run's stored answers with another judge or prompt version.

    The tested model is not asked again; earlier verdicts stay (several judges can
    score the same responses) and the run's metrics switch to the new judges. A
    `judge_set` is resolved again (its newest versions); a `rubric_template`
    replaces the run's judge set.
    """
    if run.status == EvaluationRun.Status.CANCELLED:
        raise EvaluationActionError(_("A cancelled run cannot be re-judged."))
    if run.binary and (rubric_template or sv_judge or sv_template or judge_set):
        raise EvaluationActionError(
            _("A binary run has no rubric or SV judge; give another key-point judge.")
        )
    if judge_set and rubric_template is not None:
        raise EvaluationActionError(
            _("Choose a rubric prompt or a judge set, not both.")
        )
    if judge_set:
        set_templates = _judge_set_templates(judge_set)
        rubric_template = judge_for(set_templates, run.language)
        _check_template(rubric_template, PromptTemplate.Purpose.RUBRIC_JUDGING)
        run.judge_set = judge_set
        run.judge_set_versions = {
            code: prompt_version(template) for code, template in set_templates.items()
        }
    elif rubric_template is not None:
        run.judge_set, run.judge_set_versions = "", {}
    if judge is not None or rubric_template is not None:
        run.judge_endpoint = judge or run.judge_endpoint
        run.rubric_template = rubric_template or run.rubric_template
        run.judge_name = run.judge_endpoint.name
        run.judge_prompt_version = prompt_version(
            run.keypoint_template if run.binary else run.rubric_template
        )
    if sv_judge is not None or sv_template is not None:
        run.sv_endpoint = sv_judge or run.sv_endpoint
        run.sv_template = sv_template or run.sv_template
        run.sv_judge_name = run.sv_endpoint.name
        run.sv_prompt_version = prompt_version(run.sv_template)
    run.save(
        update_fields=[
            "judge_endpoint",
            "rubric_template",
            "judge_name",
            "judge_prompt_version",
            "judge_set",
            "judge_set_versions",
            "sv_endpoint",
            "sv_template",
            "sv_judge_name",
            "sv_prompt_version",
        ]
    )
    lifecycle.mark_running(run)
    scores_changed(run)
    if enqueue:
        _enqueue(run)
    return run


def _enqueue(run: EvaluationRun) -> None:
    """Start the run's chunks; a run whose chunks are still open (its worker was
    killed) has them queued again instead of waiting for the stalled-run sweep."""
    if run.chunks.exists():
        lifecycle.dispatch(EVALUATION, run)
    else:
        queue_task(EVALUATION.start_task, run.pk)
