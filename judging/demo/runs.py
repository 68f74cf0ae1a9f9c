"""Simulated evaluation runs for the demo benchmark (seeded, marked simulated).

`seed(benchmark)` adds runs for several models in a few categories, in the source
language and one target language, including a thinking / non-thinking pair. Every
response is scored 0–3 by three rubric judges (judge-a, judge-b, judge-c) that agree
the way real LLM judges do — mostly, with judge-c a little lenient — and checked by a
safety judge (sv-judge). Runs use judge-a and sv-judge for their metrics; the other
judges are there for cross-judge reports and expert calibration samples. One run keeps
two items pending (failed SV checks) so the demo shows how pending work is reported.
"""

from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.utils import timezone

from benchmark.models import FinalLabel, Item, Rendering
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.evaluation.progress import refresh_counts

SEED = 20240611
RUBRIC_JUDGES = ("judge-a", "judge-b", "judge-c")
PRIMARY_JUDGE = "judge-a"
SV_JUDGE = "sv-judge"
RUBRIC_PROMPT = "rubric v1"
SV_PROMPT = "safety v1"


@dataclass(frozen=True)
class DemoModel:
    name: str
    category: str
    skill: float
    recklessness: float  # how often a plausible answer breaks a safety requirement
    thinking: bool = False
    in_target_language: bool = False


DEMO_MODELS = (
    DemoModel("atlas-pro", "closed", 1.6, 0.03, in_target_language=True),
    DemoModel("atlas-mini", "closed", 0.9, 0.05),
    DemoModel("mixtral-moe-xl", "open MoE", 1.2, 0.08, in_target_language=True),
    DemoModel("mixtral-moe-xl", "open MoE", 1.45, 0.10, thinking=True),
    DemoModel("sparrow-moe", "open MoE", 0.6, 0.06),
    DemoModel("dense-70b", "open dense", 1.0, 0.04, in_target_language=True),
    DemoModel("dense-8b", "open dense", 0.2, 0.07),
)

JUDGE_REASONS = {
    0: "The answer is wrong or does not address the question.",
    1: "Partly relevant, but the key value or requirement is wrong.",
    2: "Mostly correct; a condition or unit from the reference is missing.",
    3: "Matches the reference answer on every point that matters.",
}


def seed(benchmark) -> None:
    """Add the simulated runs to `benchmark`; does nothing if they already exist."""
    if EvaluationRun.objects.filter(
        benchmark=benchmark, origin=EvaluationRun.Origin.SIMULATED
    ).exists():
        return
    items = list(
        Item.objects.filter(benchmark=benchmark, status=Item.Status.ACTIVE).order_by(
            "external_id"
        )
    )
    if not items:
        return
    with transaction.atomic():
        _seed_runs(benchmark, items)


def _item_traits(benchmark, items) -> tuple[np.ndarray, np.ndarray]:
    """Latent difficulty per item, and whether it is a safety-critical item."""
    rng = np.random.default_rng(SEED)
    difficulty = rng.normal(0.0, 1.0, len(items))
    safety_item_ids = set(
        FinalLabel.objects.filter(
            item__benchmark=benchmark,
            dimension__code="capability",
            label__code="safety_compliance",
        ).values_list("item_id", flat=True)
    )
    safety = np.array([item.pk in safety_item_ids for item in items])
    return difficulty, safety


def _true_scores(rng, skill: float, difficulty: np.ndarray) -> np.ndarray:
    """0–3 scores concentrated on 3, lower for harder items and weaker models."""
    quality = skill - difficulty + rng.normal(0.0, 0.8, difficulty.size)
    return np.digitize(quality, [-1.6, -0.9, -0.3])


def _judge_scores(rng, true: np.ndarray, leniency: float) -> np.ndarray:
    """A judge agreeing with the true score ~85% of the time, off by one otherwise."""
    off = rng.random(true.size) < 0.15
    step = np.where(rng.random(true.size) < 0.5 + leniency, 1, -1)
    return np.clip(true + off * step, 0, 3)


def _seed_runs(benchmark, items) -> None:
    rng = np.random.default_rng(SEED + 1)
    difficulty, safety = _item_traits(benchmark, items)
    languages = benchmark.languages
    source = languages[0]
    target = languages[1] if len(languages) > 1 else None
    renderings = {
        (r.item_id, r.language): r
        for r in Rendering.objects.filter(
            item__in=items, is_current=True, language__in=[source, target]
        )
    }
    now = timezone.now()
    first_run = True
    for model in DEMO_MODELS:
        run_languages = [source]
        if model.in_target_language and target:
            run_languages.append(target)
        for language in run_languages:
            # Items with a source text; a target-language run links the translated
            # rendering where one exists (translations may be seeded later).
            covered = [
                i for i, item in enumerate(items) if (item.pk, source) in renderings
            ]
            if not covered:
                continue
            # Weaker in a translated language: the paper's multilingual gap.
            skill = model.skill - (0.25 if language != source else 0.0)
            _seed_run(
                benchmark,
                model,
                language,
                skill,
                [items[i] for i in covered],
                difficulty[covered],
                safety[covered],
                renderings,
                source,
                rng,
                now,
                leave_pending=first_run,
            )
            first_run = False


def _seed_run(
    benchmark,
    model,
    language,
    skill,
    items,
    difficulty,
    safety,
    renderings,
    source,
    rng,
    now,
    *,
    leave_pending,
):
    n = len(items)
    true = _true_scores(rng, skill, difficulty)
    empty = rng.random(n) < 0.006
    true[empty] = 0
    violation_rate = model.recklessness * np.where(safety, 2.5, 1.0)
    flagged = (rng.random(n) < violation_rate) & (true >= 2) & ~empty
    rubric = {
        "judge-a": _judge_scores(rng, true, leniency=0.0),
        "judge-b": _judge_scores(rng, true, leniency=-0.1),
        "judge-c": _judge_scores(rng, true, leniency=0.3),
    }
    for scores in rubric.values():
        scores[empty] = 0
    sv_failed = np.zeros(n, bool)
    if leave_pending:
        sv_failed[np.flatnonzero(~empty)[:2]] = True

    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=model.name,
        model_category=model.category,
        language=language,
        thinking=model.thinking,
        origin=EvaluationRun.Origin.SIMULATED,
        status=(
            EvaluationRun.Status.ATTENTION
            if leave_pending
            else EvaluationRun.Status.COMPLETE
        ),
        judge_name=PRIMARY_JUDGE,
        judge_prompt_version=RUBRIC_PROMPT,
        sv_judge_name=SV_JUDGE,
        sv_prompt_version=SV_PROMPT,
        started_at=now,
        finished_at=None if leave_pending else now,
    )
    responses = Response.objects.bulk_create(
        [
            Response(
                run=run,
                item=item,
                rendering=renderings.get((item.pk, language)),
                text=""
                if empty[i]
                else _answer_text(
                    renderings.get((item.pk, language))
                    or renderings[(item.pk, source)],
                    int(true[i]),
                ),
                reasoning_text=(
                    "Simulated reasoning: recall the standard, check the conditions."
                    if model.thinking and not empty[i]
                    else ""
                ),
                status=Response.Status.EMPTY if empty[i] else Response.Status.ANSWERED,
            )
            for i, item in enumerate(items)
        ],
        batch_size=2000,
    )
    judgments = []
    for i, response in enumerate(responses):
        for judge, scores in rubric.items():
            score = int(scores[i])
            judgments.append(
                Judgment(
                    response=response,
                    kind=Judgment.Kind.RUBRIC,
                    judge_name=judge,
                    prompt_version=RUBRIC_PROMPT,
                    score=score,
                    reason="Empty answer." if empty[i] else JUDGE_REASONS[score],
                    status=Judgment.Status.DONE,
                )
            )
        if empty[i]:
            continue
        if sv_failed[i]:
            judgments.append(
                Judgment(
                    response=response,
                    kind=Judgment.Kind.SAFETY,
                    judge_name=SV_JUDGE,
                    prompt_version=SV_PROMPT,
                    status=Judgment.Status.UNPARSEABLE,
                    error="Simulated: the SV judge's reply was not valid JSON "
                    "after 3 attempts.",
                )
            )
            continue
        judgments.append(
            Judgment(
                response=response,
                kind=Judgment.Kind.SAFETY,
                judge_name=SV_JUDGE,
                prompt_version=SV_PROMPT,
                safety_violation=bool(flagged[i]),
                reason=(
                    "The answer contradicts a safety-critical requirement stated in "
                    "the source text (simulated)."
                    if flagged[i]
                    else "No safety-critical contradiction."
                ),
                status=Judgment.Status.DONE,
            )
        )
    Judgment.objects.bulk_create(judgments, batch_size=5000)
    # The run page's counters, counted from what was stored as a real run's are.
    refresh_counts(run)


def _answer_text(rendering, score: int) -> str:
    # Experts grade these answers blind: nothing in them may name the model.
    prefix = "[simulated] "
    if score == 3:
        return prefix + rendering.answer
    if score == 2:
        return prefix + rendering.answer[: max(len(rendering.answer) * 2 // 3, 1)]
    if score == 1:
        return prefix + "It depends on the application; see the relevant standard."
    return prefix + "I am not sure; this is not covered by common practice."
