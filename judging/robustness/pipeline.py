"""LLM-written variants as runs on the shared lifecycle (judging.runs.lifecycle).

`actions.do_start_variant_run` creates a VariantRun with its seeds and queues
`tasks.start_variant_run` → `lifecycle.start` counts the seeds without a usable
draft and queues one `variant_chunk` per slice → each chunk asks the endpoint
(prompt template of purpose "variant writing", through the gateway) for the
relation's text of each seed and records a VariantDraft: awaiting review, or
pending with its reason when the call failed or the reply was unusable → the
chunk that decides the last seed ends the run: Complete, or Needs attention
while drafts are pending (Resume asks again for those only).

Idempotent: one draft per seed and relation (a reviewed or awaiting draft is
never asked again) and the gateway serves calls already recorded.
"""

from __future__ import annotations

from functools import partial

from django.db.models import F
from django.utils import timezone

from judging.llm.gateway import LLMRequest, run_requests
from judging.llm.models import LLMCall
from judging.llm.outputs import free_text_validator
from judging.robustness.generation import seeds
from judging.robustness.models import VariantDraft, VariantRun
from judging.robustness.relations import LANGUAGE_NAMES
from judging.runs import lifecycle
from judging.runs.usage import usage_of

CHUNK_SEEDS = 50
Status = VariantDraft.Status


def open_seeds(run: VariantRun) -> list[int]:
    """The run's seeds without a draft, or with a pending one, in order."""
    decided = set(
        VariantDraft.objects.filter(seed_id__in=run.seed_ids, relation=run.relation)
        .exclude(status=Status.PENDING)
        .values_list("seed_id", flat=True)
    )
    return [pk for pk in run.seed_ids if pk not in decided]


def _prepare(run: VariantRun) -> list[tuple[int, list[int]]]:
    units = open_seeds(run)
    run.total_units = len(units)
    run.save(update_fields=["total_units"])
    return _chunks(run, units)


def open_chunks(run: VariantRun) -> list[tuple[int, list[int]]]:
    return _chunks(run, open_seeds(run))


def _chunks(run: VariantRun, units: list[int]) -> list[tuple[int, list[int]]]:
    return [
        (run.pk, units[i : i + CHUNK_SEEDS]) for i in range(0, len(units), CHUNK_SEEDS)
    ]


def run_counts(run: VariantRun) -> dict:
    drafts = VariantDraft.objects.filter(run=run)
    return {
        "seeds": run.total_units,
        "drafts": drafts.count(),
        "pending": drafts.filter(status=Status.PENDING).count(),
        "awaiting": drafts.filter(status=Status.AWAITING).count(),
    }


def end_state(run: VariantRun) -> str | None:
    """Ended once each of its seeds has a draft and every pending one was asked in
    the run's current round: Complete, or Needs attention while some are pending
    (Resume asks them again, afresh)."""
    drafts = VariantDraft.objects.filter(
        seed_id__in=run.seed_ids, relation=run.relation
    )
    pending = drafts.filter(status=Status.PENDING)
    if (
        drafts.count() < len(run.seed_ids)
        or pending.exclude(run=run, round=run.retry_round).exists()
    ):
        return None
    if pending.exists():
        return VariantRun.Status.ATTENTION
    return VariantRun.Status.COMPLETE


def scope(run: VariantRun) -> str | None:
    """The gateway's cache scope: shared on the first round (an identical prompt
    asked before is not paid again), the run's own per resumed round."""
    return f"variant-run-{run.pk}-retry-{run.retry_round}" if run.retry_round else None


def variant_chunk(run_id: int, seed_ids: list[int]) -> None:
    run = (
        VariantRun.objects.select_related("endpoint", "template", "benchmark")
        .filter(pk=run_id)
        .first()
    )
    if run is None or run.status != VariantRun.Status.RUNNING:
        return
    wanted = set(open_seeds(run)) & set(seed_ids)
    chosen = seeds(
        run.benchmark,
        ("multiple_choice", "true_false"),
        run.sector_field,
        item_ids=wanted,
    )
    requests = [
        LLMRequest(
            key=seed.item.pk,
            endpoint=run.endpoint,
            template=run.template,
            variables={
                "language": LANGUAGE_NAMES.get(seed.rendering.language, "Chinese"),
                "text": seed.rendering.question,
            },
            validate=free_text_validator,
        )
        for seed in chosen
    ]
    sectors = {seed.item.pk: seed.sector for seed in chosen}
    run_requests(
        requests,
        on_results=partial(_save_drafts, run, sectors),
        scope=scope(run),
        should_stop=lambda: not lifecycle.keep_alive(VariantRun, run.pk),
    )
    lifecycle.finish(VARIANTS, run.pk)


def _reason(call: LLMCall) -> str:
    if call.status == LLMCall.Status.FAILED:
        return call.error or "The call failed."
    last = call.parse_errors[-1] if call.parse_errors else {}
    why = last.get("error", "") if isinstance(last, dict) else str(last)
    return f"Unparseable reply: {why}".strip()


def _save_drafts(run: VariantRun, sectors: dict[int, str], outcomes) -> None:
    """One draft per seed, in the gateway's transaction; a pending draft is
    replaced by a later attempt's reply."""
    VariantDraft.objects.bulk_create(
        [
            VariantDraft(
                run=run,
                seed_id=outcome.key,
                relation=run.relation,
                sector=sectors.get(outcome.key, ""),
                text=outcome.call.parsed_output.strip() if outcome.ok else "",
                status=Status.AWAITING if outcome.ok else Status.PENDING,
                reason="" if outcome.ok else _reason(outcome.call),
                call=outcome.call,
                round=run.retry_round,
            )
            for outcome in outcomes
        ],
        update_conflicts=True,
        unique_fields=["seed", "relation"],
        update_fields=["run", "text", "status", "reason", "call", "round"],
    )
    cached = sum(outcome.cached for outcome in outcomes)
    VariantRun.objects.filter(pk=run.pk).update(
        cached_calls=F("cached_calls") + cached,
        **usage_of(outcomes).updates(),
        heartbeat_at=timezone.now(),
    )


VARIANTS = lifecycle.RunKind(
    name="variants",
    model=VariantRun,
    start_task="judging.robustness.tasks.start_variant_run",
    chunk_task="judging.robustness.tasks.variant_chunk",
    prepare=_prepare,
    open_chunks=open_chunks,
    end_state=end_state,
    page="judging:variant_run",
    counts=run_counts,
)
