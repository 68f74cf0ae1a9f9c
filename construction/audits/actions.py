"""State changes of stage audits: a manager opens one on a stage × prompt
version (a seeded random sample of its decided, automated decisions, stored);
reviewers answer its items, append-only."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from benchmark.models import Benchmark
from construction.models import (
    AuditAnswer,
    AuditItem,
    Stage,
    StageAudit,
    StageDecision,
)
from construction.sampling import simple_sample
from reviewqueue import engine

MAX_SAMPLE = 5000
NOTE_MAX = 2000
# The stages whose decisions on candidates people check: generation makes the
# candidates, and a release and a forum item's expert verification are people's
# acts. QA extraction is audited: its rejections (no answer in the replies) are
# the model's reading of the post.
AUDITED_STAGES = [
    s
    for s in Stage.values
    if s not in (Stage.GENERATION, Stage.RELEASE, Stage.RELEASED, Stage.EXPERT)
]


def auditable(benchmark_id: int, stage: str, prompt_version: str):
    """The decisions an audit samples from, in a stable order: the stage's
    automated decisions at that version with a verdict (pending ones wait for a
    call or a person and say nothing of the stage's judgement yet)."""
    return (
        StageDecision.objects.filter(
            candidate__source__benchmark_id=benchmark_id,
            stage=stage,
            prompt_version=prompt_version,
            decided_by__isnull=True,
        )
        .exclude(outcome=StageDecision.Outcome.PENDING)
        .order_by("id")
    )


def check_open_audit(
    benchmark: Benchmark, stage: str, prompt_version: str, size: int, seed: int
) -> list[int]:
    """The ids of the decisions in the ledger to sample from."""
    if stage not in AUDITED_STAGES:
        raise ValidationError(_("Choose a stage that decides on candidates."))
    if not 1 <= size <= MAX_SAMPLE:
        raise ValidationError(
            _("The sample size must be between 1 and %(MAX_SAMPLE)s.")
            % {"MAX_SAMPLE": MAX_SAMPLE}
        )
    if seed < 0:
        raise ValidationError(_("The seed must not be negative."))
    population = list(
        auditable(benchmark.pk, stage, prompt_version).values_list("pk", flat=True)
    )
    if not population:
        raise ValidationError(
            _("No decided %(value)s decision at %(prompt_version)s to audit.")
            % {
                "value": Stage(stage).label.lower(),
                "prompt_version": repr(prompt_version),
            }
        )
    return population


@transaction.atomic
def do_open_audit(
    benchmark: Benchmark,
    stage: str,
    prompt_version: str,
    *,
    size: int,
    seed: int = 0,
    user=None,
) -> StageAudit:
    """A new audit holding a seeded random sample of min(size, population)
    decisions, in the drawn order. The same ledger, size and seed draw the same
    sample."""
    population = check_open_audit(benchmark, stage, prompt_version, size, seed)
    audit = StageAudit.objects.create(
        benchmark=benchmark,
        stage=stage,
        prompt_version=prompt_version,
        sample_size=size,
        seed=seed,
        population=len(population),
        created_by=user,
    )
    AuditItem.objects.bulk_create(
        AuditItem(audit=audit, decision_id=population[index], position=position)
        for position, index in enumerate(simple_sample(len(population), size, seed))
    )
    return audit


def check_answer(item: AuditItem, agrees, note: str) -> None:
    if agrees not in (True, False):
        raise ValidationError(_("Agree or disagree."))
    if len(note) > NOTE_MAX:
        raise ValidationError(
            _("The note is over %(NOTE_MAX)s characters.") % {"NOTE_MAX": NOTE_MAX}
        )


def audit_queue(audit_id: int) -> str:
    """The review queue of an audit's items (reviewqueue leases)."""
    return f"audit:{audit_id}"


@transaction.atomic
def do_answer(
    item: AuditItem,
    *,
    agrees: bool,
    note: str = "",
    user,
    corrects: int | None = None,
) -> AuditAnswer:
    """Record a reviewer's answer. Nothing is ever changed: answering again
    (from the history, `corrects` naming the answer shown) adds a row, and the
    reviewer's latest answer is the one that counts. The same answer sent twice
    otherwise (a double key press, a retried request) is stored once; an item
    another reviewer holds now is refused."""
    check_answer(item, agrees, note)
    item = AuditItem.objects.select_for_update().get(pk=item.pk)
    latest = item.answers.filter(reviewer=user).order_by("-id").first()
    repeated = latest is not None and (latest.agrees, latest.note) == (
        agrees,
        note.strip(),
    )
    if repeated and corrects != latest.pk:
        return latest
    engine.finish(audit_queue(item.audit_id), item.pk, user)
    return AuditAnswer.objects.create(
        item=item, reviewer=user, agrees=agrees, note=note.strip()
    )
