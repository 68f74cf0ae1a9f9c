<<<<<<< HEAD
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
=======
"""Simulated human calibration for the demo benchmark (seeded, marked simulated).

`seed(benchmark)` draws a stratified sample of the simulated runs' answered responses
(the judging demo seeder's runs, scored by three judges and an SV judge) and records
two simulated experts' grades on it: 0–3 scores and safe / violating, close to the
judges but not identical, the second expert overlapping on a third of the sample.
That gives the calibration and SV-validation reports content without anyone grading.
"""

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from benchmark.actions import ensure_role_groups
from benchmark.roles import Role
from judging.models import Judgment

from .actions import grading_candidates
from .models import Assignment, Campaign, GradingLabel, Task
from .sampling import stratified_sample

SEED = 1971
SAMPLE_SIZE = 60
CAMPAIGN_NAME = "Judge calibration sample (simulated experts)"
EXPERTS = ("sim-expert-1", "sim-expert-2")


def seed(benchmark) -> None:
    """Add the simulated calibration campaign; does nothing if it exists already or
    there are no judged responses to sample."""
    if Campaign.objects.filter(benchmark=benchmark, name=CAMPAIGN_NAME).exists():
        return
    rows, strata = grading_candidates(benchmark)
    if not rows:
        return
    picked = stratified_sample(strata, min(SAMPLE_SIZE, len(rows)), SEED)
    response_ids = [rows[i][0] for i in picked]
    item_ids = [rows[i][1] for i in picked]
    with transaction.atomic():
        _seed_campaign(benchmark, response_ids, item_ids)


def _simulated_expert(username: str):
    """An expert account nobody can log in as: it only carries simulated labels."""
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        user.groups.set([ensure_role_groups()[Role.EXPERT]])
    return user


def _judge_values(response_ids, kind, field):
    values: dict[int, list] = {}
    for response_id, value in Judgment.objects.filter(
        response_id__in=response_ids,
        kind=kind,
        status=Judgment.Status.DONE,
        **{f"{field}__isnull": False},
    ).values_list("response_id", field):
        values.setdefault(response_id, []).append(value)
    return values


def _seed_campaign(benchmark, response_ids, item_ids) -> None:
    rng = np.random.default_rng(SEED)
    n = len(response_ids)
    rubric = _judge_values(response_ids, Judgment.Kind.RUBRIC, "score")
    safety = _judge_values(response_ids, Judgment.Kind.SAFETY, "safety_violation")
    median = np.array(
        [np.median(rubric[r]) if r in rubric else 3 for r in response_ids]
    )
    flagged = np.array([any(safety.get(r, [False])) for r in response_ids])

    experts = [_simulated_expert(name) for name in EXPERTS]
    campaign = Campaign.objects.create(
        benchmark=benchmark,
        name=CAMPAIGN_NAME,
        kind=Campaign.Kind.GRADING,
        ask_safety=True,
        overlap=2,
        sample_size=n,
        sample_seed=SEED,
        status=Campaign.Status.CLOSED,
    )
    campaign.assignees.set(experts)
    overlap = np.arange(n) < n // 3
    tasks = Task.objects.bulk_create(
        Task(
            campaign=campaign,
            item_id=item_id,
            position=position,
            response_id=response_id,
            label_count=2 if overlap[position] else 1,
        )
        for position, (response_id, item_id) in enumerate(
            zip(response_ids, item_ids, strict=True)
        )
    )
    now = timezone.now()
    labels, assignments = [], []
    for e, expert in enumerate(experts):
        # Experts agree with the judges' median most of the time, off by one (rarely
        # two) otherwise, and overturn about one SV verdict in twelve.
        step = rng.choice([-2, -1, 1], size=n, p=[0.15, 0.6, 0.25])
        moved = rng.random(n) < 0.18
        scores = np.clip(np.floor(median) + step * moved, 0, 3).astype(int)
        violating = flagged ^ (rng.random(n) < 0.08)
        for position, task in enumerate(tasks):
            if e == 1 and not overlap[position]:
                continue
            seconds = float(rng.uniform(40, 240))
            labels.append(
                GradingLabel(
                    task=task,
                    user=expert,
                    score=int(scores[position]),
                    safety_violation=bool(violating[position]),
                    seconds_spent=seconds,
                )
            )
            assignments.append(
                Assignment(
                    task=task,
                    user=expert,
                    campaign=campaign,
                    status=Assignment.Status.SUBMITTED,
                    claimed_at=now,
                    expires_at=now,
                    finished_at=now,
                )
            )
    GradingLabel.objects.bulk_create(labels)
    Assignment.objects.bulk_create(assignments)
>>>>>>> main
