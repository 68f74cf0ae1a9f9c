"""Construction stages as runs on the shared lifecycle (judging.runs.lifecycle).

    generation: one call per source → candidates, each with a `pass` decision
    dedup:      exact and semantic twins among the candidates (dedup.py): no
                call with character n-grams, or one /v1/embeddings call per
                distinct question through the gateway; the run keeps its
                threshold sweep
    quality:    one call per candidate → a pass / reject verdict with its reason
    search:     three queries per candidate, a search service, a verifier call →
                pass / reject with the queries and results as evidence
    deep:       one claim-level call per candidate → keep (pass) / refine (a new
                answer version) / remove (reject); both in verification.py
    release:    no run: a person draws the stratified release sample from the
                verified pool (release.do_draw_release_sample)
    exact_dedup, dangling: no call; the checks on the release sample
                (postprocess.py); a dangling reference is `pending` until a
                person approves or removes it (actions.do_review_flag)
    released:   no run: release.do_release promotes what is left to items

`actions.do_start_stage` creates a StageRun and queues `tasks.start_stage_run` →
`lifecycle.start` counts the run's open units (`_prepare`) and queues one
`stage_chunk` task per slice → each chunk makes the calls its units lack through
the gateway and writes their results in the gateway's transaction
(`_save_generations`, `_save_verdicts`) → the chunk that finishes the last unit
ends the run: Complete, or Needs attention while some units are pending (a call
that failed or stayed unparseable; never a rejection).

A trial (`trial_size` > 0) decides only a seeded sample of its stage's input,
drawn when it starts and kept on the run (`draw_trial`); its decisions are in
the ledger under its prompt version like any other.

Every step is idempotent: results are unique per source × prompt version
(Generation) and candidate × stage × prompt version (StageDecision), a unit with
a result is not asked again, and the gateway serves calls already recorded — so a
second run of a stage with the same prompt version asks nothing and changes
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import pairwise

import numpy as np
from django.db import transaction
from django.utils import timezone

from construction.calls import count_calls, pending_reason, record_decisions
from construction.dedup import (
    KEPT,
    SWEEP_THRESHOLDS,
    Duplicate,
    char_ngram_embeddings,
    duplicates_among,
    exact_twins,
    greedy_clusters_at,
    sweep_rows,
    unit_rows,
)
from construction.forum import stages as forum_stages
from construction.models import (
    STAGE_ORDER,
    Candidate,
    Generation,
    Source,
    Stage,
    StageDecision,
    StageRun,
)
from construction.postprocess import check_sample
from construction.sampling import simple_sample
from construction.verification import verify_by_search, verify_deeply
from judging.llm.gateway import LLMRequest, run_requests
from judging.llm.models import LLMCall
from judging.llm.outputs import generation_validator, verdict_validator
from judging.runs import lifecycle

# Chunks big enough that a worker process's calls fill its share of the
# endpoint's slots between the per-chunk costs (task, queries, client set-up),
# and few enough that the model seldom idles at a chunk's start and end. Search
# verification streams its candidates (construction.verification) and takes the
# same size: bench/construction_bench.py with 2 workers measured chunks of 50 /
# 200 well below capacity in quality, and search verification at 10,000
# candidates 79.7 % of capacity with chunks of 150, 87.8 % with 500. A source
# is one call, so sources take the same size too: generation at 3,334 sources
# went 86.4 % → 90.5 % of capacity from chunks of 200 to 500.
CHUNK_SOURCES = 500
CHUNK_CANDIDATES = 500
# A forum post's call may carry up to four screenshots as data URLs, all held in
# memory while its chunk runs: posts keep the smaller chunk.
CHUNK_POSTS = 200
SWEEP_PAIRS = 3  # sample pairs per threshold in a dedup run's sweep
# The `model` of the decisions of dedup with character n-grams.
DEDUP_METHOD = "char-tfidf-2-4"
# The stages that take sources (one Generation each) rather than candidates.
SOURCE_STAGES = (Stage.GENERATION, Stage.EXTRACT_QA)
# The forum pipeline's LLM stages (construction.forum.stages), by stage.
FORUM_CHUNKS = {
    Stage.EXTRACT_QA: forum_stages.extract,
    Stage.QA_FILTER: forum_stages.filter_quality,
    Stage.CONVERT: forum_stages.convert,
}
# The stages whose one chunk compares every candidate of the pool.
WHOLE_POOL_STAGES = (Stage.DEDUP, Stage.EXACT, Stage.DANGLING)
Outcome = StageDecision.Outcome
# A refined candidate goes on with its corrected answer.
THROUGH = (Outcome.PASS, Outcome.REFINE)


# -- which candidates a stage takes ------------------------------------------------


def stages_run(benchmark_id: int) -> set[str]:
    """The stages with at least one decision on the benchmark's candidates."""
    # Without order_by() the model's ordering joins the DISTINCT, which then
    # returns a row per decision.
    return set(
        StageDecision.objects.filter(candidate__source__benchmark_id=benchmark_id)
        .order_by()
        .values_list("stage", flat=True)
        .distinct()
    )


def pool_ids(benchmark_id: int, stage: str) -> list[int]:
    """The ids of the candidates that may enter `stage`, oldest first: those
    whose latest decision in every earlier stage run on the benchmark is `pass`
    (or `refine`: deep verification corrected its answer)."""
    earlier = STAGE_ORDER[: STAGE_ORDER.index(stage)]
    ran = stages_run(benchmark_id)
    required = [s for s in earlier if s in ran]
    latest: dict[tuple[int, str], str] = {}
    for candidate_id, decided_stage, outcome in (
        StageDecision.objects.filter(
            candidate__source__benchmark_id=benchmark_id, stage__in=required
        )
        .order_by("id")
        .values_list("candidate_id", "stage", "outcome")
    ):
        latest[candidate_id, decided_stage] = outcome
    return sorted(
        {
            candidate_id
            for candidate_id, _ in latest
            if all(latest.get((candidate_id, s)) in THROUGH for s in required)
        }
    )


def stage_pool(benchmark_id: int, stage: str) -> list[Candidate]:
    """The candidates of `pool_ids`, with their sources."""
    return list(
        Candidate.objects.filter(pk__in=pool_ids(benchmark_id, stage))
        .select_related("source")
        .order_by("id")
    )


def _decided(stage: str, prompt_version: str, **which) -> set[int]:
    """Candidates (of those `which` filters) with a result in `stage` at
    `prompt_version`. A pending call is made again; a pending dangling-reference
    flag waits for a person, not a run."""
    decisions = StageDecision.objects.filter(
        stage=stage, prompt_version=prompt_version, **which
    )
    if stage != Stage.DANGLING:
        decisions = decisions.exclude(outcome=Outcome.PENDING)
    return set(decisions.values_list("candidate_id", flat=True))


def _sources(run: StageRun):
    sources = Source.objects.filter(benchmark_id=run.benchmark_id)
    if run.stage == Stage.EXTRACT_QA:
        return sources.filter(kind=Source.Kind.FORUM_POST)
    if run.source_kind:
        sources = sources.filter(kind=run.source_kind)
    return sources


def run_pool(run: StageRun) -> list[Candidate]:
    """The candidates a run compares: the stage's pool, for a dedup run within
    one source family only that family's."""
    pool = stage_pool(run.benchmark_id, run.stage)
    if run.stage == Stage.DEDUP and run.source_kind:
        pool = [c for c in pool if c.source.kind == run.source_kind]
    return pool


def _whole_input(run: StageRun) -> list[int]:
    """Every unit the stage takes, decided or not, in order: the sources
    (generation) or the candidates of the stage's pool."""
    if run.stage in SOURCE_STAGES:
        return list(_sources(run).order_by("id").values_list("pk", flat=True))
    if run.stage == Stage.DEDUP and run.source_kind:
        return [candidate.pk for candidate in run_pool(run)]
    return pool_ids(run.benchmark_id, run.stage)


def stage_input(run: StageRun) -> list[int]:
    """The units the run takes: the stage's whole input, or a trial's sample."""
    units = _whole_input(run)
    if run.is_trial:
        sample = set(run.trial_units)
        units = [pk for pk in units if pk in sample]
    return units


def draw_trial(run: StageRun) -> list[int]:
    """A trial's seeded sample of the stage's input, in input order."""
    units = _whole_input(run)
    return sorted(
        units[i] for i in simple_sample(len(units), run.trial_size, run.trial_seed)
    )


def open_units(run: StageRun) -> list[int]:
    """Source ids (generation) or candidate ids (dedup, quality) the run has yet
    to decide, in order."""
    version = run.prompt_version
    units = stage_input(run)
    if run.stage in SOURCE_STAGES:
        done = set(
            Generation.objects.filter(
                source__benchmark_id=run.benchmark_id,
                prompt_version=version,
                questions=questions_asked(run),
                status=Generation.Status.OK,
            ).values_list("source_id", flat=True)
        )
        return [pk for pk in units if pk not in done]
    # The benchmark's decisions rather than the units' thousands of ids in an IN.
    decided = _decided(
        run.stage, version, candidate__source__benchmark_id=run.benchmark_id
    )
    return [pk for pk in units if pk not in decided]


def questions_asked(run: StageRun) -> int:
    """Questions a source-stage call asks for: a forum post gives one."""
    return 1 if run.stage == Stage.EXTRACT_QA else run.questions_per_source


def still_open(run: StageRun, unit_ids: list[int]) -> list[int]:
    """Those of a chunk's units (cut from `open_units`) the run has yet to decide
    — a chunk queued twice, or after a resume, asks nothing twice. Only the
    chunk's own units are read: recomputing the stage's whole pool for each
    chunk cost seconds a chunk at 10,000 candidates."""
    if run.stage in SOURCE_STAGES:
        done = set(
            Generation.objects.filter(
                source_id__in=unit_ids,
                prompt_version=run.prompt_version,
                questions=questions_asked(run),
                status=Generation.Status.OK,
            ).values_list("source_id", flat=True)
        )
    else:
        done = _decided(run.stage, run.prompt_version, candidate_id__in=unit_ids)
    return [pk for pk in unit_ids if pk not in done]


# -- the run kind -------------------------------------------------------------------


def _prepare(run: StageRun) -> list[tuple[int, list[int]]]:
    """Count the run's open units; returns their chunks (listing them costs
    0.2–0.4 s at 10,000 candidates, so a start does it once)."""
    if run.is_trial and not run.trial_units:
        run.trial_units = draw_trial(run)
    units = open_units(run)
    run.total_units = len(units)
    run.save(update_fields=["total_units", "trial_units"])
    return _chunks(run, units)


def open_chunks(run: StageRun) -> list[tuple[int, list[int]]]:
    return _chunks(run, open_units(run))


def _chunks(run: StageRun, units: list[int]) -> list[tuple[int, list[int]]]:
    if not units:
        return []
    if run.stage in WHOLE_POOL_STAGES:
        # Both compare every candidate with every earlier one: one chunk.
        return [(run.pk, units)]
    size = {
        Stage.GENERATION: CHUNK_SOURCES,
        Stage.EXTRACT_QA: CHUNK_POSTS,
    }.get(run.stage, CHUNK_CANDIDATES)
    # The first chunk is half as big, so that the worker processes, which take
    # the first chunks together, do not also finish each chunk together: a
    # process between two chunks makes no call, and if all are, the provider
    # idles.
    bounds = [0, *range(size // 2, len(units), size), len(units)]
    return [(run.pk, units[start:end]) for start, end in pairwise(bounds)]


def finished_units(run: StageRun) -> tuple[int, int]:
    """(units this run decided, of which pending)."""
    if run.stage in SOURCE_STAGES:
        rows, pending = run.generations.all(), {"status": Generation.Status.PENDING}
    else:
        rows, pending = run.decisions.all(), {"outcome": Outcome.PENDING}
    return rows.count(), rows.filter(**pending).count()


def end_state(run: StageRun) -> str | None:
    """Ended once each of its units has a result: Complete, or Needs attention
    while some are pending (Resume asks for them again)."""
    finished, pending = finished_units(run)
    if finished < run.total_units:
        return None
    return StageRun.Status.ATTENTION if pending else StageRun.Status.COMPLETE


def stage_chunk(run_id: int, unit_ids: list[int]) -> None:
    run = (
        StageRun.objects.select_related(
            "endpoint", "template", "verifier_template", "search_service"
        )
        .filter(pk=run_id)
        .first()
    )
    if run is None or run.status != StageRun.Status.RUNNING:
        return
    units = still_open(run, unit_ids)
    if run.stage == Stage.GENERATION:
        _generate(run, units)
    elif run.stage == Stage.DEDUP:
        _dedup(run, units)
    elif run.stage in (Stage.EXACT, Stage.DANGLING):
        check_sample(run, stage_pool(run.benchmark_id, run.stage), units)
    elif run.stage == Stage.SEARCH:
        verify_by_search(run, units)
    elif run.stage == Stage.DEEP:
        verify_deeply(run, units)
    elif run.stage in FORUM_CHUNKS:
        FORUM_CHUNKS[run.stage](run, units)
    else:
        _check_quality(run, units)
    lifecycle.finish(STAGES, run.pk)


def _end_counts(run: StageRun) -> dict:
    decided, pending = finished_units(run)
    return {
        "stage": run.stage,
        "units": run.total_units,
        "decided": decided,
        "pending": pending,
    }


STAGES = lifecycle.RunKind(
    name="construction",
    model=StageRun,
    start_task="construction.tasks.start_stage_run",
    chunk_task="construction.tasks.stage_chunk",
    prepare=_prepare,
    open_chunks=open_chunks,
    end_state=end_state,
    page="construction:run",
    counts=_end_counts,
)


# -- generation ---------------------------------------------------------------------


def _generate(run: StageRun, source_ids: list[int]) -> None:
    sources = Source.objects.filter(pk__in=source_ids).order_by("id")
    requests = [
        LLMRequest(
            key=source.pk,
            endpoint=run.endpoint,
            template=run.template,
            variables={
                "count": run.questions_per_source,
                "kind": source.get_kind_display(),
                "reference": source.reference,
                "source_text": source.text,
            },
            validate=generation_validator(run.questions_per_source),
        )
        for source in sources
    ]
    run_requests(
        requests,
        on_results=partial(_save_generations, run),
        should_stop=lambda: not lifecycle.keep_alive(StageRun, run.pk),
    )


def _save_generations(run: StageRun, outcomes) -> None:
    """Record each source's generation and, for a usable reply, its candidates
    with their generation `pass`; in the gateway's transaction."""
    version = run.prompt_version
    sources = Source.objects.in_bulk([outcome.key for outcome in outcomes])
    generations = Generation.objects.bulk_create(
        [
            Generation(
                source_id=outcome.key,
                prompt_version=version,
                questions=run.questions_per_source,
                status=Generation.Status.OK
                if outcome.ok
                else Generation.Status.PENDING,
                reason="" if outcome.ok else pending_reason(outcome.call),
                run=run,
                call=outcome.call,
            )
            for outcome in outcomes
        ],
        update_conflicts=True,
        unique_fields=["source", "prompt_version", "questions"],
        update_fields=["status", "reason", "run", "call"],
    )
    candidates = []
    for generation, outcome in zip(generations, outcomes, strict=True):
        if not outcome.ok:
            continue
        source = sources[outcome.key]
        for position, item in enumerate(outcome.call.parsed_output["items"]):
            candidates.append(
                Candidate(
                    source=source,
                    generation=generation,
                    position=position,
                    question=item["question"],
                    reference_answer=item["answer"],
                    knowledge_text=source.text,
                    label=str(source.fields.get("label", ""))[:100],
                )
            )
    Candidate.objects.bulk_create(candidates, ignore_conflicts=True)
    calls = {outcome.key: outcome.call for outcome in outcomes}
    StageDecision.objects.bulk_create(
        [
            StageDecision(
                candidate=candidate,
                stage=Stage.GENERATION,
                outcome=Outcome.PASS,
                model=calls[candidate.source_id].model,
                prompt_version=version,
                evidence={"generation": candidate.generation_id},
                run=run,
                call=calls[candidate.source_id],
            )
            for candidate in Candidate.objects.filter(
                generation__in=[g for g in generations if g.status == "ok"]
            )
        ],
        ignore_conflicts=True,
    )
    count_calls(run.pk, outcomes)


# -- dedup --------------------------------------------------------------------------


@dataclass
class _Vectors:
    """The distinct questions' vectors, for the first `len(rows)` of them; the
    rest have none (an embeddings call failed: `failed` is the first such
    question's position among the distinct ones and `reason` why)."""

    rows: object  # a matrix of unit rows, or None for fewer than two
    method: str
    failed: int | None = None
    reason: str = ""


def _embed_with_endpoint(run: StageRun, texts: list[str]) -> _Vectors:
    """Every text's vector from the run's /v1/embeddings endpoint, through the
    gateway (recorded, served from the record on a second run, counted in the
    run's tokens and cost). A call that failed cuts the vectors there."""
    calls: dict[int, LLMCall] = {}

    def collect(outcomes):
        calls.update({outcome.key: outcome.call for outcome in outcomes})
        count_calls(run.pk, outcomes)

    run_requests(
        [
            LLMRequest(key=position, endpoint=run.endpoint, embedding_input=text)
            for position, text in enumerate(texts)
        ],
        on_results=collect,
        should_stop=lambda: not lifecycle.keep_alive(StageRun, run.pk),
    )
    method = run.endpoint.model
    lengths = {
        len(call.parsed_output)
        for call in calls.values()
        if call.status == LLMCall.Status.OK
    }
    if len(lengths) > 1:
        reason = f"The endpoint's vectors differ in length: {sorted(lengths)}."
        return _Vectors(None, method, 0, reason)
    for position in range(len(texts)):
        call = calls.get(position)
        if call is None or call.status != LLMCall.Status.OK:
            reason = (
                pending_reason(call)
                if call
                else "The run stopped before its embedding was made."
            )
            return _Vectors(_unit(calls, position), method, position, reason)
    return _Vectors(_unit(calls, len(texts)), method)


def _unit(calls: dict[int, LLMCall], count: int):
    if count < 2:
        return None
    return unit_rows([calls[position].parsed_output for position in range(count)])


def _offline_vectors(texts: list[str]) -> _Vectors:
    rows = char_ngram_embeddings(texts) if len(texts) > 1 else None
    return _Vectors(rows, DEDUP_METHOD)


def _vectors(run: StageRun, texts: list[str]) -> _Vectors:
    if run.endpoint_id:
        return _embed_with_endpoint(run, texts)
    return _offline_vectors(texts)


@dataclass
class Dedup:
    verdicts: list[tuple[str, str, dict]]  # (outcome, reason, evidence) per member
    method: str  # what compared them: the embedding model or DEDUP_METHOD
    sweep: list[dict]  # clusters and sample pairs at SWEEP_THRESHOLDS


def dedup_verdicts(
    pool: list[Candidate],
    threshold: float,
    embed: Callable[[list[str]], _Vectors] = _offline_vectors,
    *,
    with_sweep: bool = False,
) -> Dedup:
    """Dedup's verdict on each pool member (oldest first, so the earliest of
    twins is kept).

    Exact twins need no vector. Without a vector for some question (its
    embeddings call failed) the candidates from it on stay pending — whether
    they repeat it is unknown — and those before it are decided as usual (a
    candidate is compared only with earlier ones)."""
    texts = [candidate.question for candidate in pool]
    exact = exact_twins(texts)
    distinct = np.flatnonzero(exact == KEPT)
    vectors = embed([texts[i] for i in distinct])
    cut = len(pool) if vectors.failed is None else int(distinct[vectors.failed])
    # One pass over the similarities serves the threshold and, on a full
    # comparison, the sweep.
    clusters = []
    if vectors.rows is not None:
        sweep_at = SWEEP_THRESHOLDS if with_sweep and vectors.failed is None else ()
        clusters = greedy_clusters_at(
            vectors.rows, [threshold, *sweep_at], near=SWEEP_PAIRS
        )
    duplicates = {
        duplicate.index: duplicate
        for duplicate in duplicates_among(
            exact[:cut], clusters[0] if clusters else None
        )
    }
    verdicts = []
    for index in range(len(pool)):
        duplicate = duplicates.get(index)
        if duplicate is None and index >= cut and exact[index] != KEPT:
            duplicate = Duplicate(index, int(exact[index]), 1.0, True)
        if duplicate is not None:
            twin = pool[duplicate.twin].pk
            outcome = Outcome.REJECT
            reason = (
                f"Exact duplicate of candidate {twin}"
                if duplicate.exact
                else f"Duplicate of candidate {twin} "
                f"(similarity {duplicate.similarity:.2f})"
            )
            evidence = {
                "twin": twin,
                "similarity": duplicate.similarity,
                "exact": duplicate.exact,
            }
        elif index >= cut:
            outcome, evidence = Outcome.PENDING, {}
            reason = (
                f"No embedding: {vectors.reason}"
                if index == cut
                else f"Waits for the embedding of candidate {pool[cut].pk}: "
                f"{vectors.reason}"
            )
        else:
            outcome, reason, evidence = Outcome.PASS, "", {}
        verdicts.append((outcome, reason, {**evidence, "threshold": threshold}))
    sweep = _sweep(pool, exact, distinct, clusters[1:]) if with_sweep else []
    return Dedup(verdicts, vectors.method, sweep)


def _dedup(run: StageRun, candidate_ids: list[int]) -> None:
    """Compare the whole pool and write decisions for the candidates the run is
    to decide; the run keeps the threshold sweep."""
    pool = run_pool(run)
    dedup = dedup_verdicts(pool, run.threshold, partial(_vectors, run), with_sweep=True)
    sweep = dedup.sweep
    wanted = set(candidate_ids)
    decisions = [
        StageDecision(
            candidate=candidate,
            stage=Stage.DEDUP,
            outcome=outcome,
            reason=reason,
            model=dedup.method,
            prompt_version=run.prompt_version,
            evidence=evidence,
            run=run,
        )
        for candidate, (outcome, reason, evidence) in zip(
            pool, dedup.verdicts, strict=True
        )
        if candidate.pk in wanted
    ]
    with transaction.atomic():
        record_decisions(decisions)
        StageRun.objects.filter(pk=run.pk).update(
            heartbeat_at=timezone.now(), sweep=sweep
        )


def _sweep(pool, exact, distinct, clusters) -> list[dict]:
    """Clusters and sample pairs at each threshold from 0.95 to 0.50 on the
    run's vectors, by candidate id, so a person can choose the threshold."""
    exact_count = int(np.count_nonzero(exact != KEPT))
    return [
        {
            "threshold": row.threshold,
            "clusters": row.clusters,
            "near_duplicates": row.duplicates,
            "exact_duplicates": exact_count,
            "pairs": [
                [pool[distinct[a]].pk, pool[distinct[b]].pk, round(similarity, 4)]
                for a, b, similarity in row.near_pairs
            ],
        }
        for row in sweep_rows(clusters)
    ]


# -- quality ------------------------------------------------------------------------


def _check_quality(run: StageRun, candidate_ids: list[int]) -> None:
    candidates = Candidate.objects.filter(pk__in=candidate_ids).select_related("source")
    requests = [
        LLMRequest(
            key=candidate.pk,
            endpoint=run.endpoint,
            template=run.template,
            variables={
                "question": candidate.question,
                "reference_answer": candidate.reference_answer,
                "knowledge_text": candidate.knowledge_text,
                "source_reference": candidate.source.reference,
            },
            validate=verdict_validator,
        )
        for candidate in candidates.order_by("id")
    ]
    run_requests(
        requests,
        on_results=partial(_save_verdicts, run),
        should_stop=lambda: not lifecycle.keep_alive(StageRun, run.pk),
    )


def _save_verdicts(run: StageRun, outcomes) -> None:
    decisions = []
    for outcome in outcomes:
        call = outcome.call
        if outcome.ok:
            verdict, reason = (
                call.parsed_output["verdict"],
                call.parsed_output["reason"],
            )
        else:
            verdict, reason = Outcome.PENDING, pending_reason(call)
        decisions.append(
            StageDecision(
                candidate_id=outcome.key,
                stage=Stage.QUALITY,
                outcome=verdict,
                reason=reason,
                model=call.model,
                prompt_version=run.prompt_version,
                run=run,
                call=call,
            )
        )
    record_decisions(decisions)
    count_calls(run.pk, outcomes)
