"""A failed submit is never silent (#18): the screen says what happened and what to
do, keeps the task, and sending again is safe."""

import pytest
from playwright.sync_api import expect

from annotation.actions import do_create_grading_campaign
from annotation.models import GradingLabel
from tests.annotation.factories import make_items, make_run
from tests.annotation.test_browser import settled, task_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def grading_page(benchmark, personas, login):
    items = make_items(benchmark, 4)
    make_run(benchmark, items)
    campaign = do_create_grading_campaign(
        benchmark, name="Calibration", size=4, seed=2, assignees=[personas["expert"]]
    )
    page = login("expert")
    page.goto(f"/annotation/campaigns/{campaign.pk}/grade/")
    expect(page.get_by_text("Model response")).to_be_visible()
    settled(page)
    return page


class FirstSubmit:
    """A route handler: the first submit goes to `handle`, everything else through."""

    def __init__(self, handle):
        self.handle = handle
        self.done = False

    def __call__(self, route):
        request = route.request
        if not self.done and "score=" in (request.post_data or ""):
            self.done = True
            self.handle(route)
        else:
            route.continue_()


def grade_with_enter(page, score: str):
    page.keyboard.press(score)
    page.keyboard.press("Enter")


def test_a_server_error_after_saving_is_shown_and_resending_counts_once(grading_page):
    page = grading_page
    problem = page.locator("#request-problem")
    first = task_id(page)

    def saved_then_failed(route):
        route.fetch()  # the server stores the grade …
        route.fulfill(status=500, body="Internal Server Error")  # … the answer is lost

    page.route("**/grade/", FirstSubmit(saved_then_failed))
    grade_with_enter(page, "2")
    expect(problem).to_be_visible()
    expect(problem).to_contain_text("error 500")
    expect(problem).to_contain_text("Sending the same thing again is safe")
    page.screenshot(path="/tmp/request-problem-500.png", full_page=True)
    assert task_id(page) == first
    assert GradingLabel.objects.filter(task_id=first).count() == 1

    page.unroute("**/grade/")
    page.keyboard.press("Enter")
    expect(page.locator("#task")).not_to_have_attribute("data-task", first)
    expect(problem).to_be_hidden()
    assert GradingLabel.objects.filter(task_id=first).count() == 1
    assert GradingLabel.objects.get(task_id=first).score == 2


def test_a_dropped_connection_is_shown_and_sending_again_saves(grading_page):
    page = grading_page
    problem = page.locator("#request-problem")
    first = task_id(page)
    page.route("**/grade/", FirstSubmit(lambda route: route.abort("failed")))
    grade_with_enter(page, "3")
    expect(problem).to_contain_text("connection to Assay was lost")
    page.screenshot(path="/tmp/request-problem-dropped.png", full_page=True)
    assert task_id(page) == first
    assert not GradingLabel.objects.exists()

    page.unroute("**/grade/")
    page.keyboard.press("Enter")
    expect(page.locator("#task")).not_to_have_attribute("data-task", first)
    expect(problem).to_be_hidden()
    assert list(GradingLabel.objects.values_list("task_id", "score")) == [
        (int(first), 3)
    ]


def test_a_submit_after_signing_out_says_so_and_keeps_the_screen(grading_page):
    page = grading_page
    first = task_id(page)
    page.context.clear_cookies(name="sessionid")  # the session ran out
    grade_with_enter(page, "1")
    expect(page.locator("#request-problem")).to_contain_text("You are signed out")
    expect(page.get_by_text("Model response")).to_be_visible()
    expect(page.locator("input[name=score][value='1']")).to_be_checked()
    assert task_id(page) == first
    assert not GradingLabel.objects.exists()
