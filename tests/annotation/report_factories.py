"""Builders for report tests and the report benchmark: judged runs, human grades and
labelling-run consensus, written with bulk inserts."""

import numpy as np

from annotation.models import Campaign, GradingLabel, Task
from benchmark.models import Item, Label, Rendering
from judging.evaluation.models import EvaluationRun, Judgment, Response
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.llm.models import Endpoint, PromptTemplate
from judging.reporting.consensus import OUTCOME_NAMES, consensus

JUDGES = ("judge-a", "judge-b", "judge-c")
SV_JUDGE = "sv-judge"


def bulk_items(benchmark, count: int, prefix: str = "I") -> list[Item]:
    """Items with a current source-language text (labelling runs select those)."""
    items = Item.objects.bulk_create(
        Item(benchmark=benchmark, external_id=f"{prefix}{i:05d}") for i in range(count)
    )
    Rendering.objects.bulk_create(
        (
            Rendering(
                item=item,
                language=benchmark.source_language,
                question=f"Question {item.external_id}",
                answer=f"Reference answer {item.external_id}",
                origin=Rendering.Origin.SOURCE,
            )
            for item in items
        ),
        batch_size=5000,
    )
    return items


def noisy_scores(rng, truth: np.ndarray, flip: float) -> np.ndarray:
    """A judge: the true score, moved ±1 (sometimes ±2) on a share `flip` of items."""
    step = rng.choice([-2, -1, 1], size=truth.size, p=[0.1, 0.45, 0.45])
    moved = rng.random(truth.size) < flip
    return np.clip(truth + step * moved, 0, 3)


def judged_runs(
    benchmark,
    items,
    *,
    models=("Model-A", "Model-B"),
    judges=JUDGES,
    seed=0,
    flip=0.25,
    sv_judge=SV_JUDGE,
):
    """One simulated run per model; every response scored by every judge and flagged
    by the SV judge. Returns {model: (responses, {judge: scores}, sv_flags)}."""
    rng = np.random.default_rng(seed)
    out = {}
    for model in models:
        run = EvaluationRun.objects.create(
            benchmark=benchmark,
            model_name=model,
            language="zh",
            origin=EvaluationRun.Origin.SIMULATED,
            status=EvaluationRun.Status.COMPLETE,
        )
        responses = Response.objects.bulk_create(
            Response(
                run=run,
                item=item,
                text=f"{model} answer to {item.external_id}",
                status=Response.Status.ANSWERED,
            )
            for item in items
        )
        truth = rng.choice(4, size=len(items), p=[0.08, 0.1, 0.12, 0.7])
        scores = {judge: noisy_scores(rng, truth, flip) for judge in judges}
        flags = rng.random(len(items)) < 0.1
        rows = [
            Judgment(
                response=response,
                kind=Judgment.Kind.RUBRIC,
                judge_name=judge,
                score=int(scores[judge][u]),
                reason=f"{judge} on {response.item.external_id}",
                status=Judgment.Status.DONE,
            )
            for judge in judges
            for u, response in enumerate(responses)
        ]
        if sv_judge:
            rows += [
                Judgment(
                    response=response,
                    kind=Judgment.Kind.SAFETY,
                    judge_name=sv_judge,
                    safety_violation=bool(flags[u]),
                    reason=f"safety reason {response.item.external_id}",
                    status=Judgment.Status.DONE,
                )
                for u, response in enumerate(responses)
            ]
        Judgment.objects.bulk_create(rows, batch_size=5000)
        out[model] = (responses, scores, flags)
    return out


def human_grades(benchmark, responses, grades: dict, *, flags: dict | None = None):
    """A grading campaign over `responses`; grades[user] = scores (NaN = not graded),
    flags[user] = safe/violating booleans (None = not asked)."""
    campaign = Campaign.objects.create(
        benchmark=benchmark,
        name="Calibration",
        kind=Campaign.Kind.GRADING,
        ask_safety=flags is not None,
        overlap=max(len(grades), 1),
    )
    tasks = Task.objects.bulk_create(
        Task(campaign=campaign, item_id=r.item_id, position=i, response=r)
        for i, r in enumerate(responses)
    )
    labels = []
    for user, scores in grades.items():
        user_flags = (flags or {}).get(user)
        for u, task in enumerate(tasks):
            if np.isnan(scores[u]):
                continue
            labels.append(
                GradingLabel(
                    task=task,
                    user=user,
                    score=int(scores[u]),
                    safety_violation=(
                        None if user_flags is None else bool(user_flags[u])
                    ),
                    seconds_spent=30.0,
                )
            )
    GradingLabel.objects.bulk_create(labels, batch_size=5000)
    return campaign


def labelling_consensus(benchmark, items, *, annotators=3, seed=0, agree=0.75):
    """A simulated labelling run: each annotator labels each item in every
    dimension (sometimes differently, sometimes failing), with stored consensus."""
    rng = np.random.default_rng(seed)
    template = PromptTemplate.objects.create(
        name=f"labelling-{benchmark.slug}", purpose="labelling", text="Label {item}"
    )
    run = LabellingRun.objects.create(
        benchmark=benchmark, template=template, origin=LabellingRun.Origin.SIMULATED
    )
    endpoints = [
        Endpoint.objects.get_or_create(
            name=f"annotator-{i}",
            defaults={"base_url": "http://127.0.0.1:9/v1", "model": f"model-{i}"},
        )[0]
        for i in range(annotators)
    ]
    run.annotators.set(endpoints)
    codes = {}
    for dimension in benchmark.dimensions.all():
        labels = list(Label.objects.filter(dimension=dimension))
        truth = rng.integers(0, len(labels), len(items))
        given = np.where(
            rng.random((len(items), annotators)) < agree,
            truth[:, None],
            rng.integers(0, len(labels), (len(items), annotators)),
        )
        given[rng.random(given.shape) < 0.02] = -1  # failed calls
        AnnotatorLabel.objects.bulk_create(
            (
                AnnotatorLabel(
                    run=run,
                    item=item,
                    annotator=endpoints[a],
                    dimension=dimension,
                    label=labels[given[u, a]] if given[u, a] >= 0 else None,
                    status="labelled" if given[u, a] >= 0 else "failed",
                )
                for u, item in enumerate(items)
                for a in range(annotators)
            ),
            batch_size=5000,
        )
        outcome, adopted, _ = consensus(given)
        LabelConsensus.objects.bulk_create(
            (
                LabelConsensus(
                    run=run,
                    item=item,
                    dimension=dimension,
                    outcome=OUTCOME_NAMES[outcome[u]],
                    label=labels[adopted[u]] if adopted[u] >= 0 else None,
                    annotator_count=annotators,
                )
                for u, item in enumerate(items)
            ),
            batch_size=5000,
        )
        codes[dimension.code] = (given, labels)
    return run, codes


def one_judge_set_up(benchmark, expert):
    """The IndustryBench set-up: two tested models scored by one rubric judge and
    one SV judge, `expert`'s grades on Model-A's 30 responses (one in four a point
    off the judge's) and a labelling run's consensus. Returns (judge, human)
    scores on Model-A."""
    items = bulk_items(benchmark, 30)
    runs = judged_runs(
        benchmark, items, models=("Model-A", "Model-B"), judges=("judge-a",)
    )
    EvaluationRun.objects.filter(benchmark=benchmark).update(
        judge_name="judge-a", sv_judge_name=SV_JUDGE
    )
    responses, scores, flags = runs["Model-A"]
    human = scores["judge-a"].copy()
    human[::4] = (human[::4] + 1) % 4
    human_grades(
        benchmark, responses, {expert: human.astype(float)}, flags={expert: flags}
    )
    labelling_consensus(benchmark, items)
    return scores["judge-a"], human
