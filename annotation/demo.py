"""Demo review work: one campaign per screen on the demo benchmark, with work in it.

- Expert calibration grading over a stratified sample of the simulated runs'
  responses (judging.demo.runs) for the `expert` demo user, with the SV
  question.
  (Simulated experts' grades for the reports come from annotation.demo_calibration.)
- Label adjudication over no-majority label consensus rows; when no labelling run has
  produced any, a small simulated three-model labelling run is added.
- Translation review over the renderings the simulated translation run flagged
  (this seeder opens that campaign, as a finished translation run would).

Everything is seeded and marked simulated; `seed` does nothing the second time.
Runs after judging.demo.runs and judging.translation.demo in DEMO_SEEDERS.
"""

import random

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.actions import (
    do_create_adjudication_campaign,
    do_create_grading_campaign,
    do_open_translation_review,
)
from annotation.models import Campaign
from benchmark.models import Item, Label, LabelDimension
from benchmark.roles import Role
from judging.evaluation.models import Response
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.llm.models import Endpoint, PromptTemplate

SEED = 20250101
SAMPLE_SIZE = 60
GRADING_NAME = "Expert calibration · simulated runs (demo)"
ADJUDICATION_NAME = "No-majority labels (demo)"
SIMULATED_ANNOTATORS = ("sim-annotator-a", "sim-annotator-b", "sim-annotator-c")
SPLIT_ITEMS = 12


def seed(benchmark) -> None:
    if Campaign.objects.filter(benchmark=benchmark, name=GRADING_NAME).exists():
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
        from judging.demo import runs as demo_runs

        demo_runs.seed(benchmark)


def _ensure_flagged_translations(benchmark):
    if not Campaign.objects.filter(
        benchmark=benchmark, kind=Campaign.Kind.TRANSLATION_REVIEW
    ).exists():
        from judging.translation import demo as demo_translation

        do_open_translation_review(demo_translation.seed(benchmark).pk)


def _grading_campaign(benchmark):
    expert = get_user_model().objects.get(username=Role.EXPERT.value)
    return do_create_grading_campaign(
        benchmark,
        name=GRADING_NAME,
        size=SAMPLE_SIZE,
        seed=SEED,
        ask_safety=True,
        assignees=[expert],
    )


def _adjudication_campaign(benchmark):
    if not LabelConsensus.objects.filter(
        run__benchmark=benchmark, outcome=LabelConsensus.Outcome.NONE
    ).exists():
        _simulated_splits(benchmark)
    adjudicator = get_user_model().objects.get(username=Role.ADJUDICATOR.value)
    return do_create_adjudication_campaign(
        benchmark,
        name=ADJUDICATION_NAME,
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
