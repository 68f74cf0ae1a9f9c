"""A small ledger without a worker: sources, candidates and their decisions."""

from construction.models import Candidate, Source, StageDecision
from construction.sources import content_hash


def make_source(benchmark, kind="gbt_standard", text="额定电压 250 V", label=""):
    return Source.objects.create(
        benchmark=benchmark,
        kind=kind,
        reference=f"ref {text[:10]}",
        text=text,
        fields={"label": label} if label else {},
        content_hash=content_hash(kind, text),
    )


def make_candidate(source, question, decisions=(), label=""):
    """`decisions`: (stage, outcome, reason) in order; generation passes first."""
    candidate = Candidate.objects.create(
        source=source,
        question=question,
        reference_answer=f"answer to {question}",
        knowledge_text=source.text,
        label=label,
    )
    for stage, outcome, reason in (("generation", "pass", ""), *decisions):
        StageDecision.objects.create(
            candidate=candidate,
            stage=stage,
            outcome=outcome,
            reason=reason,
            prompt_version=f"{stage}-test v1",
        )
    return candidate
