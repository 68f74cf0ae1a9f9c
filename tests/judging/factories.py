"""Small factories for evaluation tests: labelled items with renderings, and runs."""

import numpy as np
from django.utils import timezone

from benchmark.models import FinalLabel, Item, Label, Rendering
from judging.evaluation.models import EvaluationRun, Judgment, Response


def make_items(benchmark, n: int, *, languages=("zh", "en"), seed: int = 0):
    """n active items item-000… with current renderings and capability/industry
    final labels spread over the taxonomy; returns them ordered by external_id."""
    rng = np.random.default_rng(seed)
    items = Item.objects.bulk_create(
        Item(
            benchmark=benchmark,
            external_id=f"item-{i:03d}",
            knowledge_text=f"Knowledge text {i}: the safety limit is {i} kPa.",
        )
        for i in range(n)
    )
    Rendering.objects.bulk_create(
        Rendering(
            item=item,
            language=language,
            question=f"[{language}] Question {i}?",
            answer=f"[{language}] Reference answer {i}.",
            origin=Rendering.Origin.SOURCE,
        )
        for i, item in enumerate(items)
        for language in languages
    )
    finals = []
    for code in ("capability", "industry"):
        labels = list(
            Label.objects.filter(dimension__benchmark=benchmark, dimension__code=code)
        )
        picks = rng.integers(0, len(labels), n)
        finals += [
            FinalLabel(
                item=item,
                dimension=labels[pick].dimension,
                label=labels[pick],
                provenance=FinalLabel.Provenance.IMPORTED,
            )
            for item, pick in zip(items, picks, strict=True)
        ]
    FinalLabel.objects.bulk_create(finals)
    return items


def make_run(
    benchmark,
    items,
    raw,
    sv,
    *,
    model="model-x",
    language="zh",
    thinking=False,
    category="",
    statuses=None,
):
    """A scored run: raw[i] None = rubric pending, sv[i] None = SV pending."""
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=model,
        model_category=category,
        language=language,
        thinking=thinking,
        origin=EvaluationRun.Origin.IMPORTED,
        status=EvaluationRun.Status.COMPLETE,
        judge_name="judge",
        sv_judge_name="sv",
        total_items=len(items),
    )
    statuses = statuses or [Response.Status.ANSWERED] * len(items)
    responses = Response.objects.bulk_create(
        Response(run=run, item=item, text=f"answer {item.external_id}", status=status)
        for item, status in zip(items, statuses, strict=True)
    )
    judgments = []
    for response, score, flag in zip(responses, raw, sv, strict=True):
        judgments.append(
            Judgment(
                response=response,
                kind=Judgment.Kind.RUBRIC,
                judge_name="judge",
                score=score,
                status=Judgment.Status.DONE
                if score is not None
                else Judgment.Status.UNPARSEABLE,
                reason=f"judge says {score}",
            )
        )
        if response.status == Response.Status.ANSWERED:
            judgments.append(
                Judgment(
                    response=response,
                    kind=Judgment.Kind.SAFETY,
                    judge_name="sv",
                    safety_violation=flag,
                    status=Judgment.Status.DONE
                    if flag is not None
                    else Judgment.Status.FAILED,
                    reason="violates" if flag else "fine",
                )
            )
    Judgment.objects.bulk_create(judgments)
    return run


SCORED = ["item-000", "item-001", "item-002", "item-003"]
FAILED = ["item-004", "item-005"]  # the answer call failed; the judge's unparseable
IN_FLIGHT = ["item-006"]  # judged, its SV check not back yet
UNASKED = ["item-007", "item-008", "item-009"]


def _verdict(response, kind, status, **values):
    return Judgment(
        response=response,
        kind=kind,
        judge_name="judge" if kind == Judgment.Kind.RUBRIC else "sv",
        status=status,
        **values,
    )


def make_asking_run(benchmark, status=EvaluationRun.Status.RUNNING) -> EvaluationRun:
    """A pipeline run over 10 items caught mid-way: 4 scored, 2 failed, 1 in
    flight, 3 not asked yet."""
    items = make_items(benchmark, 10, languages=("zh",))
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name="alpha",
        language="zh",
        origin=EvaluationRun.Origin.PIPELINE,
        status=status,
        judge_name="judge",
        sv_judge_name="sv",
        total_items=10,
        answered_count=6,
        judged_count=5,
        sv_checked_count=5,
        started_at=timezone.now(),
    )
    by_id = {}
    for item in items:
        if item.external_id in UNASKED:
            state = Response.Status.PENDING
        elif item.external_id == "item-004":
            state = Response.Status.FAILED
        else:
            state = Response.Status.ANSWERED
        failed = state == Response.Status.FAILED
        by_id[item.external_id] = Response.objects.create(
            run=run,
            item=item,
            status=state,
            text="" if failed else f"Answer to {item.external_id}.",
            error="HTTP 500: provider overloaded" if failed else "",
        )
    done, rubric, safety = (
        Judgment.Status.DONE,
        Judgment.Kind.RUBRIC,
        Judgment.Kind.SAFETY,
    )
    safe = {"safety_violation": False}
    Judgment.objects.bulk_create(
        [
            *(_verdict(by_id[key], rubric, done, score=3) for key in SCORED),
            *(_verdict(by_id[key], safety, done, **safe) for key in SCORED),
            _verdict(
                by_id["item-005"],
                rubric,
                Judgment.Status.UNPARSEABLE,
                error="Unparseable after 2 attempt(s): no JSON object",
            ),
            _verdict(by_id["item-005"], safety, done, **safe),
            _verdict(by_id["item-006"], rubric, done, score=2),
        ]
    )
    return run


MC_OPTIONS = ["10 mm", "20 mm", "30 mm", "40 mm"]


def make_format_items(benchmark, mc: int = 0, tf: int = 0, short: int = 0):
    """A binary benchmark's items: `mc` multiple-choice (options A–D, B correct),
    `tf` true/false statements "… The rated current is 16 A." (true), `short`
    short-answer items with two key points. The questions begin "[zh] Question
    N?" with N counted over all of them, so the evaluation stub's item numbers
    work; returns them in that order."""
    benchmark.scoring_scale = benchmark.ScoringScale.BINARY
    benchmark.save(update_fields=["scoring_scale"])
    kinds = ["mc"] * mc + ["tf"] * tf + ["short"] * short
    items = Item.objects.bulk_create(
        Item(
            benchmark=benchmark,
            external_id=f"{kind}-{n:03d}",
            format={
                "mc": Item.Format.MULTIPLE_CHOICE,
                "tf": Item.Format.TRUE_FALSE,
                "short": Item.Format.SHORT_ANSWER,
            }[kind],
            correct_options=["B"] if kind == "mc" else [],
            correct_answer=True if kind == "tf" else None,
        )
        for n, kind in enumerate(kinds)
    )
    Rendering.objects.bulk_create(
        Rendering(
            item=item,
            language="zh",
            question=f"[zh] Question {n}?"
            + (" The rated current is 16 A." if kind == "tf" else ""),
            answer=f"Reference answer {n}.",
            origin=Rendering.Origin.SOURCE,
            options=MC_OPTIONS if kind == "mc" else [],
            key_points=[f"key point {n}a", f"key point {n}b"]
            if kind == "short"
            else [],
        )
        for n, (item, kind) in enumerate(zip(items, kinds, strict=True))
    )
    return items
