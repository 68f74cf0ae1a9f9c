"""What the construction pages read: each stage's latest decision per candidate
counted by source kind and label (for construction.funnel) and the funnel report
built from them, the reject reasons, a stage run's progress, and the
post-processing flags waiting for review."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from benchmark.models import Item, Label
from benchmark.textdiff import diff_segments
from construction.dangling import Hit, segments
from construction.figures import funnel_figure
from construction.funnel import (
    ALL,
    NO_LABEL,
    Composition,
    FunnelRow,
    composition,
    funnel,
    funnel_cells,
    pivot,
    top_reasons,
)
from construction.models import (
    FORUM_STAGES,
    INDUSTRYBENCH_STAGES,
    Candidate,
    Generation,
    Source,
    Stage,
    StageDecision,
    StageRun,
)
from construction.pipeline import finished_units
from construction.postprocess import FLAGGED_FIELDS
from judging.runs.progress import run_timing

REJECTS_SHOWN = 50
LLM_STAGE_RUNS = (
    Stage.GENERATION,
    Stage.QUALITY,
    Stage.SEARCH,
    Stage.DEEP,
    Stage.EXTRACT_QA,
    Stage.QA_FILTER,
    Stage.CONVERT,
)


def pipeline_stages(benchmark_id: int) -> list[str]:
    """The stages of the benchmark's pipeline, in order: LPFQA's forum-to-item
    construction for a benchmark of forum posts, IndustryBench's otherwise."""
    forum = Source.objects.filter(
        benchmark_id=benchmark_id, kind=Source.Kind.FORUM_POST
    ).exists()
    return list(FORUM_STAGES if forum else INDUSTRYBENCH_STAGES)


def pipeline_kinds(benchmark_id: int) -> list[str]:
    """The source families the funnel breaks down by: those of its pipeline."""
    if pipeline_stages(benchmark_id) == FORUM_STAGES:
        return [Source.Kind.FORUM_POST]
    return [kind for kind in Source.Kind.values if kind != Source.Kind.FORUM_POST]


def latest_decisions(benchmark_id: int) -> list[tuple[str, str, str, str]]:
    """(stage, source kind, label, outcome) of each candidate's latest decision
    in each stage (over every prompt version)."""
    latest: dict[tuple[int, str], tuple[str, str, str]] = {}
    for candidate_id, stage, kind, label, outcome in (
        StageDecision.objects.filter(candidate__source__benchmark_id=benchmark_id)
        .order_by("id")
        .values_list(
            "candidate_id",
            "stage",
            "candidate__source__kind",
            "candidate__label",
            "outcome",
        )
    ):
        latest[candidate_id, stage] = (kind, label, outcome)
    return [
        (stage, kind, label, outcome)
        for (_, stage), (kind, label, outcome) in latest.items()
    ]


def decision_counts(benchmark_id: int) -> Counter:
    """(stage, source kind, outcome) → candidates whose latest decision in the
    stage that is."""
    return Counter(
        (stage, kind, outcome)
        for stage, kind, _, outcome in latest_decisions(benchmark_id)
    )


def funnel_rows(benchmark_id: int) -> list[FunnelRow]:
    return funnel(
        decision_counts(benchmark_id),
        pipeline_stages(benchmark_id),
        pipeline_kinds(benchmark_id),
    )


@dataclass(frozen=True)
class FunnelReport:
    """Everything the funnel report shows, read in three queries."""

    stages: list[tuple[str, str]]  # (code, label) in pipeline order
    kinds: list[tuple[str, str]]  # (code, label) of the source families
    labels: list[str]
    label_names: list[tuple[str, str]]  # (label, its name in the taxonomy or itself)
    by_kind: list[FunnelRow]
    by_label: list[FunnelRow]
    reasons: dict[str, list[tuple[str, int]]]  # stage code → top reasons
    released: Composition

    @property
    def overall(self) -> list[FunnelRow]:
        return [row for row in self.by_kind if row.group == ALL]

    def stage_rows(self, breakdown: str) -> list[tuple[str, bool, list[FunnelRow]]]:
        """(stage label, ran, its rows per group without the ALL row) per stage:
        `breakdown` is "overall", "kind" or "label"."""
        rows = {"overall": self.by_kind, "kind": self.by_kind, "label": self.by_label}
        return [
            (label, ran, group[-1:] if breakdown == "overall" else group[:-1])
            for (_, label), (_, ran, group) in zip(
                self.stages, pivot(rows[breakdown]), strict=True
            )
        ]

    @property
    def overall_table(self):
        return self.stage_rows("overall")

    def group_rows(self, breakdown: str) -> list[tuple[str, list[FunnelRow]]]:
        """(group name, its row in each stage, in stage order) per group:
        `breakdown` is "kind" or "label"."""
        if breakdown == "kind":
            rows, groups = self.by_kind, self.kinds
        else:
            rows, groups = self.by_label, self.label_names
        per_stage = [group[:-1] for _, _, group in pivot(rows)]
        return [
            (name, [stage[index] for stage in per_stage])
            for index, (_, name) in enumerate(groups)
        ]

    @property
    def kind_table(self):
        return self.group_rows("kind")

    @property
    def label_table(self):
        return self.group_rows("label")

    @property
    def reason_table(self) -> list[tuple[str, str, list[tuple[str, int]]]]:
        """(stage, its label, its top reasons) per stage with rejects, in order."""
        return [
            (code, label, self.reasons[code])
            for code, label in self.stages
            if code in self.reasons
        ]

    def csv_rows(self) -> list[list]:
        """The funnel table, stage by stage: overall, by source kind, by label."""
        rows = []
        for overall, kinds, labels in zip(
            self.overall, pivot(self.by_kind), pivot(self.by_label), strict=True
        ):
            rows.append(funnel_cells(ALL, overall))
            rows += [funnel_cells("source_kind", row) for row in kinds[2][:-1]]
            rows += [funnel_cells("label", row) for row in labels[2][:-1]]
        return rows

    def figure(self):
        kind_rows = pivot(self.by_kind)
        # str(): matplotlib takes a lazy label for a sequence of labels.
        return funnel_figure(
            [str(label) for _, label in self.stages],
            [str(label) for _, label in self.kinds],
            [rows[-1].entered for _, _, rows in kind_rows],
            [[row.passed for row in rows[:-1]] for _, _, rows in kind_rows],
            [ran for _, ran, _ in kind_rows],
        )


def funnel_report(benchmark_id: int) -> FunnelReport:
    decided = latest_decisions(benchmark_id)
    labels = sorted({label or NO_LABEL for _, _, label, _ in decided})
    by_label = Counter(
        (stage, label or NO_LABEL, outcome) for stage, _, label, outcome in decided
    )
    rejects = list(
        StageDecision.objects.filter(
            candidate__source__benchmark_id=benchmark_id,
            outcome=StageDecision.Outcome.REJECT,
        ).values_list("stage", "reason")
    )
    released = list(
        Candidate.objects.filter(
            source__benchmark_id=benchmark_id, item__status=Item.Status.ACTIVE
        ).values_list("source__kind", "label")
    )
    names = dict(
        Label.objects.filter(
            dimension__benchmark_id=benchmark_id, code__in=labels
        ).values_list("code", "name")
    )
    stages = pipeline_stages(benchmark_id)
    kinds = pipeline_kinds(benchmark_id)
    return FunnelReport(
        stages=[(stage, Stage(stage).label) for stage in stages],
        kinds=[(kind, Source.Kind(kind).label) for kind in kinds],
        labels=labels,
        label_names=[(label, names.get(label, label)) for label in labels],
        by_kind=funnel(
            Counter((s, k, o) for s, k, _, o in decided),
            stages,
            kinds,
        ),
        by_label=funnel(by_label, stages, labels),
        reasons=top_reasons(
            [stage for stage, _ in rejects], [reason for _, reason in rejects]
        ),
        released=composition(
            # In the active language; str() because numpy cannot compare a lazy one.
            [str(Source.Kind(kind).label) for kind, _ in released],
            [names.get(label, label) for _, label in released],
            [str(Source.Kind(kind).label) for kind in kinds],
        ),
    )


def reject_reasons(
    benchmark_id: int,
) -> list[tuple[str, str, int, list[StageDecision]]]:
    """(stage, its label, rejects, the newest REJECTS_SHOWN) per stage with
    rejects."""
    decisions = StageDecision.objects.filter(
        candidate__source__benchmark_id=benchmark_id,
        outcome=StageDecision.Outcome.REJECT,
    )
    totals = Counter(decisions.values_list("stage", flat=True))
    shown = defaultdict(list)
    for stage in totals:
        shown[stage] = list(
            decisions.filter(stage=stage)
            .select_related("candidate")
            .order_by("-id")[:REJECTS_SHOWN]
        )
    return [
        (stage, Stage(stage).label, totals[stage], shown[stage])
        for stage in pipeline_stages(benchmark_id)
        if stage in totals
    ]


def refined_candidates(benchmark_id: int):
    """The refine decisions of deep verification, newest first: each candidate's
    page shows its answer's versions and what changed."""
    return (
        StageDecision.objects.filter(
            candidate__source__benchmark_id=benchmark_id,
            stage=Stage.DEEP,
            outcome=StageDecision.Outcome.REFINE,
        )
        .select_related("candidate")
        .order_by("-id")
    )


def pending_generations(benchmark_id: int):
    return Generation.objects.filter(
        source__benchmark_id=benchmark_id, status=Generation.Status.PENDING
    ).select_related("source")


def run_progress(run: StageRun) -> dict:
    finished, pending = finished_units(run)
    # Units served from the call record cost nothing and say nothing of the pace.
    made = finished - run.cached_calls if run.stage in LLM_STAGE_RUNS else 0
    return {
        "total": run.total_units,
        "finished": finished,
        "pending": pending,
        "open": max(run.total_units - finished, 0),
        **run_timing(
            run,
            remaining=max(run.total_units - finished, 0),
            finished=finished,
            calls_made=max(made, 0),
        ),
    }


def pending_flags(benchmark_id: int):
    """The dangling-reference flags waiting for a person."""
    return StageDecision.objects.filter(
        candidate__source__benchmark_id=benchmark_id,
        stage=Stage.DANGLING,
        outcome=StageDecision.Outcome.PENDING,
    )


def flag_view(benchmark_id: int, decision_id: int) -> dict | None:
    """A flag as the review screen shows it: its question and answer cut at the
    matched phrases for highlighting, and how many wait. None when it is not a
    flag of the benchmark."""
    flags = pending_flags(benchmark_id)
    decision = (
        StageDecision.objects.filter(
            pk=decision_id,
            stage=Stage.DANGLING,
            candidate__source__benchmark_id=benchmark_id,
        )
        .select_related("candidate__source", "decided_by")
        .first()
    )
    if decision is None:
        return None
    found = decision.evidence.get("dangling", {})
    candidate = decision.candidate
    return {
        "decision": decision,
        "candidate": candidate,
        "waiting": flags.count(),
        **{
            field: segments(
                getattr(candidate, field),
                [Hit(*hit) for hit in found.get(field, [])],
            )
            for field in FLAGGED_FIELDS
        },
    }


def answer_history(candidate: Candidate) -> list[dict]:
    """The candidate's reference-answer versions, newest first, each refined one
    with what it changed from the version before and the decision that made it."""
    versions = list(
        candidate.answer_versions.select_related("decision").order_by("version")
    )
    rows = []
    for before, version in zip([None, *versions], versions, strict=False):
        rows.append(
            {
                "version": version,
                "diff": diff_segments(before.reference_answer, version.reference_answer)
                if before is not None
                else None,
            }
        )
    return rows[::-1]
