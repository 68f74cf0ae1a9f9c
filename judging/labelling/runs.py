"""Labelling runs, worker side: which items a run covers, the chunks it is cut into,
the prompt variables, and recording each annotator's labels as calls return.

Flow (see judging/llm/GATEWAY.md): `actions.do_start_labelling` creates the run and
queues `tasks.start_labelling_run` → `start_run` counts the calls and queues its
chunk tasks (judging.runs.lifecycle) → each `label_chunk` sends the chunk's missing
(item, annotator) calls through the gateway; `save_outcomes` writes AnnotatorLabel
rows and the run's counters in the transaction that records the calls → the chunk
that finishes the last call marks the run complete and queues the consensus.

Every step is idempotent: a chunk skips pairs that already have a result, the
gateway serves recorded calls, and rows are unique per run × item × annotator ×
dimension. A killed worker's chunks are queued again by the stalled-run sweep
(judging.runs.lifecycle.resume_stalled).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import partial

from django.db.models import Count, F
from django.utils import timezone

from assay.celery import enqueue
from benchmark.models import LabelDimension, Rendering
from judging.labelling.models import AnnotatorLabel, LabellingRun
from judging.llm.gateway import GatewayStats, LLMRequest, run_requests
from judging.llm.models import LLMCall
from judging.llm.outputs import labelling_validator
from judging.runs import lifecycle
from judging.runs.items import filtered_items
from judging.runs.progress import run_timing
from judging.runs.usage import usage_of

CHUNK_ITEMS = 200

CALL_TO_LABEL_STATUS = {
    LLMCall.Status.OK: AnnotatorLabel.Status.LABELLED,
    LLMCall.Status.UNPARSEABLE: AnnotatorLabel.Status.UNPARSEABLE,
    LLMCall.Status.FAILED: AnnotatorLabel.Status.FAILED,
}
COUNTER_FOR_STATUS = {
    AnnotatorLabel.Status.LABELLED: "done_calls",
    AnnotatorLabel.Status.UNPARSEABLE: "unparseable_calls",
    AnnotatorLabel.Status.FAILED: "failed_calls",
}


def select_items(run: LabellingRun):
    """The run's items that match its `item_filter` (judging.runs.items)."""
    return filtered_items(run.benchmark_id, run.item_filter or {})


def run_dimensions(run: LabellingRun) -> list[LabelDimension]:
    return list(
        LabelDimension.objects.filter(benchmark_id=run.benchmark_id)
        .prefetch_related("labels")
        .order_by("position", "code")
    )


def taxonomy_text(dimensions: list[LabelDimension]) -> str:
    blocks = []
    for dimension in dimensions:
        lines = [f'Dimension "{dimension.code}" ({dimension.name}) — label codes:']
        for label in dimension.labels.all():
            definition = f": {label.definition}" if label.definition else ""
            lines.append(f"- {label.code} ({label.name}){definition}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def shared_variables(dimensions: list[LabelDimension]) -> dict[str, str]:
    keys = [dimension.code for dimension in dimensions] + ["rationale"]
    example = {
        dimension.code: dimension.labels.all()[0].code for dimension in dimensions
    }
    example["rationale"] = "…"
    return {
        "taxonomy": taxonomy_text(dimensions),
        "output_keys": ", ".join(f'"{key}"' for key in keys),
        "output_example": json.dumps(example, ensure_ascii=False),
    }


def item_texts(item_ids, source_language: str) -> dict[int, Rendering]:
    """The current rendering per item, preferring the benchmark's source language."""
    chosen: dict[int, Rendering] = {}
    for rendering in Rendering.objects.filter(
        item_id__in=item_ids, is_current=True
    ).only("item_id", "language", "question", "answer"):
        held = chosen.get(rendering.item_id)
        if held is None or (
            rendering.language == source_language and held.language != source_language
        ):
            chosen[rendering.item_id] = rendering
    return chosen


def run_scope(run: LabellingRun) -> str | None:
    """A refreshing run records its calls in its own cache scope."""
    return f"labelling-run-{run.pk}" if run.refresh else None


def start_run(run_id: int) -> int:
    """Count the run's calls, mark it running and queue its chunks."""
    return lifecycle.start(LABELLING, run_id)


def _count_calls(run: LabellingRun) -> None:
    run.total_calls = select_items(run).count() * run.annotators.count()
    run.save(update_fields=["total_calls"])


def pending_item_ids(run: LabellingRun) -> list[int]:
    """Items some annotator has no result for yet (failed calls count as none)."""
    dimensions = run_dimensions(run)
    if not dimensions:
        return []
    annotators = run.annotators.count()
    complete = (
        AnnotatorLabel.objects.filter(run=run, dimension=dimensions[0])
        .exclude(status=AnnotatorLabel.Status.FAILED)
        .values("item_id")
        .annotate(answered=Count("id"))
        .filter(answered__gte=annotators)
        .values_list("item_id", flat=True)
    )
    done = set(complete)
    return [
        pk for pk in select_items(run).values_list("pk", flat=True) if pk not in done
    ]


def open_chunks(run: LabellingRun) -> list[tuple[int, list[int]]]:
    """`label_chunk` arguments for the run's pending items, CHUNK_ITEMS at a time."""
    item_ids = pending_item_ids(run)
    return [
        (run.pk, item_ids[start : start + CHUNK_ITEMS])
        for start in range(0, len(item_ids), CHUNK_ITEMS)
    ]


def label_chunk(run_id: int, item_ids: list[int]) -> GatewayStats | None:
    """Label the chunk's items with every annotator that has no result yet."""
    run = (
        LabellingRun.objects.select_related("benchmark", "template")
        .filter(pk=run_id)
        .first()
    )
    if run is None or run.status != LabellingRun.Status.RUNNING:
        return None
    annotators = list(run.annotators.all())
    dimensions = run_dimensions(run)
    answered = set(
        AnnotatorLabel.objects.filter(
            run=run, item_id__in=item_ids, dimension=dimensions[0]
        )
        .exclude(status=AnnotatorLabel.Status.FAILED)
        .values_list("item_id", "annotator_id")
    )
    texts = item_texts(item_ids, run.benchmark.source_language)
    shared = shared_variables(dimensions)
    validate = labelling_validator(
        {d.code: [label.code for label in d.labels.all()] for d in dimensions}
    )
    requests = [
        LLMRequest(
            key=(item_id, annotator.pk),
            endpoint=annotator,
            template=run.template,
            variables={
                **shared,
                "question": texts[item_id].question,
                "answer": texts[item_id].answer,
            },
            validate=validate,
        )
        for item_id in item_ids
        if item_id in texts
        for annotator in annotators
        if (item_id, annotator.pk) not in answered
    ]
    label_ids = {
        dimension.code: {label.code: label.pk for label in dimension.labels.all()}
        for dimension in dimensions
    }
    stats = run_requests(
        requests,
        scope=run_scope(run),
        on_results=partial(save_outcomes, run.pk, dimensions, label_ids),
        should_stop=lambda: not lifecycle.keep_alive(LabellingRun, run.pk),
    )
    lifecycle.finish(LABELLING, run.pk)
    return stats


def save_outcomes(run_id, dimensions, label_ids, outcomes) -> None:
    """Write the annotators' labels for a batch of calls and move the counters.

    Runs inside the gateway's transaction. The run row is locked so that counters
    stay exact even if two workers ever record the same pair.
    """
    LabellingRun.objects.select_for_update().only("pk").get(pk=run_id)
    item_ids = {outcome.key[0] for outcome in outcomes}
    previous = {
        (item_id, annotator_id): status
        for item_id, annotator_id, status in AnnotatorLabel.objects.filter(
            run_id=run_id, dimension=dimensions[0], item_id__in=item_ids
        ).values_list("item_id", "annotator_id", "status")
    }
    delta: Counter[str] = Counter()
    rows = []
    for outcome in outcomes:
        call = outcome.call
        status = CALL_TO_LABEL_STATUS[call.status]
        before = previous.get(outcome.key)
        if before is not None:
            delta[COUNTER_FOR_STATUS[before]] -= 1
        elif outcome.cached:
            delta["cached_calls"] += 1
        delta[COUNTER_FOR_STATUS[status]] += 1
        item_id, annotator_id = outcome.key
        parsed = call.parsed_output if status == AnnotatorLabel.Status.LABELLED else {}
        for dimension in dimensions:
            code = parsed.get(dimension.code)
            rows.append(
                AnnotatorLabel(
                    run_id=run_id,
                    item_id=item_id,
                    annotator_id=annotator_id,
                    dimension=dimension,
                    label_id=label_ids[dimension.code].get(code) if code else None,
                    rationale=parsed.get("rationale", ""),
                    status=status,
                    call=call,
                )
            )
    AnnotatorLabel.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["run", "item", "annotator", "dimension"],
        update_fields=["label", "rationale", "status", "call"],
    )
    LabellingRun.objects.filter(pk=run_id).update(
        **{name: F(name) + change for name, change in delta.items() if change},
        **usage_of(outcomes).updates(),
        heartbeat_at=timezone.now(),
    )


def end_state(run: LabellingRun) -> str | None:
    """Ended once every call has a result — Complete, or Needs attention while
    calls failed (*Resume* makes them again)."""
    if run.pending_calls:
        return None
    if run.failed_calls:
        return LabellingRun.Status.ATTENTION
    return LabellingRun.Status.COMPLETE


def queue_consensus(run: LabellingRun) -> None:
    """Consensus over the labels an ended run has."""
    enqueue("judging.tasks.apply_consensus", run.pk)


def run_progress(run: LabellingRun, now=None) -> dict:
    """The run's counters plus rate and ETA, as shown on the run page and printed by
    `run_status` / `start_labelling --wait`."""
    made = run.finished_calls - run.cached_calls
    return {
        "run": run.pk,
        "status": run.status,
        "total": run.total_calls,
        "done": run.done_calls,
        "failed": run.failed_calls,
        "unparseable": run.unparseable_calls,
        "pending": run.pending_calls,
        "cached": run.cached_calls,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "cost": str(run.cost),
        **run_timing(
            run,
            remaining=run.pending_calls,
            finished=made,
            calls_made=made,
            now=now,
        ),
    }


def labelled_item_ids(run: LabellingRun) -> list[int]:
    """The items this run asked its annotators about (a failed call counts: the
    item is in the run, with no label from that annotator)."""
    return list(
        AnnotatorLabel.objects.filter(run=run)
        .order_by("item_id")
        .values_list("item_id", flat=True)
        .distinct()
    )


def label_matrices(run: LabellingRun):
    """(annotator names, one reports.DimensionLabels per dimension) for a run:
    units × annotators label codes, None where an annotator has no label.

    The units are the items this run asked about, not the items its filter matches
    today: items imported after the run would otherwise join its report as
    "no majority" and shift figures the run had already reported."""
    import numpy as np

    from judging.labelling.report import DimensionLabels

    annotators = list(run.annotators.order_by("name"))
    column = {annotator.pk: index for index, annotator in enumerate(annotators)}
    item_ids = labelled_item_ids(run)
    row = {pk: index for index, pk in enumerate(item_ids)}
    dimensions = []
    for dimension in run_dimensions(run):
        matrix = np.full((len(item_ids), len(annotators)), None, dtype=object)
        for item_id, annotator_id, code in AnnotatorLabel.objects.filter(
            run=run,
            dimension=dimension,
            status=AnnotatorLabel.Status.LABELLED,
            item_id__in=item_ids,
        ).values_list("item_id", "annotator_id", "label__code"):
            matrix[row[item_id], column[annotator_id]] = code
        dimensions.append(
            DimensionLabels(
                code=dimension.code,
                name=dimension.name,
                label_codes=[label.code for label in dimension.labels.all()],
                matrix=matrix,
            )
        )
    return [annotator.name for annotator in annotators], dimensions


LABELLING = lifecycle.RunKind(
    name="labelling",
    model=LabellingRun,
    start_task="judging.tasks.start_labelling_run",
    chunk_task="judging.tasks.label_chunk",
    prepare=_count_calls,
    open_chunks=open_chunks,
    end_state=end_state,
    on_end=queue_consensus,
    settled=lambda run: (
        not run.is_active
        and (run.consensus_at is not None or run.status not in run.ENDED_WITH_RESULTS)
    ),
    page="judging:labelling_run",
    counts=lambda run: {
        "total_calls": run.total_calls,
        "done_calls": run.done_calls,
        "failed_calls": run.failed_calls,
        "unparseable_calls": run.unparseable_calls,
    },
)
