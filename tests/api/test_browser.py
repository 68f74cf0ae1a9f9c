"""Browser: a reviewer makes a token on the API tokens page (its secret shown once),
and the docs page draws every route under the Content-Security-Policy."""

import pytest
from playwright.sync_api import expect

from api.models import ApiToken


@pytest.mark.browser
def test_tokens_page_and_docs(transactional_db, personas, login, page, live_server):
    blocked = []
    page.on(
        "console",
        lambda message: (
            blocked.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    login("reviewer")
    page.get_by_role("link", name="API", exact=True).click()
    page.get_by_label("Name").fill("my notebook")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("[data-token]")
    expect(secret).to_contain_text("assay_")
    page.screenshot(path="/tmp/api_tokens.png", full_page=True)
    # Reloading the "created" page makes no second token and hides the secret.
    page.reload()
    expect(page.locator("[data-token]")).to_have_count(0)
    assert ApiToken.objects.count() == 1
    page.goto(f"{live_server.url}/api/tokens/")
    expect(page.locator("[data-token]")).to_have_count(0)
    expect(page.get_by_text("my notebook")).to_be_visible()

    page.get_by_role("link", name="REST API").click()
    expect(page.get_by_text("/api/v1/benchmarks/{slug}/items/bulk")).to_be_visible()
    expect(page.get_by_text("/api/v1/endpoints")).to_be_visible()
    page.screenshot(path="/tmp/api_docs.png", full_page=True)
    assert blocked == []
