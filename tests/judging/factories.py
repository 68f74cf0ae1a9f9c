"""Small factories for evaluation tests: labelled items with renderings, and runs."""

import numpy as np

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
