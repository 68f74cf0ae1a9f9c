"""State changes for labelling runs and consensus.

`check_…` functions validate and raise ValidationError with a message for the user;
`do_…` functions write under `transaction.atomic` and queue Celery work on commit.
"""

from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from assay.celery import enqueue
from benchmark.actions import do_set_final_labels
from benchmark.models import Benchmark, FinalLabel, ItemEvent, Label
from benchmark.notes import Note
from judging.labelling.models import (
    AnnotatorLabel,
    LabelConsensus,
    LabellingRun,
    SuggestionApplication,
)
from judging.labelling.runs import LABELLING, run_dimensions, select_items
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import check_template
from judging.reporting import consensus as consensus_math
from judging.runs import lifecycle

LABELLING_PLACEHOLDERS = {"taxonomy", "question"}
# What judging.labelling.runs fills in (shared_variables and the item's text).
LABELLING_VARIABLES = {
    "taxonomy",
    "output_keys",
    "output_example",
    "question",
    "answer",
}


def check_start_labelling(
    benchmark: Benchmark, annotators: list[Endpoint], template: PromptTemplate
) -> None:
    if len(annotators) < 2:
        raise ValidationError(
            _("A labelling run needs at least two annotator endpoints.")
        )
    if len({a.pk for a in annotators}) != len(annotators):
        raise ValidationError(_("Each annotator endpoint may appear only once."))
    inactive = [a.name for a in annotators if not a.is_active]
    if inactive:
        raise ValidationError(
            _("Inactive endpoints: %(value)s.") % {"value": ", ".join(inactive)}
        )
    check_template(
        template,
        PromptTemplate.Purpose.LABELLING,
        needed=LABELLING_PLACEHOLDERS,
        provided=LABELLING_VARIABLES,
    )
    if not benchmark.dimensions.exists():
        raise ValidationError(
            _("%(benchmark)s has no label dimensions.") % {"benchmark": benchmark}
        )
    if not benchmark.items.exists():
        raise ValidationError(
            _("%(benchmark)s has no items to label.") % {"benchmark": benchmark}
        )


@transaction.atomic
def do_start_labelling(
    benchmark: Benchmark,
    annotators: list[Endpoint],
    template: PromptTemplate,
    *,
    item_filter: dict | None = None,
    refresh: bool = False,
    user=None,
) -> LabellingRun:
    check_start_labelling(benchmark, annotators, template)
    run = LabellingRun.objects.create(
        benchmark=benchmark,
        template=template,
        item_filter=item_filter or {},
        refresh=refresh,
        created_by=user,
    )
    run.annotators.set(annotators)
    enqueue(LABELLING.start_task, run.pk)
    return run


def do_cancel_run(run: LabellingRun) -> LabellingRun:
    """Stop a run: queued chunks do nothing and running ones stop within a second."""
    return lifecycle.cancel(run)


@transaction.atomic
def do_resume_run(run: LabellingRun) -> LabellingRun:
    """Continue a cancelled or finished run: calls without a result and failed calls
    are made again; recorded answers are kept."""
    run = LabellingRun.objects.select_for_update().get(pk=run.pk)
    lifecycle.check_resumable(run)
    lifecycle.resume(LABELLING, run)
    return run


@transaction.atomic
def do_add_annotator(run: LabellingRun, endpoint: Endpoint) -> LabellingRun:
    """Add an annotator to a run; its calls are made and consensus recomputed."""
    run = LabellingRun.objects.select_for_update().get(pk=run.pk)
    if run.annotators.filter(pk=endpoint.pk).exists():
        raise ValidationError(
            _("%(endpoint)s already annotates run %(pk)s.")
            % {"endpoint": endpoint, "pk": run.pk}
        )
    if run.is_active:
        raise ValidationError(_("Wait for the run to end (or cancel it) first."))
    run.annotators.add(endpoint)
    run.total_calls += select_items(run).count()
    run.save(update_fields=["total_calls"])
    lifecycle.resume(LABELLING, run)
    return run


# -- consensus -----------------------------------------------------------------------

# Final labels a model consensus never replaces by itself.
KEPT_PROVENANCES = frozenset(
    {
        FinalLabel.Provenance.IMPORTED,
        FinalLabel.Provenance.ADJUDICATED,
        FinalLabel.Provenance.MANUAL,
    }
)
PROVENANCE_FOR_OUTCOME = {
    consensus_math.FULL: FinalLabel.Provenance.FULL_CONSENSUS,
    consensus_math.MAJORITY: FinalLabel.Provenance.MAJORITY,
}


@transaction.atomic
def do_apply_consensus(run: LabellingRun) -> dict[str, dict[str, int]]:
    """Compute consensus per item × dimension, store it, and set final labels.

    Full and majority outcomes become the item's final label where it has none or
    one from an earlier model consensus. An imported label (the dataset's ground
    truth) or a person's decision is never replaced: where the consensus differs,
    it is kept as a suggestion (`kept_final_label`) for a manager to apply or not
    (do_apply_suggestions). `none` rows wait for adjudication. A simulated (demo)
    run stores its consensus but never changes final labels. Set-based: a few
    queries per dimension and batch of items, whatever the run's size. Returns
    outcome counts per dimension code.
    """
    run = LabellingRun.objects.select_for_update().get(pk=run.pk)
    annotator_ids = sorted(run.annotators.values_list("pk", flat=True))
    item_ids = list(select_items(run).values_list("pk", flat=True))
    column = {pk: index for index, pk in enumerate(annotator_ids)}
    row = {pk: index for index, pk in enumerate(item_ids)}
    sets_labels = run.origin != LabellingRun.Origin.SIMULATED
    summary = {}
    for dimension in run_dimensions(run):
        labels = {label.pk: label for label in dimension.labels.all()}
        matrix = np.full((len(item_ids), len(annotator_ids)), consensus_math.MISSING)
        for item_id, annotator_id, label_id in AnnotatorLabel.objects.filter(
            run=run,
            dimension=dimension,
            status=AnnotatorLabel.Status.LABELLED,
            item_id__in=item_ids,
        ).values_list("item_id", "annotator_id", "label_id"):
            matrix[row[item_id], column[annotator_id]] = label_id
        outcome, adopted, _ = consensus_math.consensus(matrix)
        decisions = [
            (
                item_id,
                labels[int(adopted[index])],
                PROVENANCE_FOR_OUTCOME[int(outcome[index])],
            )
            for index, item_id in enumerate(item_ids)
            if adopted[index] != consensus_math.MISSING
        ]
        kept = (
            do_set_final_labels(decisions, protected=KEPT_PROVENANCES)
            if sets_labels
            else {}
        )
        rows = []
        for index, item_id in enumerate(item_ids):
            votes: dict[str, int] = {}
            for label_id in matrix[index][matrix[index] != consensus_math.MISSING]:
                code = labels[int(label_id)].code
                votes[code] = votes.get(code, 0) + 1
            label = labels.get(int(adopted[index]))
            human = kept.get((item_id, dimension.pk))
            rows.append(
                LabelConsensus(
                    run=run,
                    item_id=item_id,
                    dimension=dimension,
                    outcome=consensus_math.OUTCOME_NAMES[int(outcome[index])],
                    label=label,
                    votes=votes,
                    annotator_count=len(annotator_ids),
                    kept_final_label=human is not None and human.label_id != label.pk,
                )
            )
        LabelConsensus.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["run", "item", "dimension"],
            update_fields=[
                "outcome",
                "label",
                "votes",
                "annotator_count",
                "kept_final_label",
                "computed_at",
            ],
        )
        summary[dimension.code] = consensus_math.outcome_counts(outcome)
    run.consensus_at = timezone.now()
    run.save(update_fields=["consensus_at"])
    return summary


# -- suggestions ---------------------------------------------------------------------


@transaction.atomic
def do_apply_suggestions(
    run: LabellingRun, consensus_ids, user
) -> SuggestionApplication | None:
    """Make the chosen suggestions of `run` (LabelConsensus ids whose consensus
    differs from a kept final label) the items' final labels, recording each
    label's previous state so that `do_undo_suggestions` can restore it. A person's
    decision (adjudicated, manual) is still not replaced. None when nothing
    changed."""
    chosen = list(
        LabelConsensus.objects.select_for_update()
        .filter(run=run, pk__in=list(consensus_ids), kept_final_label=True)
        .exclude(label=None)
        .select_related("label__dimension")
    )
    finals = {
        (final.item_id, final.dimension_id): final
        for final in FinalLabel.objects.filter(
            item_id__in={row.item_id for row in chosen},
            dimension_id__in={row.dimension_id for row in chosen},
        )
    }
    changes = []
    for row in chosen:
        final = finals.get((row.item_id, row.dimension_id))
        if final is None or final.label_id == row.label_id or final.is_human_decision:
            continue
        changes.append(
            {
                "item": row.item_id,
                "dimension": row.dimension_id,
                "label": row.label_id,
                "provenance": PROVENANCE_FOR_OUTCOME[
                    consensus_math.OUTCOME_NAMES.index(row.outcome)
                ],
                "before": {
                    "label": final.label_id,
                    "provenance": final.provenance,
                    "decided_by": final.decided_by_id,
                    "note": final.note,
                },
            }
        )
    if not changes:
        return None
    labels = {row.label_id: row.label for row in chosen}
    do_set_final_labels(
        [(c["item"], labels[c["label"]], c["provenance"]) for c in changes],
        user=user,
        note=f"Suggestion of labelling run {run.pk}, applied by a manager",
        protected=frozenset(),
    )
    LabelConsensus.objects.filter(
        run=run,
        item_id__in={c["item"] for c in changes},
        dimension_id__in={c["dimension"] for c in changes},
    ).update(kept_final_label=False)
    return SuggestionApplication.objects.create(
        run=run, applied_by=user, changes=changes
    )


@transaction.atomic
def do_undo_suggestions(application: SuggestionApplication, user) -> int:
    """Put back every final label an application changed, as it was (label,
    provenance, who decided, note), with a history entry each; a label changed
    again since is left as it is. Returns how many were restored."""
    application = SuggestionApplication.objects.select_for_update().get(
        pk=application.pk
    )
    if application.undone_at is not None:
        raise ValidationError(_("This application was already undone."))
    finals = {
        (final.item_id, final.dimension_id): final
        for final in FinalLabel.objects.select_for_update()
        .select_related("label__dimension")
        .filter(
            item_id__in={c["item"] for c in application.changes},
            dimension_id__in={c["dimension"] for c in application.changes},
        )
    }
    labels = Label.objects.in_bulk({c["before"]["label"] for c in application.changes})
    restored, events = [], []
    for change in application.changes:
        final = finals.get((change["item"], change["dimension"]))
        if final is None or (final.label_id, final.provenance) != (
            change["label"],
            change["provenance"],
        ):
            continue
        before = change["before"]
        label = labels[before["label"]]
        events.append(
            ItemEvent(
                item_id=final.item_id,
                kind="label",
                **ItemEvent.summary_fields(
                    Note(
                        gettext_noop(
                            "%(dimension)s: %(label)s (suggestion of labelling run "
                            "%(run)s undone)"
                        ),
                        dimension=label.dimension.name,
                        label=label.name,
                        run=application.run_id,
                    )
                ),
                before={"label": final.label.code, "provenance": final.provenance},
                after={"label": label.code, "provenance": before["provenance"]},
                user=user,
            )
        )
        final.label = label
        final.provenance = before["provenance"]
        final.decided_by_id = before["decided_by"]
        final.note = before["note"]
        final.decided_at = timezone.now()
        restored.append(final)
    FinalLabel.objects.bulk_update(
        restored, ["label", "provenance", "decided_by", "note", "decided_at"]
    )
    ItemEvent.objects.bulk_create(events)
    for final in restored:
        LabelConsensus.objects.filter(
            run_id=application.run_id,
            item_id=final.item_id,
            dimension_id=final.dimension_id,
        ).update(kept_final_label=True)
    application.undone_by = user
    application.undone_at = timezone.now()
    application.save(update_fields=["undone_by", "undone_at"])
    return len(restored)
