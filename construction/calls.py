"""What every LLM stage of construction records about its calls: why a call
left its unit pending, and the run's call counters."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from construction.models import StageRun
from judging.llm.models import LLMCall


def pending_reason(call: LLMCall) -> str:
    if call.status == LLMCall.Status.FAILED:
        return call.error or "The call failed."
    last = call.parse_errors[-1] if call.parse_errors else {}
    why = last.get("error", "") if isinstance(last, dict) else str(last)
    return f"Unparseable reply: {why}".strip()


def count_calls(run_id: int, outcomes) -> None:
    fresh = [outcome.call for outcome in outcomes if not outcome.cached]
    StageRun.objects.filter(pk=run_id).update(
        cached_calls=F("cached_calls") + len(outcomes) - len(fresh),
        input_tokens=F("input_tokens") + sum(call.input_tokens for call in fresh),
        output_tokens=F("output_tokens") + sum(call.output_tokens for call in fresh),
        cost=F("cost") + sum(call.cost or 0 for call in fresh),
        heartbeat_at=timezone.now(),
    )
