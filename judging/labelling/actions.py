"""State changes for labelling runs and consensus.

`check_…` functions validate and raise ValidationError with a message for the user;
`do_…` functions write under `transaction.atomic` and queue Celery work on commit.
"""

from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from assay.celery import enqueue
from benchmark.actions import do_set_final_labels
from benchmark.models import Benchmark, FinalLabel
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.labelling.runs import LABELLING, run_dimensions, select_items
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import placeholders
from judging.reporting import consensus as consensus_math
from judging.runs import lifecycle

LABELLING_PLACEHOLDERS = {"taxonomy", "question"}


def check_start_labelling(
    benchmark: Benchmark, annotators: list[Endpoint], template: PromptTemplate
) -> None:
    if len(annotators) < 2:
        raise ValidationError("A labelling run needs at least two annotator endpoints.")
    if len({a.pk for a in annotators}) != len(annotators):
        raise ValidationError("Each annotator endpoint may appear only once.")
    inactive = [a.name for a in annotators if not a.is_active]
    if inactive:
        raise ValidationError(f"Inactive endpoints: {', '.join(inactive)}.")
    if template.purpose != PromptTemplate.Purpose.LABELLING:
        raise ValidationError(
            f"{template} is a {template.get_purpose_display()} prompt, not labelling."
        )
    missing = LABELLING_PLACEHOLDERS - set(
        placeholders(template.text + template.system_text)
    )
    if missing:
        raise ValidationError(
            f"{template} lacks the placeholders: "
            + ", ".join("{{" + name + "}}" for name in sorted(missing))
        )
    if not benchmark.dimensions.exists():
        raise ValidationError(f"{benchmark} has no label dimensions.")
    if not benchmark.items.exists():
        raise ValidationError(f"{benchmark} has no items to label.")


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
        raise ValidationError(f"{endpoint} already annotates run {run.pk}.")
    if run.is_active:
        raise ValidationError("Wait for the run to end (or cancel it) first.")
    run.annotators.add(endpoint)
    run.total_calls += select_items(run).count()
    run.save(update_fields=["total_calls"])
    lifecycle.resume(LABELLING, run)
    return run


# -- consensus -----------------------------------------------------------------------

PROVENANCE_FOR_OUTCOME = {
    consensus_math.FULL: FinalLabel.Provenance.FULL_CONSENSUS,
    consensus_math.MAJORITY: FinalLabel.Provenance.MAJORITY,
}


@transaction.atomic
def do_apply_consensus(run: LabellingRun) -> dict[str, dict[str, int]]:
    """Compute consensus per item × dimension, store it, and set final labels.

    Full and majority outcomes become the item's final label (never replacing a
    human decision: do_set_final_labels keeps those); `none` rows wait for
    adjudication. A simulated (demo) run stores its consensus but never changes
    final labels. Set-based: a few queries per dimension and batch of items,
    whatever the run's size. Returns outcome counts per dimension code.
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
        kept = do_set_final_labels(decisions) if sets_labels else {}
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
                    final_label_kept_human=human is not None
                    and human.label_id != label.pk,
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
                "final_label_kept_human",
                "computed_at",
            ],
        )
        summary[dimension.code] = consensus_math.outcome_counts(outcome)
    run.consensus_at = timezone.now()
    run.save(update_fields=["consensus_at"])
    return summary
