import io

import pytest
from playwright.sync_api import expect

from benchmark.importing import do_import_items
from tests.benchmark.factories import make_sample_items
from tests.benchmark.importing_helpers import format_item, jsonl


@pytest.mark.browser
def test_expert_filters_items_and_reads_all_four_languages(
    transactional_db, benchmark, personas, login, page
):
    make_sample_items(benchmark, user=personas["manager"])
    login("expert")
    page.get_by_role("link", name="Browse Test bench").click()
    expect(page.locator("#result-total")).to_have_text("5")
    page.evaluate("window.loadedOnce = true")

    page.locator("[data-facet=capability] input[value=safety_compliance]").check()
    page.wait_for_url("**capability=safety_compliance**")
    expect(page.locator("#result-total")).to_have_text("1")
    expect(page.locator("table.items tbody tr")).to_have_count(1)

    page.get_by_label("Search").fill("порошок")
    expect(page.locator("#result-total")).to_have_text("0")
    page.get_by_label("Search").fill("Ex d IIB")
    expect(page.locator("#result-total")).to_have_text("1")
    assert page.evaluate("window.loadedOnce") is True, "filters reloaded the page"
    page.screenshot(path="/tmp/item_list.png", full_page=True)

    page.reload()
    expect(page.locator("#result-total")).to_have_text("1")
    expect(page.get_by_label("Search")).to_have_value("Ex d IIB")
    expect(
        page.locator("[data-facet=capability] input[value=safety_compliance]")
    ).to_be_checked()

    page.get_by_role("link", name="IB-0003").click()
    expect(page.get_by_role("heading", name="IB-0003")).to_be_visible()
    for language, text in [
        ("zh", "防爆标志 Ex d IIB T4 Gb 中 T4 对设备最高表面温度的要求是什么？"),
        ("en", "what does T4 require of the maximum surface temperature?"),
        ("ru", "Что требует температурный класс T4 в маркировке взрывозащиты"),
        ("vi", "cấp nhiệt độ T4 yêu cầu gì về nhiệt độ bề mặt tối đa?"),
    ]:
        expect(page.locator(f"article[data-language={language}]")).to_contain_text(text)
    page.screenshot(path="/tmp/item_detail.png", full_page=True)


@pytest.mark.browser
def test_expert_finds_a_multiple_choice_item_and_sees_its_correct_option(
    transactional_db, benchmark, personas, login, page
):
    lines = [format_item("MC-1", "multiple_choice"), format_item("OPEN-1", "open")]
    do_import_items(io.BytesIO(jsonl(lines)), slug=benchmark.slug)
    login("expert")
    page.get_by_role("link", name="Browse Test bench").click()
    expect(page.locator("#result-total")).to_have_text("2")

    page.locator("[data-facet=format] input[value=multiple_choice]").check()
    page.wait_for_url("**format=multiple_choice**")
    expect(page.locator("#result-total")).to_have_text("1")
    page.get_by_role("link", name="MC-1").click()

    expect(page.locator("#item-format")).to_have_text("Multiple choice · correct: B")
    english = page.locator("article[data-language=en]")
    expect(english.locator("li.correct")).to_have_count(1)
    expect(english.locator("li.correct")).to_contain_text("Class 8.8")
    expect(english.locator("li.correct .badge")).to_have_text("correct")
    expect(english.locator("li[data-option]")).to_have_count(4)
    page.screenshot(path="/tmp/item_mc.png", full_page=True)
