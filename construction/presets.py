"""Construction presets: the stage list a paper describes, in its order, with
the settings it fixes. The construction page shows the list with each step's
state, so a team reproducing the paper sees what is done and what comes next."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from construction.models import Stage
from construction.release import PAPER_RELEASE_SIZE, STRATA


@dataclass(frozen=True)
class Step:
    stage: str
    note: str
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ConstructionPreset:
    name: str
    label: str
    steps: tuple[Step, ...]

    @property
    def stages(self) -> list[str]:
        return [step.stage for step in self.steps]

    def settings(self, stage: str) -> dict:
        return next((s.settings for s in self.steps if s.stage == stage), {})


INDUSTRYBENCH = ConstructionPreset(
    name="industrybench",
    label=_("IndustryBench §3 (five stages, then release sample → checks → release)"),
    steps=(
        Step(
            Stage.GENERATION, _("Stage 1: questions and reference answers per source")
        ),
        Step(
            Stage.DEDUP,
            _("Stage 2: semantic dedup on embeddings, threshold from the sweep"),
            {"threshold": 0.50},
        ),
        Step(Stage.QUALITY, _("Stage 3: clarity, constraints, answerable, gradable")),
        Step(
            Stage.SEARCH,
            _("Stage 4: three queries, top five results each, a binary verdict"),
            {"queries": 3, "results_per_query": 5},
        ),
        Step(
            Stage.DEEP,
            _("Stage 5: per claim, new searches, thinking on: keep / refine / remove"),
            {"thinking": True},
        ),
        Step(
            Stage.RELEASE,
            format_lazy(
                _("Release sample from the verified pool, stratified by {strata}"),
                strata=" × ".join(STRATA),
            ),
            {"size": PAPER_RELEASE_SIZE, "strata": list(STRATA)},
        ),
        Step(Stage.EXACT, _("Exact dedup on the sample's questions")),
        Step(Stage.DANGLING, _("Dangling references flagged; people remove or keep")),
        Step(Stage.RELEASED, _("The released items")),
    ),
)

PRESETS = {preset.name: preset for preset in (INDUSTRYBENCH,)}


def preset_progress(preset: ConstructionPreset, ran: set[str]) -> list[dict]:
    """Each step with whether it has decided anything yet; the first step not
    done is `next`."""
    rows, next_marked = [], False
    for step in preset.steps:
        done = step.stage in ran
        is_next = not done and not next_marked
        next_marked = next_marked or is_next
        rows.append(
            {
                "step": step,
                "label": Stage(step.stage).label,
                "done": done,
                "next": is_next,
            }
        )
    return rows
