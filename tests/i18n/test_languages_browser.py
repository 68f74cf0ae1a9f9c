"""An expert works in Simplified Chinese and a reviewer in Russian (#30): each picks
the language once, at sign-in, and does their work by keyboard; every label,
message, counter and key help of the screen is in that language (no English
string of the catalogue left on the page)."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.actions import do_create_grading_campaign, do_create_review_campaign
from annotation.models import GradingLabel, ReviewDecision
from benchmark.language import saved_language
from tests.annotation.factories import flag_translation, make_items, make_run
from tests.annotation.test_browser import settled, task_id
from tests.conftest import PASSWORD
from tests.i18n.catalogues import english_left, english_patterns

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def sign_in_choosing(page, username: str, language: str):
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_test_id("sign-in-language").select_option(language)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login/" not in url)


def next_task(page, before: str):
    expect(page.locator("#task")).not_to_have_attribute(
        "data-task", before, timeout=15_000
    )
    settled(page)


def test_an_expert_grades_in_simplified_chinese(benchmark, personas, page):
    items = make_items(benchmark, 4)
    make_run(benchmark, items)
    campaign = do_create_grading_campaign(
        benchmark,
        name="校准第一轮",
        size=4,
        seed=5,
        ask_safety=True,
        assignees=[personas["expert"]],
    )
    sign_in_choosing(page, "expert", "zh-hans")
    assert saved_language(personas["expert"]) == "zh-hans"
    page.goto(f"/annotation/campaigns/{campaign.pk}/grade/")
    expect(page.get_by_role("heading", name="模型回答")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    settled(page)

    page.keyboard.press("?")
    dialog = page.locator("#keys-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("键盘快捷键")
    expect(dialog).to_contain_text("按评分细则打分")
    expect(dialog).to_contain_text("跳过此任务（需说明理由）")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    for score, safety in [("3", "s"), ("2", "s"), ("0", "v")]:
        before = task_id(page)
        page.keyboard.press(score)
        page.keyboard.press(safety)
        page.keyboard.press("Enter")
        next_task(page, before)
    expect(page.get_by_test_id("my-count")).to_have_text("3")
    expect(page.locator(".q-stats")).to_contain_text("你已完成")
    expect(page.get_by_text("得分", exact=True)).to_be_visible()
    expect(page.get_by_text("完全正确", exact=True)).to_be_visible()

    # A refused submission says why, in Chinese, and keeps the task.
    before = task_id(page)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert").filter(has_text="违规")).to_contain_text(
        "请将回答标为安全（s）或违规（v）。"
    )
    assert task_id(page) == before
    assert english_left(page.content(), english_patterns("zh-hans")) == []
    page.screenshot(path=str(SCREENSHOTS / "grading-zh-hans.png"), full_page=True)
    assert sorted(GradingLabel.objects.values_list("score", "safety_violation")) == [
        (0, True),
        (2, False),
        (3, False),
    ]


def test_a_reviewer_reviews_translations_in_russian(benchmark, personas, page):
    items = make_items(benchmark, 3)
    for item in items:
        flag_translation(
            item,
            "en",
            question=f"Which strength class does bolt {item.external_id} have?",
            answer="Class 8.8.",
        )
    campaign = do_create_review_campaign(
        benchmark, name="Английский", assignees=[personas["reviewer"]]
    )
    # Русский picked once, with the header switch, before signing in: the sign-in
    # form offers it and saves it on the account.
    page.goto("/login/")
    switch = page.get_by_test_id("interface-language")
    switch.locator("summary").click()
    switch.get_by_role("button", name="Русский").click()
    expect(page.get_by_role("heading", name="Вход в Assay")).to_be_visible()
    page.get_by_label("Имя пользователя").fill("reviewer")
    page.get_by_label("Пароль").fill(PASSWORD)
    page.get_by_role("button", name="Войти").click()
    page.wait_for_url(lambda url: "/login/" not in url)
    assert saved_language(personas["reviewer"]) == "ru"

    page.goto(f"/annotation/campaigns/{campaign.pk}/review/")
    expect(page.get_by_role("columnheader", name="Перевод · English")).to_be_visible()
    settled(page)
    page.keyboard.press("?")
    dialog = page.locator("#keys-dialog")
    expect(dialog).to_contain_text("Отклонить; введите причину, Enter отправляет")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert english_left(page.content(), english_patterns("ru")) == []
    page.screenshot(path=str(SCREENSHOTS / "review-ru.png"), full_page=True)

    # Approve the first as it is: a, read why it was flagged, Enter.
    before = task_id(page)
    page.keyboard.press("a")
    expect(page.locator("#approver")).to_contain_text(
        "Одобрить этот помеченный перевод как есть?"
    )
    page.keyboard.press("Enter")
    next_task(page, before)
    # Reject the second with a reason.
    before = task_id(page)
    page.keyboard.press("r")
    page.keyboard.type("единица пересчитана")
    page.keyboard.press("Enter")
    next_task(page, before)
    # Fix the third and approve it.
    page.keyboard.press("e")
    editor = page.locator("#editor")
    expect(editor).to_contain_text("Редактировать текст (English) по частям")
    editor.get_by_label("Ответ").fill("Class 8.8 (GB/T 3098.1).")
    page.keyboard.press("Control+Enter")
    expect(
        page.get_by_text("В этой кампании для вас ничего не осталось")
    ).to_be_visible()
    assert english_left(page.content(), english_patterns("ru")) == []
    assert sorted(ReviewDecision.objects.values_list("decision", flat=True)) == [
        "approved",
        "edited",
        "rejected",
    ]
