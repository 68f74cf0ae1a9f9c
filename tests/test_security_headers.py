"""Every page carries the Content-Security-Policy, and Assay's own pages break none
of it (no inline script, no eval)."""

import pytest
from django.urls import reverse

from assay.middleware import CONTENT_SECURITY_POLICY
from tests.judging.factories import make_items, make_run


def test_every_response_carries_the_policy(client_for, benchmark):
    for url in ("/login/", reverse("benchmark:home")):
        response = client_for("manager").get(url)
        assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe-eval" not in CONTENT_SECURITY_POLICY


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_pages_run_under_the_policy_without_violations(page, login, benchmark):
    items = make_items(benchmark, 12)
    make_run(benchmark, items, [3, 2, 1, 0] * 3, [False] * 12, model="alpha")
    violations = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    login("manager")
    for url in (
        reverse("benchmark:home"),
        reverse("judging:leaderboard", args=[benchmark.slug]),
        reverse("judging:endpoints"),
        reverse("annotation:queues"),
    ):
        page.goto(url)
        page.wait_for_load_state("networkidle")
    assert violations == []
