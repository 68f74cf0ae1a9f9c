"""A simulated construction run for the demo (seeded, marked simulated), so the
construction page, the funnel report, candidate pages, reject reasons and the
review queue of dangling references have content without any API key.

It works on its own demo benchmark (CONSTRUCTION_SLUG), so that the candidates it
releases do not join the hand-written items of the main demo. The sources are
GB/T clauses and product records in `demo_sources.jsonl`, each with the questions
its simulated generation reply holds (none for a source whose generation stays
pending) and, for some, the quality verdict planned for them.

Stages are simulated in pipeline order, each as one StageRun with its decisions
written directly: generation and quality (LLM stages) from the plan, dedup and
post-processing (no LLM) by the pipeline's own checks (`dedup_verdicts`,
`post_verdicts`) over the real stage pool (`stage_pool`). A stage already run on
the benchmark is skipped, so running the seeder again changes nothing. A later
stage joins the simulation as one more `SimulatedStage` in SIMULATED_STAGES: its
stage, its prompt purpose (an LLM stage) or method, and a `decide` function from
the candidates entering it to their verdicts. Then the demo manager approves one
flag and removes another, and a seeded sample is released, once.
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

from benchmark.actions import do_create_benchmark
from benchmark.models import Benchmark
from construction.actions import do_import_sources, do_release, do_review_flag
from construction.dangling import default_phrases, parse_phrases
from construction.models import (
    Candidate,
    Generation,
    Source,
    Stage,
    StageDecision,
    StageRun,
)
from construction.pipeline import (
    DEDUP_METHOD,
    POST_METHOD,
    dedup_verdicts,
    post_verdicts,
    stage_pool,
)
from construction.sources import content_hash
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import default_template

CONSTRUCTION_SLUG = "industrybench-construction-demo"
CONSTRUCTION_NAME = "IndustryBench construction demo"
SOURCES_FILE = Path(__file__).resolve().parent / "demo_sources.jsonl"
WRITER = ("qwen3-max", "https://dashscope.aliyuncs.com/compatible-mode/v1")
QUESTIONS_PER_SOURCE = 3
DEDUP_THRESHOLD = 0.9
RELEASE_SIZE = 30
RELEASE_SEED = 1
PENDING_QUALITY = (
    "Simulated: the provider answered 503 three times; resume to ask again."
)
SIMULATED = {"simulated": True}
Outcome = StageDecision.Outcome


# A stage's verdict on one candidate: (outcome, reason, evidence).
Verdict = tuple[str, str, dict]


@dataclass(frozen=True)
class SimulatedStage:
    stage: str
    purpose: str  # the prompt purpose of an LLM stage; "" for a stage without one
    decide: Callable[[StageRun, Sequence[Candidate], dict], list[Verdict]]
    method: str = ""  # the decisions' `model` for a stage that calls none


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
                "fields": {name: row[name] for name in parts if name in row},
            },
            ensure_ascii=False,
        )
        for row in rows
    ).encode("utf-8")


def _quality_plan(rows: list[dict]) -> dict[str, str]:
    """question → the planned quality reject reason."""
    return {
        question[0]: question[2]["quality"]
        for row in rows
        for question in row["questions"]
        if len(question) > 2 and "quality" in question[2]
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


def _post_verdicts(run: StageRun, pool: Sequence[Candidate], plan) -> list:
    return post_verdicts(list(pool), parse_phrases(run.phrases))


SIMULATED_STAGES = (
    SimulatedStage(Stage.DEDUP, "", _dedup_verdicts, method=DEDUP_METHOD),
    SimulatedStage(
        Stage.QUALITY, PromptTemplate.Purpose.QUALITY_CHECK, _quality_verdicts
    ),
    SimulatedStage(Stage.POST, "", _post_verdicts, method=POST_METHOD),
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
        plan = {"quality": _quality_plan(rows)}
        for simulated in SIMULATED_STAGES:
            _simulate_stage(benchmark, simulated, plan, manager, clock)
        _review_and_release(benchmark, manager)


class _Clock:
    """Back-dated run times, one simulated stage after another, ending now."""

    def __init__(self, stages: int = len(SIMULATED_STAGES) + 1):
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
    if simulated.stage == Stage.POST:
        fields["phrases"] = "\n".join(default_phrases(benchmark.source_language))
    run = _new_run(
        benchmark, simulated.stage, simulated.purpose, manager, clock, **fields
    )
    pool = stage_pool(benchmark.pk, simulated.stage)
    verdicts = simulated.decide(run, pool, plan)
    StageDecision.objects.bulk_create(
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
    pending = sum(outcome == Outcome.PENDING for outcome, _, _ in verdicts)
    _end(run, units=len(pool), pending=pending)


def _end(run: StageRun, *, units: int, pending: int) -> None:
    run.total_units = units
    run.status = StageRun.Status.ATTENTION if pending else StageRun.Status.COMPLETE
    run.save(update_fields=["total_units", "status"])


def _review_and_release(benchmark, manager) -> None:
    """Once: the demo manager approves the first flag and removes the second
    (the rest wait in the queue), then releases a seeded sample."""
    if StageDecision.objects.filter(
        candidate__source__benchmark=benchmark, stage=Stage.RELEASE
    ).exists():
        return
    flags = list(
        StageDecision.objects.filter(
            candidate__source__benchmark=benchmark,
            stage=Stage.POST,
            outcome=Outcome.PENDING,
        ).order_by("id")[:2]
    )
    if len(flags) == 2 and manager is not None:
        do_review_flag(flags[0], Outcome.PASS, user=manager)
        do_review_flag(
            flags[1],
            Outcome.REJECT,
            reason="题干指代不明：未说明是哪种产品，离开原始记录无法作答。",
            user=manager,
        )
    do_release(benchmark, RELEASE_SIZE, RELEASE_SEED, user=manager)
