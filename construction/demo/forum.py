"""A simulated LPFQA construction for the demo (seeded, marked simulated, no LLM
call), on a benchmark of its own (FORUM_SLUG): seven forum posts, one with a
screenshot of its thread, through QA extraction, the quality filter and the
conversion — their decisions written as the stages write them, from the plan
in POSTS — then the expert verification and the release by the real actions.

The posts come in two batches: the first five are verified by the demo expert
(approved, one of them edited) and released; the last two arrive later
and wait in the experts' queue, so the queue has work to show. Running the
seeder again changes nothing."""

from __future__ import annotations

import base64
import io
import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from benchmark.actions import do_create_benchmark
from benchmark.models import Benchmark
from construction.actions import do_import_sources
from construction.expert.actions import (
    do_open_expert_review,
    do_release_forum,
    do_verify_item,
    waiting,
)
from construction.forum.stages import NO_ANSWER, NO_QUESTION
from construction.models import (
    Candidate,
    Generation,
    Source,
    Stage,
    StageDecision,
    StageRun,
)
from judging.llm.models import PromptTemplate
from judging.llm.prompts import default_template

FORUM_SLUG = "lpfqa-construction-demo"
FORUM_NAME = "LPFQA construction demo (simulated)"
SIMULATED = {"simulated": True}
Outcome = StageDecision.Outcome
Purpose = PromptTemplate.Purpose

# Each post: its metadata and text, what the extraction finds (None: no
# question), the quality filter's rejection (None: kept), the converted form,
# the demo expert's verdict (batch 1) and its batch.
POSTS = [
    {
        "post_id": "1187",
        "title": "Running a 220 V mill on 110 V",
        "text": "I have a small mill with a 220 V single-phase motor but only 110 V "
        "in the garage. What are my options?\n"
        "Reply: A VFD with 110 V single-phase input and three-phase output, "
        "sized to the motor's HP and current; swap the motor for a 3-phase one.\n"
        "Reply: A step-up transformer works too but costs more at that current.",
        "views": 2410,
        "replies": 2,
        "votes": 14,
        "field": "General engineering",
        "extract": (
            "With only 110 V single-phase service, how should a 220 V milling "
            "machine be powered, and what must the chosen device match?",
            "A VFD with single-phase 110 V input and three-phase output, matched "
            "to the motor's horsepower and current rating.",
            "The replies favour a VFD (with a three-phase motor) over a step-up "
            "transformer: it converts the supply and gives speed control; its "
            "rating must cover the motor's HP and full-load current.",
        ),
        "form": {
            "format": "multiple_choice",
            "options": [
                "A voltage regulator with adjustable output, sized to current only",
                "A VFD with single-phase input and three-phase output, matched to "
                "the motor's HP and current",
                "A step-up transformer, matched to the voltage ratio only",
                "A capacitor-start conversion kit, matched to the motor's phases",
                "A DC supply with an inverter, matched to the motor's frequency",
            ],
            "correct": ["B"],
        },
        "expert": ("pass", ""),
        "batch": 1,
    },
    {
        "post_id": "2290",
        "title": "Shield grounding on a 40 m sensor run",
        "text": "Our 4-20 mA sensor cable picks up hum over a 40 m run. Shield is "
        "grounded at both ends. Fix?\n"
        "Reply: Ground the shield at the controller end only, otherwise it "
        "forms a ground loop; keep the drain wire bonded there.",
        "views": 880,
        "replies": 1,
        "votes": 6,
        "field": "Electrical engineering",
        "extract": (
            "Why does grounding a long sensor cable's shield at both ends cause "
            "hum, and how should the shield be grounded instead?",
            "Both ends at different ground potentials drive a loop current "
            "through the shield; ground it at one end (the controller) only.",
            "The reply names the ground loop and the single-point bond.",
        ),
        "form": {
            "format": "short_answer",
            "answer": "Grounded at both ends, the shield connects two points of "
            "different ground potential, so a loop current flows in it and "
            "couples into the signal; bond the shield (and its drain) at the "
            "controller end only.",
            "key_points": [
                "A ground loop through the shield",
                "Ground the shield at one end only",
                "At the controller / receiving end",
            ],
        },
        "expert": ("refine", ""),
        "batch": 1,
    },
    {
        "post_id": "3305",
        "title": "Tremolo notation between distant whole notes",
        "text": "The question is in the screenshot of the thread.",
        "screenshot": [
            "Q: Tremolo between two whole notes more than an octave apart,",
            "   played as sixteenths: how is it notated?",
            "R: Two parallel thick slashes between the note heads.",
        ],
        "views": 512,
        "replies": 1,
        "votes": 9,
        "field": "Music",
        "extract": (
            "In orchestral notation, how is a sixteenth-note tremolo between two "
            "whole notes more than an octave apart written?",
            "Two parallel thick slashes between the two note heads.",
            "Read off the screenshot: the accepted reply gives the notation.",
        ),
        "form": {
            "format": "multiple_choice",
            "options": [
                "Two slashes through each note's stem",
                "Three thin slashes between the note heads",
                "Two parallel thick slashes between the note heads",
                "The word 'trem.' above the first note",
                "A wavy line joining the two note heads",
                "Sixteenth-note beams between the heads",
            ],
            "correct": ["C"],
        },
        "expert": ("pass", ""),
        "batch": 1,
    },
    {
        "post_id": "4121",
        "title": "Forum maintenance Sunday",
        "text": "The forum will be read-only on Sunday night for maintenance.",
        "views": 120,
        "replies": 0,
        "votes": 0,
        "field": "",
        "extract": None,
        "batch": 1,
    },
    {
        "post_id": "5002",
        "title": "Cheapest tariff this year?",
        "text": "Which electricity tariff is cheapest for a small shop this year?\n"
        "Reply: Night tariff, for now.",
        "views": 300,
        "replies": 1,
        "votes": 1,
        "field": "Energy",
        "extract": (
            "Which electricity tariff is cheapest for a small machine shop this year?",
            "The night tariff.",
            "One reply, about this year's prices.",
        ),
        "quality": "Time-bound: the answer depends on this year's prices.",
        "batch": 1,
    },
    {
        "post_id": "6017",
        "title": "Bolt torque in an aluminium housing",
        "text": "M8 A2-70 bolt into a helical insert in aluminium: torque?\n"
        "Reply: About 18 Nm, below the insert's pull-out limit.",
        "views": 1320,
        "replies": 1,
        "votes": 11,
        "field": "Mechanical engineering",
        "extract": (
            "What tightening torque suits a preloaded M8 A2-70 bolt in an "
            "aluminium housing fitted with a helical insert, and what limits it?",
            "About 18 Nm, limited by the insert's pull-out strength.",
            "The reply sizes the torque below the insert's pull-out limit.",
        ),
        "form": {
            "format": "multiple_choice",
            "options": [
                "About 40 Nm, the bolt's proof load",
                "About 18 Nm, below the insert's pull-out limit",
                "About 5 Nm, to protect the aluminium threads",
                "Hand tight, as inserts need no preload",
                "About 25 Nm, the steel-nut value",
            ],
            "correct": ["B"],
        },
        "batch": 2,
    },
    {
        "post_id": "7044",
        "title": "Expansion loops on a hot pipe rack",
        "text": "Why loops instead of anchors every few metres on the steam line?\n"
        "Reply: Thermal growth; loops absorb it, anchors would overstress the "
        "pipe and the rack.",
        "views": 640,
        "replies": 1,
        "votes": 4,
        "field": "Mechanical engineering",
        "extract": (
            "Why are expansion loops used instead of closely spaced fixed anchors "
            "on a hot steam line across a pipe rack?",
            "Loops absorb thermal growth; anchors would restrain it and "
            "overstress the pipe and the rack.",
            "The reply explains the thermal growth and the restraint stress.",
        ),
        "form": {
            "format": "short_answer",
            "answer": "A hot line grows with temperature; restrained by anchors "
            "every few metres it would build large axial stress and load the "
            "rack, while a loop flexes and absorbs the growth.",
            "key_points": [
                "Thermal expansion of the hot line",
                "Restraint would overstress pipe and supports",
                "Loops absorb the growth by flexing",
            ],
        },
        "batch": 2,
    },
]


def screenshot(lines: list[str]) -> str:
    """A picture of a forum thread as a PNG data URL (matplotlib, Agg)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 1.2), dpi=80)
    figure.patch.set_facecolor("#f4f4f4")
    for row, line in enumerate(lines):
        figure.text(0.02, 0.8 - 0.28 * row, line, family="monospace", fontsize=10)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _rows() -> bytes:
    rows = []
    for post in POSTS:
        fields = {
            name: post[name]
            for name in ("post_id", "title", "views", "replies", "votes", "field")
        }
        fields["forum"] = "demo-forum"
        fields["posted_at"] = f"2024-0{POSTS.index(post) + 2}-14"
        fields["format"] = (post.get("form") or {}).get("format", "multiple_choice")
        if "screenshot" in post:
            fields["images"] = [screenshot(post["screenshot"])]
        rows.append({"kind": "forum_post", "text": post["text"], "fields": fields})
    return "\n".join(json.dumps(row) for row in rows).encode()


def seed(_demo_benchmark=None) -> None:
    """Build the forum construction demo; does nothing already done."""
    with transaction.atomic():
        benchmark = Benchmark.objects.filter(slug=FORUM_SLUG).first()
        if benchmark is not None and benchmark.stage_runs.exists():
            return
        if benchmark is None:
            benchmark = do_create_benchmark(
                name=FORUM_NAME,
                slug=FORUM_SLUG,
                description="Simulated: LPFQA's forum-to-item construction, "
                "without LLM calls.",
                is_demo=True,
            )
        do_import_sources(benchmark, _rows(), "demo_posts.jsonl")
        users = get_user_model().objects
        manager = users.filter(username="manager").first()
        expert = users.filter(username="expert").first()
        runs = _runs(benchmark, manager)
        by_id = {
            source.fields["post_id"]: source
            for source in Source.objects.filter(benchmark=benchmark)
        }
        for batch in (1, 2):
            posts = [post for post in POSTS if post["batch"] == batch]
            for post in posts:
                _simulate(post, by_id[post["post_id"]], runs)
            do_open_expert_review(benchmark)
            if batch == 1 and expert is not None:
                _verify(benchmark, expert)
                do_release_forum(benchmark, user=manager)


def _runs(benchmark, manager) -> dict[str, StageRun]:
    """One complete run per LLM stage, back-dated one after another."""
    stages = [
        (Stage.EXTRACT_QA, Purpose.FORUM_EXTRACT, None),
        (Stage.QA_FILTER, Purpose.FORUM_QUALITY, None),
        (Stage.CONVERT, Purpose.FORUM_MULTIPLE_CHOICE, Purpose.FORUM_SHORT_ANSWER),
    ]
    start = timezone.now() - timedelta(minutes=10 * len(stages))
    runs = {}
    for index, (stage, purpose, second) in enumerate(stages):
        began = start + timedelta(minutes=10 * index)
        runs[stage] = StageRun.objects.create(
            benchmark=benchmark,
            stage=stage,
            status=StageRun.Status.COMPLETE,
            template=default_template(purpose),
            verifier_template=default_template(second) if second else None,
            created_by=manager,
            started_at=began,
            finished_at=began + timedelta(minutes=8),
            heartbeat_at=began + timedelta(minutes=8),
        )
    return runs


def _decide(candidate, run, outcome, reason="", evidence=None) -> None:
    StageDecision.objects.create(
        candidate=candidate,
        stage=run.stage,
        outcome=outcome,
        reason=reason,
        model="simulated",
        prompt_version=run.prompt_version,
        evidence={**(evidence or {}), **SIMULATED},
        run=run,
    )


def _simulate(post: dict, source: Source, runs: dict) -> None:
    extract = runs[Stage.EXTRACT_QA]
    generation = Generation.objects.create(
        source=source,
        prompt_version=extract.prompt_version,
        questions=1,
        status=Generation.Status.OK,
        reason="" if post["extract"] else NO_QUESTION,
        run=extract,
    )
    if not post["extract"]:
        return
    question, answer, explanation = post["extract"]
    candidate = Candidate.objects.create(
        source=source,
        generation=generation,
        question=question,
        reference_answer=answer,
        knowledge_text=source.text,
        label=post["field"],
        form={"explanation": explanation},
    )
    screenshots = {"screenshots": len(source.fields.get("images") or [])}
    if not answer:
        _decide(candidate, extract, Outcome.REJECT, NO_ANSWER, screenshots)
        return
    _decide(candidate, extract, Outcome.PASS, evidence=screenshots)
    if post.get("quality"):
        _decide(candidate, runs[Stage.QA_FILTER], Outcome.REJECT, post["quality"])
        return
    _decide(candidate, runs[Stage.QA_FILTER], Outcome.PASS)
    form = {
        "question": question,
        "explanation": explanation,
        "options": [],
        "correct": [],
        "key_points": [],
        **post["form"],
    }
    candidate.form = {**candidate.form, **form}
    candidate.save(update_fields=["form"])
    _decide(candidate, runs[Stage.CONVERT], Outcome.PASS, evidence=form)


def _verify(benchmark, expert) -> None:
    """The demo expert's verdicts on the first batch, by the real action."""
    plans = {post["post_id"]: post.get("expert") for post in POSTS}
    for decision in waiting(benchmark.pk).select_related("candidate__source"):
        candidate = decision.candidate
        outcome, reason = plans[candidate.source.fields["post_id"]] or ("pass", "")
        edit = None
        if outcome == "refine":
            edit = {
                "question": candidate.form["question"] + " (Give the reason.)",
                "answer": candidate.form["answer"],
                "key_points": candidate.form["key_points"],
            }
        do_verify_item(decision, outcome, reason=reason, edit=edit, user=expert)
