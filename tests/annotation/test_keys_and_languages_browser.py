"""Keys that work are listed, the expert can read the item in its other languages,
the main menu stays on one line at 1366 px, and fresh labels read "just now" (#18)."""

import pytest
from playwright.sync_api import expect

from annotation.actions import do_create_grading_campaign
from benchmark.actions import do_add_rendering_version
from benchmark.models import Rendering
from tests.annotation.factories import make_items, make_run
from tests.annotation.test_browser import settled, task_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_expert_switches_language_and_finds_every_key_in_the_help(
    benchmark, personas, login
):
    items = make_items(benchmark, 3)
    for item in items:
        do_add_rendering_version(
            item,
            "en",
            question=f"{item.external_id}: what strength class is the bolt?",
            answer="Class 8.8.",
            origin=Rendering.Origin.MACHINE,
            review_status=Rendering.ReviewStatus.APPROVED,
        )
    make_run(benchmark, items)
    campaign = do_create_grading_campaign(
        benchmark, name="Languages", size=3, seed=1, assignees=[personas["expert"]]
    )
    page = login("expert")
    page.goto(f"/annotation/campaigns/{campaign.pk}/grade/")
    expect(page.get_by_test_id("question")).to_contain_text("螺栓")
    settled(page)

    page.keyboard.press("?")
    keys = page.locator("#keys-dialog")
    expect(keys).to_contain_text("Switch the question's language")
    expect(keys).to_contain_text("forward to the next one you did")
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()

    page.keyboard.press("l")
    english = page.locator("[data-lang=en]")
    expect(english).to_be_visible()
    expect(english).to_contain_text("what strength class is the bolt?")
    expect(english).to_contain_text("Class 8.8.")
    expect(page.locator("[data-lang=zh]")).to_be_hidden()
    page.screenshot(path="/tmp/grade-english.png", full_page=True)

    first = task_id(page)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#task")).not_to_have_attribute("data-task", first)
    settled(page)
    page.keyboard.press("Backspace")
    expect(page.locator("#task")).to_have_attribute("data-task", first)
    expect(page.locator(".q-revisit")).to_contain_text("(saved just now)")


@pytest.mark.parametrize("width", [1366, 1280])
def test_the_managers_menu_stays_on_one_line_and_whole(page, login, width):
    page.set_viewport_size({"width": width, "height": 768})
    login("manager")
    links = page.locator(".mainnav a")
    expect(links).to_have_count(11)
    tops = {round(box["y"]) for box in (link.bounding_box() for link in links.all())}
    assert len(tops) == 1, tops
    assert page.locator(".topbar").bounding_box()["height"] < 60
    nav = page.locator(".mainnav")
    assert nav.evaluate("nav => nav.scrollWidth <= nav.clientWidth"), "links cut off"
    page.screenshot(path=f"/tmp/menu-{width}.png")
