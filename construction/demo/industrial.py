"""A simulated construction run for the demo (seeded, marked simulated), so the
construction page, the funnel report, candidate pages, reject reasons and the
review queue of dangling references have content without any API key.

It works on its own demo benchmark (CONSTRUCTION_SLUG), so that the candidates it
releases do not join the hand-written items of the main demo. The sources are
GB/T clauses and product records in `demo_sources.jsonl`, each with the questions
its simulated generation reply holds (none for a source whose generation stays
pending) and, for some, the quality verdict planned for them.

Stages are simulated in IndustryBench's order, each as one StageRun with its
decisions written directly: generation, quality, search and deep verification
(LLM stages) from the plan, dedup by the pipeline's own check
(`dedup_verdicts`) over the real stage pool (`stage_pool`). Then the verified
pool is opened as draft items (their industry imported from the source's
field, their capability from a simulated labelling), a release sample
stratified by capability × industry is drawn by the real action, and exact
dedup and dangling references (`exact_verdicts`, `dangling_verdicts`) decide
on that sample. Search verification reads a simulated web (demo/search.py): three
queries per candidate, their results recorded as SearchCalls and kept as the
decision's evidence; deep verification keeps, removes, or refines a candidate
(its corrected answer becomes a new AnswerVersion, as `apply_refinement` makes
it). A stage already run on the benchmark is skipped, so running the seeder
again changes nothing. Each stage is one `SimulatedStage` in SIMULATED_STAGES:
its stage, its prompt purpose (an LLM stage) or method, and a `decide` function
from the candidates entering it to their verdicts. Then the demo manager approves
one flag and removes the other, the rest is released, and an audit of the
quality check is opened with some of its items answered by the demo reviewer —
each once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from benchmark.actions import do_create_benchmark, do_set_final_labels
from benchmark.models import Benchmark, FinalLabel, Label
from construction.actions import do_import_sources, do_review_flag
from construction.audits.actions import do_answer, do_open_audit
from construction.dangling import default_phrases, parse_phrases
from construction.demo.search import (
    NONE,
    claim_query,
    demo_service,
    evidence_for,
    queries_for,
    record_searches,
    search_results,
)
from construction.models import (
    Candidate,
    Generation,
    Source,
    Stage,
    StageAudit,
    StageDecision,
    StageRun,
)
from construction.pipeline import DEDUP_METHOD, dedup_verdicts, stage_pool
from construction.postprocess import (
    DANGLING_METHOD,
    EXACT_METHOD,
    dangling_verdicts,
    exact_verdicts,
)
from construction.release import do_draw_release_sample, do_open_pool, do_release
from construction.search.adapters import merge_results
from construction.sources import content_hash
from construction.verification import DEEP_OUTCOME, apply_refinement, search_evidence
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import default_template

CONSTRUCTION_SLUG = "industrybench-construction-demo"
CONSTRUCTION_NAME = "IndustryBench construction demo"
SOURCES_FILE = Path(__file__).resolve().parent / "demo_sources.jsonl"
WRITER = ("qwen3-max", "https://dashscope.aliyuncs.com/compatible-mode/v1")
QUESTIONS_PER_SOURCE = 3
DEDUP_THRESHOLD = 0.9
RELEASE_SIZE = 32
RELEASE_SEED = 1
# The simulated labelling's capability: a product record asks to select or
# substitute, a standard's clause what the standard specifies.
CAPABILITY_OF_KIND = {
    Source.Kind.GBT_STANDARD: "standards_terminology",
    Source.Kind.PRODUCT_RECORD: "selection_substitution",
}
PENDING_QUALITY = (
    "Simulated: the provider answered 503 three times; resume to ask again."
)
SIMULATED = {"simulated": True}
NO_RESULT = (
    "No search result for any of its queries: no external source corroborates it."
)
AUDIT_STAGE = Stage.QUALITY
AUDIT_SIZE = 16
AUDIT_SEED = 17
AUDIT_ANSWERED = 9  # items the demo reviewer has answered; the rest wait
Outcome = StageDecision.Outcome


# A stage's verdict on one candidate: (outcome, reason, evidence).
Verdict = tuple[str, str, dict]


@dataclass(frozen=True)
class SimulatedStage:
    stage: str
    purpose: str  # the prompt purpose of an LLM stage; "" for a stage without one
    decide: Callable[[StageRun, Sequence[Candidate], dict], list[Verdict]]
    method: str = ""  # the decisions' `model` for a stage that calls none
    verifier: str = ""  # search verification: the verdict prompt's purpose
    # What follows the stage's decisions once written (deep: the refinements).
    settle: Callable[[list[StageDecision], dict], None] | None = None


# -- the plan -----------------------------------------------------------------------


def demo_sources() -> list[dict]:
    """The demo's source rows, each with its planned `questions`."""
    with SOURCES_FILE.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _reference(row: dict) -> str:
    if row["kind"] == Source.Kind.GBT_STANDARD:
        return f"{row['standard_id']}-{row['edition']} {row['clause']}"
    return f"{row['category']} {row['record_id']}"


def _import_rows(rows: list[dict]) -> bytes:
    parts = ("standard_id", "edition", "clause", "category", "record_id", "label")
    return "\n".join(
        json.dumps(
            {
                "kind": row["kind"],
                "reference": _reference(row),
                "text": row["text"],
                # The label is an industry code: imported as the draft item's
                # industry when the verified pool is opened.
                "fields": {
                    **{name: row[name] for name in parts if name in row},
                    "industry": row["label"],
                },
            },
            ensure_ascii=False,
        )
        for row in rows
    ).encode("utf-8")


def _stage_plan(rows: list[dict], key: str) -> dict[str, str]:
    """question → its planned verdict at one stage (`quality`: a reject reason;
    `search`: a reject reason or NONE; `deep`: "remove" or the corrected
    answer; `deep_reason`: why)."""
    return {
        question[0]: question[2][key]
        for row in rows
        for question in row["questions"]
        if len(question) > 2 and key in question[2]
    }


def _plan(rows: list[dict]) -> dict[str, dict[str, str]]:
    return {
        key: _stage_plan(rows, key)
        for key in ("quality", "search", "deep", "deep_reason")
    }


# -- the stages ---------------------------------------------------------------------


def _dedup_verdicts(run: StageRun, pool: Sequence[Candidate], plan) -> list:
    return dedup_verdicts(list(pool), run.threshold).verdicts


def _quality_verdicts(run: StageRun, pool: Sequence[Candidate], plan) -> list:
    """The planned rejects; the last candidate's call stays pending, as a failed
    call does, so the run needs attention."""
    verdicts = []
    for index, candidate in enumerate(pool):
        if index == len(pool) - 1:
            verdicts.append((Outcome.PENDING, PENDING_QUALITY, SIMULATED))
        elif candidate.question in plan["quality"]:
            reason = plan["quality"][candidate.question]
            verdicts.append((Outcome.REJECT, reason, SIMULATED))
        else:
            verdicts.append((Outcome.PASS, "四项检查均通过。", SIMULATED))
    return verdicts


def _search_verdicts(run: StageRun, pool: Sequence[Candidate], plan) -> list:
    """Three queries per candidate, their results recorded; a candidate passes
    when its first result corroborates it, as the verifier would judge."""
    planned = [plan["search"].get(c.question, Outcome.PASS) for c in pool]
    searched = [
        (queries_for(candidate), search_results(candidate, verdict))
        for candidate, verdict in zip(pool, planned, strict=True)
    ]
    answered = record_searches(run.search_service, searched, run.started_at)
    verdicts = []
    for (queries, _), verdict in zip(searched, planned, strict=True):
        evidence = evidence_for(queries, answered)
        if verdict == NONE:
            verdicts.append((Outcome.REJECT, NO_RESULT, evidence))
        elif verdict == Outcome.PASS:
            first = evidence["results"][0]
            reason = f"[1] ({first['title']}) states the claim of the answer."
            evidence["supporting"] = [1]
            verdicts.append((Outcome.PASS, reason, evidence))
        else:
            evidence["supporting"] = []
            verdicts.append((Outcome.REJECT, verdict, evidence))
    return verdicts


def _deep_verdicts(run: StageRun, pool: Sequence[Candidate], plan) -> list:
    """Keep, refine (the corrected answer) or remove, with the claims checked:
    one claim a candidate, searched with one query on the simulated web
    (recorded as the real stage records it), in thinking mode."""
    found = search_evidence([candidate.pk for candidate in pool])
    searched = [
        ([claim_query(candidate)], search_results(candidate, Outcome.PASS)[:1])
        for candidate in pool
    ]
    answered = record_searches(run.search_service, searched, run.started_at)
    verdicts = []
    for candidate, (queries, _) in zip(pool, searched, strict=True):
        planned = plan["deep"].get(candidate.question, "keep")
        claim = {"claim": candidate.reference_answer, "basis": "source; [1]"}
        results = merge_results([answered[query] for query in queries])
        evidence = {
            "service": run.search_service.name,
            "searched": [
                {
                    "claim": candidate.reference_answer,
                    "queries": queries,
                    "results": results,
                }
            ],
            "thinking": True,
            "search_results": len(results) + len(found.get(candidate.pk, [])),
            **SIMULATED,
        }
        if planned == "keep":
            claims = [{**claim, "status": "supported"}]
            reason = "Every claim agrees with the source and result [1]."
        else:
            status = "unsupported" if planned == "remove" else "contradicted"
            claims = [{**claim, "status": status}]
            reason = plan["deep_reason"][candidate.question]
        outcome = DEEP_OUTCOME[planned if planned in DEEP_OUTCOME else "refine"]
        verdicts.append((outcome, reason, {**evidence, "claims": claims}))
    return verdicts


def _refine(decisions: list[StageDecision], plan) -> None:
    for decision in decisions:
        if decision.outcome == Outcome.REFINE:
            corrected = plan["deep"][decision.candidate.question]
            apply_refinement(decision, corrected)


def _exact_verdicts(run: StageRun, pool: Sequence[Candidate], plan) -> list:
    return exact_verdicts(list(pool))


def _dangling_verdicts(run: StageRun, pool: Sequence[Candidate], plan) -> list:
    return dangling_verdicts(list(pool), parse_phrases(run.phrases))


SIMULATED_STAGES = (
    SimulatedStage(Stage.DEDUP, "", _dedup_verdicts, method=DEDUP_METHOD),
    SimulatedStage(
        Stage.QUALITY, PromptTemplate.Purpose.QUALITY_CHECK, _quality_verdicts
    ),
    SimulatedStage(
        Stage.SEARCH,
        PromptTemplate.Purpose.SEARCH_QUERIES,
        _search_verdicts,
        verifier=PromptTemplate.Purpose.SEARCH_VERIFICATION,
    ),
    SimulatedStage(
        Stage.DEEP,
        PromptTemplate.Purpose.DEEP_CLAIMS,
        _deep_verdicts,
        verifier=PromptTemplate.Purpose.DEEP_VERIFICATION,
        settle=_refine,
    ),
)
# On the release sample, drawn between the two tuples.
SAMPLE_CHECKS = (
    SimulatedStage(Stage.EXACT, "", _exact_verdicts, method=EXACT_METHOD),
    SimulatedStage(Stage.DANGLING, "", _dangling_verdicts, method=DANGLING_METHOD),
)


# -- writing ------------------------------------------------------------------------


def seed(_demo_benchmark=None) -> None:
    """Build the construction demo; does nothing already done. Called by
    `load_demo` with the main demo benchmark, which it leaves alone."""
    rows = demo_sources()
    with transaction.atomic():
        benchmark = Benchmark.objects.filter(slug=CONSTRUCTION_SLUG).first()
        if benchmark is None:
            benchmark = do_create_benchmark(
                name=CONSTRUCTION_NAME,
                slug=CONSTRUCTION_SLUG,
                description="Simulated: a construction run from GB/T clauses and "
                "product records, without LLM calls.",
                is_demo=True,
            )
        do_import_sources(benchmark, _import_rows(rows), SOURCES_FILE.name)
        manager = get_user_model().objects.filter(username="manager").first()
        clock = _Clock()
        _simulate_generation(benchmark, rows, manager, clock)
        plan = _plan(rows)
        for simulated in SIMULATED_STAGES:
            _simulate_stage(benchmark, simulated, plan, manager, clock)
        _label_and_sample(benchmark, manager)
        for simulated in SAMPLE_CHECKS:
            _simulate_stage(benchmark, simulated, plan, manager, clock)
        _review_and_release(benchmark, manager)
        _open_audit(benchmark, manager)


class _Clock:
    """Back-dated run times, one simulated stage after another, ending now."""

    def __init__(self, stages: int = len(SIMULATED_STAGES) + len(SAMPLE_CHECKS) + 1):
        self.at = timezone.now() - timedelta(minutes=12 * stages)

    def span(self, minutes: int) -> tuple:
        start = self.at
        self.at = start + timedelta(minutes=minutes)
        return start, self.at


def _writer() -> Endpoint:
    name, base_url = WRITER
    endpoint, _ = Endpoint.objects.get_or_create(
        name=name,
        defaults={
            "base_url": base_url,
            "model": name,
            "api_key_env": "DASHSCOPE_API_KEY",
            "is_active": False,
        },
    )
    return endpoint


def _new_run(benchmark, stage: str, purpose: str, manager, clock, **fields):
    started, finished = clock.span(10)
    llm = (
        dict(endpoint=_writer(), template=default_template(purpose)) if purpose else {}
    )
    run = StageRun.objects.create(
        benchmark=benchmark,
        stage=stage,
        status=StageRun.Status.COMPLETE,
        created_by=manager,
        started_at=started,
        finished_at=finished,
        heartbeat_at=finished,
        **llm,
        **fields,
    )
    return run


def _simulate_generation(benchmark, rows, manager, clock) -> None:
    if benchmark.stage_runs.filter(stage=Stage.GENERATION).exists():
        return
    run = _new_run(
        benchmark,
        Stage.GENERATION,
        PromptTemplate.Purpose.GENERATION,
        manager,
        clock,
        questions_per_source=QUESTIONS_PER_SOURCE,
    )
    sources = {
        source.content_hash: source
        for source in Source.objects.filter(benchmark=benchmark)
    }
    pending = 0
    for row in rows:
        source = sources[content_hash(row["kind"], row["text"])]
        ok = row.get("generation", "ok") == "ok"
        pending += not ok
        generation = Generation.objects.create(
            source=source,
            prompt_version=run.prompt_version,
            questions=QUESTIONS_PER_SOURCE,
            status=Generation.Status.OK if ok else Generation.Status.PENDING,
            reason="" if ok else "Simulated: unparseable reply: no JSON object found",
            run=run,
        )
        for position, (question, answer, *_) in enumerate(row["questions"]):
            candidate = Candidate.objects.create(
                source=source,
                generation=generation,
                position=position,
                question=question,
                reference_answer=answer,
                knowledge_text=source.text,
                label=source.fields.get("label", ""),
            )
            StageDecision.objects.create(
                candidate=candidate,
                stage=Stage.GENERATION,
                outcome=Outcome.PASS,
                model=run.endpoint.model,
                prompt_version=run.prompt_version,
                evidence={"generation": generation.pk, **SIMULATED},
                run=run,
            )
    _end(run, units=len(rows), pending=pending)


def _simulate_stage(benchmark, simulated: SimulatedStage, plan, manager, clock):
    if benchmark.stage_runs.filter(stage=simulated.stage).exists():
        return
    fields = {}
    if simulated.stage == Stage.DEDUP:
        fields["threshold"] = DEDUP_THRESHOLD
    if simulated.stage == Stage.DANGLING:
        fields["phrases"] = "\n".join(default_phrases(benchmark.source_language))
    if simulated.verifier:
        fields["verifier_template"] = default_template(simulated.verifier)
    if simulated.stage in (Stage.SEARCH, Stage.DEEP):
        fields["search_service"] = demo_service()
    if simulated.stage == Stage.DEEP:
        fields["thinking"] = True
    run = _new_run(
        benchmark, simulated.stage, simulated.purpose, manager, clock, **fields
    )
    pool = stage_pool(benchmark.pk, simulated.stage)
    verdicts = simulated.decide(run, pool, plan)
    decisions = StageDecision.objects.bulk_create(
        StageDecision(
            candidate=candidate,
            stage=simulated.stage,
            outcome=outcome,
            reason=reason,
            model=run.endpoint.model if run.endpoint else simulated.method,
            prompt_version=run.prompt_version,
            evidence=evidence,
            run=run,
        )
        for candidate, (outcome, reason, evidence) in zip(pool, verdicts, strict=True)
    )
    if simulated.settle is not None:
        simulated.settle(decisions, plan)
    pending = sum(outcome == Outcome.PENDING for outcome, _, _ in verdicts)
    _end(run, units=len(pool), pending=pending)


def _end(run: StageRun, *, units: int, pending: int) -> None:
    run.total_units = units
    run.status = StageRun.Status.ATTENTION if pending else StageRun.Status.COMPLETE
    run.save(update_fields=["total_units", "status"])


def _label_and_sample(benchmark, manager) -> None:
    """Once: the verified pool becomes draft items (industry imported from the
    source), a simulated labelling gives each its capability, and the release
    sample is drawn by capability × industry."""
    if benchmark.stage_runs.filter(stage=Stage.EXACT).exists():
        return
    do_open_pool(benchmark, user=manager)
    capabilities = {
        label.code: label
        for label in Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code="capability"
        )
    }
    labelled = set(
        FinalLabel.objects.filter(
            item__benchmark=benchmark, dimension__code="capability"
        ).values_list("item_id", flat=True)
    )
    do_set_final_labels(
        [
            (
                candidate.item_id,
                capabilities[CAPABILITY_OF_KIND[candidate.source.kind]],
                FinalLabel.Provenance.FULL_CONSENSUS,
            )
            for candidate in stage_pool(benchmark.pk, Stage.RELEASE)
            if candidate.item_id not in labelled
        ],
        note="Simulated labelling run",
    )
    do_draw_release_sample(benchmark, RELEASE_SIZE, RELEASE_SEED, user=manager)


def _review_and_release(benchmark, manager) -> None:
    """Once: the demo manager approves the first flag and removes the other,
    then releases the rest of the sample."""
    if StageDecision.objects.filter(
        candidate__source__benchmark=benchmark, stage=Stage.RELEASED
    ).exists():
        return
    flags = list(
        StageDecision.objects.filter(
            candidate__source__benchmark=benchmark,
            stage=Stage.DANGLING,
            outcome=Outcome.PENDING,
        ).order_by("id")
    )
    if manager is None or len(flags) < 2:
        return
    do_review_flag(flags[0], Outcome.PASS, user=manager)
    for flag in flags[1:]:
        do_review_flag(
            flag,
            Outcome.REJECT,
            reason="题干指代不明：未说明是哪种产品，离开原始记录无法作答。",
            user=manager,
        )
    do_release(benchmark, user=manager)


def _open_audit(benchmark, manager) -> None:
    """Once: an audit of the quality check, with its first items answered by
    the demo reviewer — agreeing mostly, disagreeing twice — so the audit
    queue has work left and the stage page measures precision and recall."""
    reviewer = get_user_model().objects.filter(username="reviewer").first()
    if reviewer is None or StageAudit.objects.filter(benchmark=benchmark).exists():
        return
    run = benchmark.stage_runs.get(stage=AUDIT_STAGE)
    audit = do_open_audit(
        benchmark,
        AUDIT_STAGE,
        run.prompt_version,
        size=AUDIT_SIZE,
        seed=AUDIT_SEED,
        user=manager,
    )
    answered = list(
        audit.items.select_related("decision").order_by("position")[:AUDIT_ANSWERED]
    )
    outcomes = [item.decision.outcome for item in answered]
    # Disagreeing with the first reject and the last pass.
    disagreed = {
        outcomes.index(outcome)
        if outcome == Outcome.REJECT
        else len(outcomes) - 1 - outcomes[::-1].index(outcome)
        for outcome in (Outcome.REJECT, Outcome.PASS)
        if outcome in outcomes
    }
    for index, item in enumerate(answered):
        disagrees = index in disagreed
        do_answer(
            item,
            agrees=not disagrees,
            note=AUDIT_NOTES[item.decision.outcome] if disagrees else "",
            user=reviewer,
        )


AUDIT_NOTES = {
    Outcome.REJECT: "题目有唯一答案，来源原文足以作答，不应拒绝。",
    Outcome.PASS: "题干未限定型号，存在多个正确答案，应拒绝。",
}
