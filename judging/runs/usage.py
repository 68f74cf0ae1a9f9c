"""What a batch of calls adds to its run's tokens and cost — one rule for every run
kind: a call served from the record costs nothing now, and keys that joined a call
in flight share its record, so each call made is counted once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import F


@dataclass(frozen=True)
class Usage:
    calls: int
    input_tokens: int
    output_tokens: int
    cost: Decimal

    def updates(self) -> dict:
        """F-expressions for `Run.objects.filter(pk=…).update(**usage.updates())`:
        concurrent chunks add to the row without reading it."""
        return {
            "input_tokens": F("input_tokens") + self.input_tokens,
            "output_tokens": F("output_tokens") + self.output_tokens,
            "cost": F("cost") + self.cost,
        }


def usage_of(outcomes: Iterable) -> Usage:
    """The calls `outcomes` (gateway `CallOutcome`s) made, each once."""
    made = list({o.call.pk: o.call for o in outcomes if not o.cached}.values())
    return Usage(
        calls=len(made),
        input_tokens=sum(call.input_tokens for call in made),
        output_tokens=sum(call.output_tokens for call in made),
        cost=sum((call.cost or Decimal(0) for call in made), Decimal(0)),
    )
