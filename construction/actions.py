"""State changes for benchmark construction.

`check_…` functions validate and raise ValidationError with a message for the user;
`do_…` functions write under `transaction.atomic` and queue Celery work on commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from assay.celery import enqueue
from benchmark.models import Benchmark
from construction.models import Source, Stage, StageRun
from construction.pipeline import STAGES, stages_run
from construction.sources import read_sources
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import placeholders
from judging.runs import lifecycle


@dataclass(frozen=True)
class SourceImport:
    added: int
    already_present: int  # in the benchmark before, or earlier in the same file

    def __str__(self):
        if not self.added:
            return (
                f"Nothing added: all {self.already_present} source(s) were already "
                "there."
            )
        kept = (
            f"; {self.already_present} already there, skipped"
            if self.already_present
            else ""
        )
        return f"{self.added} source(s) added{kept}."


@transaction.atomic
def do_import_sources(benchmark: Benchmark, data: bytes, filename: str):
    """Add the file's sources to the benchmark, all or nothing (ImportRejected
    with every problem by line and field); a source whose content hash the
    benchmark already holds is skipped, so importing a file again adds nothing."""
    records, problems = read_sources(data, filename)
    if problems:
        raise problems.rejection()
    known = set(
        Source.objects.filter(
            benchmark=benchmark,
            content_hash__in=[record.content_hash for record in records],
        ).values_list("content_hash", flat=True)
    )
    new = []
    for record in records:
        if record.content_hash in known:
            continue
        known.add(record.content_hash)
        new.append(
            Source(
                benchmark=benchmark,
                kind=record.kind,
                reference=record.reference,
                text=record.text,
                fields=record.fields,
                content_hash=record.content_hash,
            )
        )
    # ignore_conflicts: an import of the same file racing this one adds each
    # source once.
    Source.objects.bulk_create(new, ignore_conflicts=True)
    return SourceImport(added=len(new), already_present=len(records) - len(new))


# -- stage runs ----------------------------------------------------------------------

LLM_STAGES = {
    Stage.GENERATION: (
        PromptTemplate.Purpose.GENERATION,
        {"count", "source_text"},
    ),
    Stage.QUALITY: (
        PromptTemplate.Purpose.QUALITY_CHECK,
        {"question", "reference_answer", "knowledge_text"},
    ),
}
RUNNABLE_STAGES = (Stage.GENERATION, Stage.DEDUP, Stage.QUALITY)


def check_start_stage(
    benchmark: Benchmark,
    stage: str,
    *,
    endpoint: Endpoint | None,
    template: PromptTemplate | None,
) -> None:
    if stage not in RUNNABLE_STAGES:
        raise ValidationError(f"The {stage} stage cannot be run yet.")
    if stage == Stage.GENERATION and not benchmark.sources.exists():
        raise ValidationError(f"{benchmark} has no sources: import some first.")
    # A candidate enters a stage only after the earlier stages decided on it.
    ran = stages_run(benchmark.pk)
    earlier = RUNNABLE_STAGES[: RUNNABLE_STAGES.index(stage)]
    missing_stages = [s for s in earlier if s not in ran]
    if missing_stages:
        raise ValidationError(
            f"Run the {Stage(missing_stages[0]).label.lower()} stage first."
        )
    if stage in LLM_STAGES:
        purpose, needed = LLM_STAGES[stage]
        if endpoint is None or not endpoint.is_active:
            raise ValidationError("Choose an active endpoint.")
        if template is None or template.purpose != purpose:
            raise ValidationError(f"Choose a {purpose.label} prompt.")
        missing = needed - set(placeholders(template.text + template.system_text))
        if missing:
            raise ValidationError(
                f"{template} lacks the placeholders: "
                + ", ".join("{{" + name + "}}" for name in sorted(missing))
            )


@transaction.atomic
def do_start_stage(
    benchmark: Benchmark,
    stage: str,
    *,
    endpoint: Endpoint | None = None,
    template: PromptTemplate | None = None,
    source_kind: str = "",
    questions_per_source: int = 3,
    threshold: float = 0.9,
    user=None,
) -> StageRun:
    check_start_stage(benchmark, stage, endpoint=endpoint, template=template)
    if not 1 <= questions_per_source <= 20:
        raise ValidationError("Questions per source must be between 1 and 20.")
    if not 0 < threshold <= 1:
        raise ValidationError("The dedup threshold must be above 0 and at most 1.")
    run = StageRun.objects.create(
        benchmark=benchmark,
        stage=stage,
        endpoint=endpoint if stage in LLM_STAGES else None,
        template=template if stage in LLM_STAGES else None,
        source_kind=source_kind if stage == Stage.GENERATION else "",
        questions_per_source=questions_per_source,
        threshold=round(threshold, 2),
        created_by=user,
    )
    enqueue(STAGES.start_task, run.pk)
    return run


def do_cancel_stage_run(run: StageRun) -> StageRun:
    """Stop a run: queued chunks do nothing and running ones stop within a second."""
    return lifecycle.cancel(run)


@transaction.atomic
def do_resume_stage_run(run: StageRun) -> StageRun:
    """Run a cancelled or ended run again: units without a result and pending
    ones are asked again; decisions already made are kept."""
    run = StageRun.objects.select_for_update().get(pk=run.pk)
    lifecycle.check_resumable(run)
    lifecycle.resume(STAGES, run)
    return run
