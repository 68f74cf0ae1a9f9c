"""axe-core on every page × every role (#30): with the demo loaded, each URL name of
tests/test_every_page.py that answers an HTML page is opened in chromium by each role
(and the sign-in page by nobody), axe-core runs on it once HTMX has settled, and no
moderate, serious or critical violation may be left (#30 asks for no serious or
critical one; the moderate ones are gated too, as none is left). Rule exceptions,
if any, are listed in docs/ACCESSIBILITY.md with their reasons."""

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from benchmark.roles import Role
from tests.annotation.test_browser import settled
from tests.test_every_page import ROWS, demo_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).with_name("axe.min.js")
BLOCKING = ("moderate", "serious", "critical")
# Pages not opened: signing out would end the role's session, and the OpenID Connect
# routes send the browser to a provider the tests do not run.
NOT_OPENED = {"logout", "oidc_authentication_init", "oidc_authentication_callback"}

NOT_A_PAGE = ("Download is starting", "ERR_HTTP_RESPONSE_CODE_FAILURE")

RUN_AXE = """async (blocking) => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations
    .filter(v => blocking.includes(v.impact))
    .map(v => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map(n => n.target.join(" ")),
    }));
}"""


def new_context(browser, live_server, user=None):
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    # An init script is injected by the browser, outside the page's CSP, which allows
    # scripts from Assay's own static files only.
    context.add_init_script(path=str(AXE))
    if user is not None:
        client = Client()
        client.force_login(user)
        session = client.cookies[settings.SESSION_COOKIE_NAME].value
        context.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": session,
                    "url": live_server.url,
                }
            ]
        )
    return context


class Tab:
    """One tab per role, kept from page to page; replaced after an empty error
    answer, as chromium's error page would interrupt the next navigation."""

    def __init__(self, context):
        self.context = context
        self.page = self._new_page()

    def _new_page(self):
        page = self.context.new_page()
        page.set_default_timeout(20_000)
        return page

    def open_settled(self, url):
        """The response, or None for a download or an empty error answer (a GET on
        a POST-only route); waits until a review screen has taken its task and
        HTMX has swapped it in."""
        try:
            response = self.page.goto(url)
        except PlaywrightError as error:
            if not any(sign in str(error) for sign in NOT_A_PAGE):
                raise
            self.page.close()
            self.page = self._new_page()
            return None
        expect(self.page.locator("[data-claim-form]")).to_have_count(0)
        settled(self.page)
        return response


def test_no_page_of_any_role_has_a_serious_axe_violation(browser, live_server):
    call_command("load_demo", allow_without_debug=True, verbosity=0)
    world = demo_world()
    urls = {
        name: reverse(name, kwargs=kwargs(world))
        for name, kwargs in ROWS.items()
        if name not in NOT_OPENED
    }
    assert Role.values[0] == Role.MANAGER
    found = []
    checked = set()
    statuses_checked = set()
    # Routes that answered no page of Assay's (a download, a GET on a POST-only
    # route, a 404 for the demo's missing ids) answer none to any role: the manager,
    # who goes first and may open everything, finds them for the others.
    not_pages = set()

    def check(tab, role, name, url):
        response = tab.open_settled(url)
        page = tab.page
        if response is None or not is_html(response) or response.status in (404, 405):
            not_pages.add(name)
        elif first_of_its_kind(response) and (role, page.url) not in checked:
            # A redirect may land on a page this role has already been checked on.
            checked.add((role, page.url))
            # Closed sections (the leaderboard's heatmaps) are checked open.
            page.evaluate(
                "document.querySelectorAll('details').forEach(d => d.open = true)"
            )
            settled(page)
            for violation in page.evaluate(RUN_AXE, list(BLOCKING)):
                found.append((role, name, url, violation))

    def is_html(response):
        return "text/html" in response.headers.get("content-type", "")

    def first_of_its_kind(response):
        # Error pages (Assay's 403) share one template each: checked once.
        if response.status < 400:
            return True
        if response.status in statuses_checked:
            return False
        statuses_checked.add(response.status)
        return True

    context = new_context(browser, live_server)
    tab = Tab(context)
    # The gate bites: an image without a text alternative is a critical violation.
    tab.page.set_content(
        "<!doctype html><html lang='en'><title>t</title><main><img src='data:,'></main>"
    )
    assert "image-alt" in [v["id"] for v in tab.page.evaluate(RUN_AXE, list(BLOCKING))]
    check(tab, "anonymous", "login", urls["login"])
    context.close()
    for role in Role.values:
        user = get_user_model().objects.get(username=role)
        context = new_context(browser, live_server, user)
        tab = Tab(context)
        for name, url in urls.items():
            if name not in not_pages:
                check(tab, role, name, url)
        context.close()

    assert checked, "no page was checked"
    report = [
        f"{role:<11} {name} ({url}): {v['impact']} {v['id']} — {v['help']}\n"
        + "\n".join(f"      {target}" for target in v["targets"][:5])
        for role, name, url, v in found
    ]
    assert not found, f"{len(found)} axe violations:\n" + "\n".join(report)
