"""What an evaluation run will ask and roughly cost, shown on the start form before
*Start*: items × calls per item, and per stage the tokens a call used on average in
that endpoint's past calls of the same purpose, priced at the endpoint's rates."""

from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Avg, Count, Q
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark, Item, Rendering
from judging.evaluation.actions import (
    evaluation_items,
    panel_difficulty,
    panel_provenance,
)
from judging.evaluation.choices import CHOICE_FORMATS
from judging.llm.asking import (
    OptionsNotShown,
    RequestPreview,
    check_options_shown,
    choose_answer_prompts,
    request_previews,
)
from judging.llm.models import LLMCall, PromptTemplate

# Each item is asked once, and its answer judged once by each judge.
STAGES = [
    (_("Answer"), "tested", PromptTemplate.Purpose.ANSWERING),
    (_("Rubric judge"), "judge", PromptTemplate.Purpose.RUBRIC_JUDGING),
    (_("Safety-violation judge"), "sv_judge", PromptTemplate.Purpose.SAFETY_CHECK),
]
# A binary benchmark: each item asked once per trial; only short-answer and open
# items' answers go to the key-point judge (MC/TF answers are read by rules).
BINARY_STAGES = [
    (_("Answer"), "tested", PromptTemplate.Purpose.ANSWERING),
    (_("Key-point judge"), "judge", PromptTemplate.Purpose.KEYPOINT_JUDGING),
]


@dataclass
class StageEstimate:
    stage: str
    endpoint: str  # "" when none is chosen yet
    calls: int
    input_tokens: float | None  # per call, from past calls; None without history
    output_tokens: float | None
    history: int  # past successful calls the averages come from
    cost: Decimal | None  # None when tokens or prices are unknown
    why_unknown: str


@dataclass
class RunPreview:
    items: int
    without_rendering: int  # matching active items with no current rendering to ask
    unapproved: int  # items left out because their rendering is not approved yet
    language: str
    calls: int
    stages: list[StageEstimate]
    trials: int = 1
    requests: list[RequestPreview] = field(default_factory=list)
    # Why starting would be refused: MC items the answer prompt cannot show.
    options_problem: str = ""

    @property
    def cost(self) -> Decimal | None:
        costs = [stage.cost for stage in self.stages]
        return None if any(cost is None for cost in costs) else sum(costs)


def run_preview(
    benchmark,
    *,
    language: str,
    item_filter: dict,
    endpoints: dict,
    trials: int = 1,
    answer_template=None,
):
    """`endpoints`: stage key ("tested", "judge", "sv_judge") -> Endpoint or None."""
    asked = evaluation_items(benchmark, language, item_filter)
    template, by_kind = choose_answer_prompts(benchmark, language, answer_template)
    options_problem = ""
    try:
        check_options_shown(asked, template, by_kind)
    except OptionsNotShown as error:
        options_problem = str(error)
    items = len(asked)
    active = Item.objects.filter(benchmark=benchmark, status=Item.Status.ACTIVE)
    with_language = active.filter(
        renderings__language=language, renderings__is_current=True
    )
    narrowed = any(
        value for key, value in item_filter.items() if key != "include_unapproved"
    )
    without = 0 if narrowed else active.count() - with_language.count()
    unapproved = (
        0
        if narrowed or item_filter.get("include_unapproved")
        else Rendering.objects.filter(
            item__benchmark=benchmark,
            item__status=Item.Status.ACTIVE,
            language=language,
            is_current=True,
            review_status__in=[
                Rendering.ReviewStatus.PENDING,
                Rendering.ReviewStatus.FLAGGED,
            ],
        ).count()
    )
    if benchmark.scoring_scale == Benchmark.ScoringScale.BINARY:
        judged = (
            Item.objects.filter(pk__in=[item_id for item_id, _ in asked])
            .exclude(format__in=CHOICE_FORMATS)
            .count()
        )
        calls = {"tested": items * trials, "judge": judged * trials}
        stages = [
            _estimate(stage, endpoints.get(key), purpose, calls[key])
            for stage, key, purpose in BINARY_STAGES
        ]
    else:
        stages = [
            _estimate(stage, endpoints.get(key), purpose, items)
            for stage, key, purpose in STAGES
        ]
    calls = sum(stage.calls for stage in stages)
    return RunPreview(
        items,
        without,
        unapproved,
        language,
        calls,
        stages,
        trials,
        requests=request_previews(asked, template, by_kind),
        options_problem=options_problem,
    )


def _estimate(stage: str, endpoint, purpose: str, calls: int) -> StageEstimate:
    if endpoint is None:
        return StageEstimate(
            stage, "", calls, None, None, 0, None, "no endpoint chosen"
        )
    past = LLMCall.objects.filter(
        Q(endpoint=endpoint) & Q(purpose=purpose) & Q(status=LLMCall.Status.OK)
    ).aggregate(
        input_tokens=Avg("input_tokens"),
        output_tokens=Avg("output_tokens"),
        history=Count("id"),
    )
    estimate = StageEstimate(
        stage,
        endpoint.name,
        calls,
        past["input_tokens"],
        past["output_tokens"],
        past["history"],
        None,
        "",
    )
    if endpoint.price_input_per_1k is None or endpoint.price_output_per_1k is None:
        estimate.why_unknown = "the endpoint has no prices"
    elif not past["history"]:
        estimate.why_unknown = "no past calls of this endpoint to size them by"
    else:
        per_call = (
            Decimal(past["input_tokens"]) * endpoint.price_input_per_1k
            + Decimal(past["output_tokens"]) * endpoint.price_output_per_1k
        ) / 1000
        estimate.cost = (per_call * calls).quantize(Decimal("0.01"))
    return estimate


@dataclass
class DifficultyPreview:
    runs: list
    tiers: list[tuple[str, int, int]]  # (tier, items now, items after)
    changed: int  # items whose tier changes
    restamped: int  # items keeping their tier, now with the panel as provenance
    replaced_imported: int  # changed items whose difficulty was imported

    @property
    def written(self) -> int:
        return self.changed + self.restamped


def difficulty_preview(benchmark, runs) -> DifficultyPreview:
    """What writing the panel's terciles would change, before anything is written."""
    proposed = panel_difficulty(benchmark, runs)
    provenance = panel_provenance(runs)
    now = {
        pk: (tier, source)
        for pk, tier, source in Item.objects.filter(
            benchmark=benchmark, pk__in=list(proposed)
        ).values_list("pk", "difficulty", "difficulty_provenance")
    }
    changed = [pk for pk, tier in proposed.items() if now[pk][0] != tier]
    restamped = sum(
        1
        for pk, tier in proposed.items()
        if now[pk][0] == tier and now[pk][1] != provenance
    )
    names = [value for value, _ in Item.Difficulty.choices if value]
    tiers = [
        (
            name,
            sum(1 for tier, _ in now.values() if tier == name),
            sum(1 for tier in proposed.values() if tier == name),
        )
        for name in names
    ]
    unset = sum(1 for tier, _ in now.values() if not tier)
    if unset:
        tiers.append(("not set", unset, 0))
    return DifficultyPreview(
        runs=list(runs),
        tiers=tiers,
        changed=len(changed),
        restamped=restamped,
        replaced_imported=sum(
            1 for pk in changed if now[pk][1] == "imported" and now[pk][0]
        ),
    )
