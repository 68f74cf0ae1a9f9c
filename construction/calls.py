"""What every stage of construction records: its decisions on the stage ledger
(`record_decisions`), why a call left its unit pending, and the run's call
counters."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from construction.models import StageDecision, StageRun
from judging.llm.models import LLMCall
from judging.runs.usage import usage_of

# A decision is one per candidate × stage × prompt version; a later attempt's
# decision replaces a pending one whole (what it decided, why, and what it asked).
LEDGER_KEY = ["candidate", "stage", "prompt_version"]
DECIDED_FIELDS = ["outcome", "reason", "model", "evidence", "run", "call"]


def record_decisions(decisions: list[StageDecision]) -> None:
    """Write a stage's decisions on the ledger: the one upsert every stage uses."""
    StageDecision.objects.bulk_create(
        decisions,
        update_conflicts=True,
        unique_fields=LEDGER_KEY,
        update_fields=DECIDED_FIELDS,
    )


def pending_reason(call: LLMCall) -> str:
    if call.status == LLMCall.Status.FAILED:
        return call.error or "The call failed."
    last = call.parse_errors[-1] if call.parse_errors else {}
    why = last.get("error", "") if isinstance(last, dict) else str(last)
    return f"Unparseable reply: {why}".strip()


def count_calls(run_id: int, outcomes) -> None:
    cached = sum(outcome.cached for outcome in outcomes)
    StageRun.objects.filter(pk=run_id).update(
        cached_calls=F("cached_calls") + cached,
        **usage_of(outcomes).updates(),
        heartbeat_at=timezone.now(),
    )
