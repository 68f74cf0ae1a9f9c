"""Demo review work: one campaign per screen on the demo benchmark, with work in it.

- Expert calibration grading over a stratified sample of the simulated runs'
  responses (judging.demo_runs), overlap 3: two simulated experts have graded every
  task through the real queue, so the `expert` demo user finds a third grade to give
  and the dashboard and agreement reports have data.
- Label adjudication over no-majority label consensus rows; when no labelling run has
  produced any, a small simulated three-model labelling run is added.
- Translation review over the renderings the simulated translation run flagged
  (judging.demo_translation creates that campaign itself).

Everything is seeded and marked simulated; `seed` does nothing the second time.
"""

import random

from django.contrib.auth import get_user_model
from django.db import transaction

from benchmark.actions import do_create_user
from benchmark.models import Item, Label, LabelDimension
from benchmark.roles import Role
from judging.models import (
    AnnotatorLabel,
    Endpoint,
    Judgment,
    LabelConsensus,
    LabellingRun,
    PromptTemplate,
    Response,
)

from .actions import (
    do_create_adjudication_campaign,
    do_create_grading_campaign,
    do_submit_grading,
)
from .models import Campaign
from .queue import do_claim_next

SEED = 20250101
SAMPLE_SIZE = 60
SIMULATED_EXPERTS = ("sim-expert-b", "sim-expert-c")
SIMULATED_ANNOTATORS = ("sim-annotator-a", "sim-annotator-b", "sim-annotator-c")
SPLIT_ITEMS = 12


def seed(benchmark) -> None:
    if (
        Campaign.objects.filter(benchmark=benchmark)
        .exclude(kind=Campaign.Kind.TRANSLATION_REVIEW)
        .exists()
    ):
        return
    _ensure_model_responses(benchmark)
    _ensure_flagged_translations(benchmark)
    with transaction.atomic():
        _grading_campaign(benchmark)
        _adjudication_campaign(benchmark)


def _ensure_model_responses(benchmark):
    if not Response.objects.filter(
        run__benchmark=benchmark, status=Response.Status.ANSWERED
    ).exists():
        from judging import demo_runs

        demo_runs.seed(benchmark)


def _ensure_flagged_translations(benchmark):
    if not Campaign.objects.filter(
        benchmark=benchmark, kind=Campaign.Kind.TRANSLATION_REVIEW
    ).exists():
        from judging import demo_translation

        demo_translation.seed(benchmark)


def _grading_campaign(benchmark):
    expert = get_user_model().objects.get(username=Role.EXPERT.value)
    simulated = [
        do_create_user(name, f"{name}-demo-password", Role.EXPERT)
        for name in SIMULATED_EXPERTS
    ]
    campaign = do_create_grading_campaign(
        benchmark,
        name="Expert calibration · simulated runs (demo)",
        size=SAMPLE_SIZE,
        seed=SEED,
        overlap=3,
        ask_safety=True,
        assignees=[expert, *simulated],
    )
    judge_scores = dict(
        Judgment.objects.filter(
            response__run__benchmark=benchmark,
            kind=Judgment.Kind.RUBRIC,
            judge_name="judge-a",
            score__isnull=False,
        ).values_list("response_id", "score")
    )
    rng = random.Random(SEED)
    for person in simulated:
        while (assignment := do_claim_next(campaign, person)) is not None:
            task = assignment.task
            base = judge_scores.get(task.response_id, rng.randrange(4))
            score = min(3, max(0, base + rng.choice((-1, 0, 0, 0, 1))))
            do_submit_grading(
                task,
                person,
                score=score,
                safety_violation=rng.random() < 0.08,
                seconds=rng.uniform(25, 140),
            )
    return campaign


def _adjudication_campaign(benchmark):
    if not LabelConsensus.objects.filter(
        run__benchmark=benchmark, outcome=LabelConsensus.Outcome.NONE
    ).exists():
        _simulated_splits(benchmark)
    adjudicator = get_user_model().objects.get(username=Role.ADJUDICATOR.value)
    return do_create_adjudication_campaign(
        benchmark,
        name="No-majority labels (demo)",
        assignees=[adjudicator],
        hide_model_names=True,
    )


def _simulated_splits(benchmark):
    """A simulated three-model labelling run whose models split on a few items."""
    template, _ = PromptTemplate.objects.get_or_create(
        name="labelling-simulated-demo",
        version=1,
        defaults={
            "purpose": PromptTemplate.Purpose.LABELLING,
            "text": "Simulated (demo): no prompt was sent.",
            "note": "Simulated (demo)",
        },
    )
    run = LabellingRun.objects.create(
        benchmark=benchmark,
        template=template,
        origin=LabellingRun.Origin.SIMULATED,
        status=LabellingRun.Status.COMPLETE,
    )
    endpoints = [
        Endpoint.objects.get_or_create(
            name=name,
            defaults={
                "base_url": "http://127.0.0.1:9/v1",
                "model": f"simulated/{name}",
                "api_key_env": "ASSAY_SIMULATED_NO_KEY",
                "is_active": False,
            },
        )[0]
        for name in SIMULATED_ANNOTATORS
    ]
    run.annotators.set(endpoints)
    rng = random.Random(SEED)
    items = list(Item.objects.filter(benchmark=benchmark).order_by("external_id"))
    for dimension in LabelDimension.objects.filter(benchmark=benchmark):
        labels = list(Label.objects.filter(dimension=dimension))
        for item in rng.sample(items, min(SPLIT_ITEMS // 2, len(items))):
            chosen = rng.sample(labels, 3)
            for endpoint, label in zip(endpoints, chosen, strict=True):
                AnnotatorLabel.objects.create(
                    run=run,
                    item=item,
                    annotator=endpoint,
                    dimension=dimension,
                    label=label,
                    rationale=f"Simulated (demo): the question is mainly about "
                    f"{label.name.lower()} — {label.definition[:90]}",
                    status=AnnotatorLabel.Status.LABELLED,
                )
            LabelConsensus.objects.create(
                run=run,
                item=item,
                dimension=dimension,
                outcome=LabelConsensus.Outcome.NONE,
                votes={label.code: 1 for label in chosen},
                annotator_count=3,
            )
