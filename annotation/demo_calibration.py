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

from annotation.actions import grading_candidates
from annotation.models import Assignment, Campaign, GradingLabel, Task
from annotation.sampling import stratified_sample
from benchmark.actions import ensure_role_groups
from benchmark.roles import Role
from judging.evaluation.models import Judgment

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
