"""A simulated three-model labelling run for the demo benchmark (seeded, marked
simulated), so the consensus report and the adjudication queue have content without
any API key.

Three annotator endpoints named after the paper's (Gemini 3.1 Pro, Qwen3-Max, Claude
Opus 4.6; inactive, no key) label every item. Outcomes follow the paper's Table 3
shares (industry 69.0 / 27.2 / 3.9 %, capability 64.5 / 32.2 / 3.3 % full / majority
/ none), with at least two no-majority items per dimension; agreeing annotators give
the item's imported label, dissenters a different one. Consensus rows are computed
by the real code path; a simulated run never changes final labels.
"""

import numpy as np
from django.db import transaction
from django.utils import timezone

from benchmark.models import FinalLabel
from judging.labelling.actions import do_apply_consensus
from judging.labelling.models import AnnotatorLabel, LabellingRun
from judging.labelling.runs import run_dimensions, select_items
from judging.llm.models import Endpoint
from judging.llm.prompts import default_template

SEED = 20250503
MIN_NONE = 2
ANNOTATORS = (
    (
        "gemini-3-1-pro",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        "gemini-3.1-pro",
        "GEMINI_API_KEY",
    ),
    (
        "qwen3-max",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "qwen3-max",
        "DASHSCOPE_API_KEY",
    ),
    (
        "claude-opus-4-6",
        "https://api.anthropic.com/v1/",
        "claude-opus-4-6",
        "ANTHROPIC_API_KEY",
    ),
)
# Paper Table 3: shares of full agreement and majority; the rest has no majority.
TABLE_3 = {"industry": (0.690, 0.272), "capability": (0.645, 0.322)}
DEFAULT_SHARES = (0.67, 0.30)


def outcome_plan(units: int, shares: tuple[float, float], rng) -> np.ndarray:
    """0 full / 1 majority / 2 none per unit, in the given shares, shuffled."""
    none = max(MIN_NONE, round(units * (1 - sum(shares)))) if units >= 4 else 0
    majority = min(round(units * shares[1]), units - none)
    plan = np.array([0] * (units - majority - none) + [1] * majority + [2] * none)
    rng.shuffle(plan)
    return plan


def simulated_labels(truth: int, outcome: int, n_labels: int, rng) -> list[int]:
    """Three annotators' label indices for one unit with the planned outcome."""
    others = [index for index in range(n_labels) if index != truth]
    if outcome == 0:
        return [truth] * 3
    if outcome == 1:
        labels = [truth] * 3
        labels[rng.integers(3)] = int(rng.choice(others))
        return labels
    return [truth, *(int(x) for x in rng.choice(others, size=2, replace=False))]


def annotator_endpoints() -> list[Endpoint]:
    endpoints = []
    for name, base_url, model, key_env in ANNOTATORS:
        endpoint, _ = Endpoint.objects.get_or_create(
            name=name,
            defaults={
                "base_url": base_url,
                "model": model,
                "api_key_env": key_env,
                "is_active": False,
                "temperature": 0.0,
            },
        )
        endpoints.append(endpoint)
    return endpoints


@transaction.atomic
def seed(benchmark) -> LabellingRun | None:
    """Add the simulated labelling run to `benchmark` once; returns it (or None when
    it already exists)."""
    if LabellingRun.objects.filter(
        benchmark=benchmark, origin=LabellingRun.Origin.SIMULATED
    ).exists():
        return None
    rng = np.random.default_rng(SEED)
    annotators = annotator_endpoints()
    now = timezone.now()
    run = LabellingRun.objects.create(
        benchmark=benchmark,
        template=default_template("labelling"),
        origin=LabellingRun.Origin.SIMULATED,
        status=LabellingRun.Status.COMPLETE,
        started_at=now,
        finished_at=now,
        heartbeat_at=now,
    )
    run.annotators.set(annotators)
    items = list(select_items(run))
    finals = {
        (final.item_id, final.dimension_id): final.label_id
        for final in FinalLabel.objects.filter(item__in=items)
    }
    rows = []
    for dimension in run_dimensions(run):
        labels = list(dimension.labels.all())
        position = {label.pk: index for index, label in enumerate(labels)}
        plan = outcome_plan(
            len(items), TABLE_3.get(dimension.code, DEFAULT_SHARES), rng
        )
        for item, outcome in zip(items, plan, strict=True):
            truth = position.get(
                finals.get((item.pk, dimension.pk)), int(rng.integers(len(labels)))
            )
            chosen = simulated_labels(truth, int(outcome), len(labels), rng)
            for annotator, index in zip(annotators, chosen, strict=True):
                label = labels[index]
                rows.append(
                    AnnotatorLabel(
                        run=run,
                        item=item,
                        annotator=annotator,
                        dimension=dimension,
                        label=label,
                        rationale=f"Simulated: reads as {label.name}.",
                        status=AnnotatorLabel.Status.LABELLED,
                    )
                )
    AnnotatorLabel.objects.bulk_create(rows)
    calls = len(items) * len(annotators)
    run.total_calls = run.done_calls = calls
    run.save(update_fields=["total_calls", "done_calls"])
    do_apply_consensus(run)
    return run
