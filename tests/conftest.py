"""Shared fixtures: personas (one user per role plus an outsider), a benchmark, a
real Celery worker process, and a headless chromium for browser tests."""

import os
import time
from functools import partial

import pytest
from django.test import Client
from django.utils import translation

from benchmark.actions import do_create_benchmark, do_create_user

PASSWORD = "correct-horse-battery"
PERSONAS = ("manager", "expert", "adjudicator", "reviewer")
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The production hasher spends ~1 s of CPU per password by design; tests create
    # users in almost every case and would spend most of their time hashing.
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture(autouse=True)
def interface_language_reset():
    # LocaleMiddleware activates a request's language in the thread that served it
    # and leaves it there: a test whose last request was in Chinese must not hand
    # Chinese to the next test's code outside a request.
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def empty_cache():
    # Cached counters are keyed by row ids, which a test database hands out again.
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def killable_worker(transactional_db):
    """A real Celery worker process, not yet started: the test starts it (after
    setting `env` if it must), may kill it and start it again. The broker is emptied
    first so that no earlier run's message reaches it."""
    from django.conf import settings

    from tests.judging.labelling_fixtures import Worker, clear_broker

    if not settings.CELERY_BROKER_URL.startswith("redis"):
        pytest.fail("The worker test needs CELERY_BROKER_URL=redis://…")
    clear_broker()
    worker = Worker()
    yield worker
    worker.kill()


@pytest.fixture
def running_worker(killable_worker):
    """A real Celery worker process, started."""
    killable_worker.start()
    return killable_worker


def make_personas():
    from django.contrib.auth import get_user_model

    users = {role: do_create_user(role, PASSWORD, role) for role in PERSONAS}
    users["outsider"] = get_user_model().objects.create_user(
        "outsider", password=PASSWORD
    )
    return users


@pytest.fixture
def personas(db):
    """Users named after their role, plus `outsider`, who holds no role."""
    return make_personas()


@pytest.fixture(scope="module")
def module_db(django_db_setup, django_db_blocker):
    """One transaction held open around a test module, rolled back after it, for
    module-scoped fixtures that build what hundreds of read-mostly cases share (the
    permission matrices): each test still runs in its own savepoint inside it, as
    with TestCase.setUpTestData. Only for modules whose tests all use `db` (a
    transactional test would empty the tables under it)."""
    from django.db import transaction
    from django.test import override_settings

    with django_db_blocker.unblock(), transaction.atomic():
        with override_settings(PASSWORD_HASHERS=FAST_HASHERS):
            yield
        transaction.set_rollback(True)


@pytest.fixture(scope="module")
def module_personas(module_db):
    """`personas`, made once for the module (see module_db)."""
    return make_personas()


@pytest.fixture(scope="module")
def module_benchmark(module_db):
    """`benchmark`, made once for the module (see module_db)."""
    return do_create_benchmark(name="Test bench", slug="test-bench")


@pytest.fixture
def client_for(personas):
    """client_for("expert") -> a test client logged in as that persona."""

    def make(name: str) -> Client:
        client = Client()
        client.force_login(personas[name])
        return client

    return make


@pytest.fixture
def benchmark(db):
    return do_create_benchmark(name="Test bench", slug="test-bench")


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    # Playwright's sync API runs an event loop in this thread; the Django ORM calls
    # made by the test body around it are still synchronous and safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test, so that `page` can tell whether the
    test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


class PageLog:
    """What the browser did during a test: requests with their answers and
    timings, console errors and uncaught script errors, printed when the test
    fails, so that a failure seen once on a loaded machine can be read."""

    def __init__(self, page):
        self.started = time.monotonic()
        self.lines: list[str] = []
        page.on("request", lambda r: self.add(f"→ {r.method} {r.url}"))
        page.on(
            "response",
            lambda r: self.add(f"← {r.status} {r.request.method} {r.url}"),
        )
        page.on(
            "requestfailed",
            lambda r: self.add(f"✗ {r.method} {r.url} {r.failure}"),
        )
        page.on("console", self.console)
        page.on("pageerror", lambda error: self.add(f"script error: {error}"))

    def console(self, message) -> None:
        if message.type in ("error", "warning"):
            self.add(f"console {message.type}: {message.text}")

    def add(self, line: str) -> None:
        self.lines.append(f"{time.monotonic() - self.started:8.3f}s {line}")


class BrowserPages:
    """The pages a test opens, each in a browser context of its own (a person of
    their own), with a `PageLog` each; when the test fails, every page's log is
    printed."""

    def __init__(self, browser, live_server):
        self.browser = browser
        self.base_url = live_server.url
        self.opened: list[tuple[object, PageLog]] = []

    def open(self, locale: str = "en-US"):
        context = self.browser.new_context(base_url=self.base_url, locale=locale)
        page = context.new_page()
        page.set_default_timeout(10_000)
        self.opened.append((page, PageLog(page)))
        return page

    def close(self, failed: bool) -> None:
        for number, (page, log) in enumerate(self.opened, start=1):
            if failed:
                print(f"Page {number}'s requests and errors during the test:")
                print("\n".join(log.lines))
            page.context.close()


@pytest.fixture
def browser_pages(request, browser, live_server):
    pages = BrowserPages(browser, live_server)
    yield pages
    report = getattr(request.node, "report_call", None)
    pages.close(failed=report is not None and report.failed)


@pytest.fixture
def page(browser_pages):
    return browser_pages.open()


def sign_in(page, name: str):
    """Sign `page` in as `name` through the real login form."""
    page.goto("/login/")
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login/" not in url)
    return page


@pytest.fixture
def login(page, personas):
    """login("expert") logs the browser page in through the real login form."""
    return partial(sign_in, page)


@pytest.fixture
def signed_in_page(browser_pages, personas):
    """signed_in_page("manager"): a second person's page, in a browser context of
    its own, signed in through the login form."""
    return lambda name: sign_in(browser_pages.open(), name)
