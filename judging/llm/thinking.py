"""How a request asks an endpoint for thinking or non-thinking mode (pure).

Providers switch thinking in different ways: a request field (`enable_thinking`,
`reasoning_effort`, `thinking: {"type": …}`), a model id of its own
(deepseek-reasoner beside deepseek-chat), or not at all. Each endpoint declares its
way (`Endpoint.thinking_switch`); this is the one place that reads the declaration,
so a run's mode is applied the same way wherever an answer is asked.
"""

from judging.llm.models import Endpoint

Switch = Endpoint.ThinkingSwitch


class ThinkingModeUnavailable(ValueError):
    """The endpoint cannot answer in the mode asked for; the message says why."""


def thinking_request(endpoint: Endpoint, thinking: bool) -> tuple[str, dict]:
    """(model id, request fields) that put `endpoint` in the asked mode.

    The fields go over the endpoint's extra body (they replace its fields of the
    same name). Raises ThinkingModeUnavailable for an endpoint without a switch
    asked for the mode it does not have.
    """
    switch = endpoint.thinking_switch
    if switch == Switch.PARAMETER:
        return endpoint.model, dict(
            endpoint.thinking_on if thinking else endpoint.thinking_off
        )
    if switch == Switch.MODEL:
        return (endpoint.thinking_model if thinking else endpoint.model), {}
    if thinking != (switch == Switch.ALWAYS):
        has, wanted, other = (
            ("never", "a thinking", "a non-thinking")
            if thinking
            else ("always", "a non-thinking", "a thinking")
        )
        raise ThinkingModeUnavailable(
            f"Endpoint {endpoint.name} {has} thinks (it declares no thinking "
            f"switch), so it cannot answer {wanted} run. Declare how its thinking "
            f"is switched on its endpoint page, or start {other} run."
        )
    return endpoint.model, {}
