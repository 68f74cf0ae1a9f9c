"""One rule for what a batch of calls adds to its run: calls served from the
record cost nothing now, and keys that joined one call in flight count it once."""

from decimal import Decimal
from types import SimpleNamespace

from judging.runs.usage import usage_of


def outcome(pk, cached=False, tokens=(100, 20), cost="0.01"):
    call = SimpleNamespace(
        pk=pk, input_tokens=tokens[0], output_tokens=tokens[1], cost=Decimal(cost)
    )
    return SimpleNamespace(call=call, cached=cached)


def test_each_call_made_counts_once_and_recorded_ones_not_at_all():
    joined = outcome(1)
    usage = usage_of(
        [
            joined,
            outcome(1),  # another item's identical prompt, joined to call 1
            outcome(2, tokens=(50, 5), cost="0.002"),
            outcome(3, cached=True, cost="9"),  # served from the record
        ]
    )
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (2, 150, 25)
    assert usage.cost == Decimal("0.012")


def test_a_call_without_a_price_costs_nothing():
    free = outcome(4)
    free.call.cost = None
    assert usage_of([free]).cost == Decimal(0)
    assert usage_of([]).calls == 0
