"""The endpoint connection test, on a worker."""

import uuid

from celery import shared_task

from judging.llm.actions import do_record_endpoint_test
from judging.llm.gateway import LLMRequest, run_one
from judging.llm.models import Endpoint, LLMCall

CONNECTION_TEST_PROMPT = "Reply with the single word OK."


@shared_task(name="judging.tasks.test_endpoint")
def test_endpoint(endpoint_id: int) -> None:
    """One tiny call; its result (or the provider's error) is shown on the page."""
    endpoint = Endpoint.objects.get(pk=endpoint_id)
    call = run_one(
        LLMRequest(
            key=endpoint.pk,
            endpoint=endpoint,
            messages=[{"role": "user", "content": CONNECTION_TEST_PROMPT}],
            purpose="connection_test",
        ),
        # A scope of its own: a test must reach the provider, never the record.
        scope=f"connection-test-{uuid.uuid4().hex}",
    )
    if call.status == LLMCall.Status.OK:
        reply = call.raw_response.strip()[:80] or "(empty reply)"
        message = f"{endpoint.model} replied {reply!r} in {call.latency_ms} ms."
        do_record_endpoint_test(endpoint, ok=True, message=message)
    else:
        do_record_endpoint_test(endpoint, ok=False, message=call.error)
