"""What every LLM stage of construction records about its calls: why a call
left its unit pending, and the run's call counters."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from construction.models import StageRun
from judging.llm.models import LLMCall
from judging.runs.usage import usage_of


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
