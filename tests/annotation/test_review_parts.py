"""The translation review screen part by part: source beside target for the
question, each option under its letter and each key point, the part's flag beside
it; an edit gives every part, and a bad one (a count other than the item's, an
empty part) is refused with the reason and changes nothing."""

import pytest
from django.urls import reverse

from annotation.actions import do_create_review_campaign
from annotation.models import ReviewDecision
from benchmark.actions import do_add_rendering_version
from benchmark.models import Item, Rendering
from judging.translation.parts import edit_problems, edited_parts
from tests.annotation.factories import HTMX, take_next_task
from tests.annotation.review_parts_fixtures import RUSSIAN_OPTIONS, flagged_russian_mc
from tests.annotation.test_screens import shown_task

pytestmark = pytest.mark.django_db


def test_edited_parts_are_read_in_letter_order_and_a_gap_is_an_empty_part():
    fields = {"option_C": " c ", "option_A": "a", "key_point_2": "two", "x": "y"}
    assert edited_parts(fields) == (["a", "", "c"], ["", "two"])
    assert edit_problems(
        ["a", "", "c"], [], expected_options=4, expected_key_points=0
    ) == [
        "The edit has 3 options; the item has 4.",
        "Empty: option B. Every part needs a text.",
    ]
    assert edit_problems(["a"], ["k"], expected_options=1, expected_key_points=1) == []


def _edit(task, options, **extra):
    return {
        "task": task,
        "decision": "edited",
        "question": "Какое номинальное напряжение кабеля 10 кВ?",
        **{
            f"option_{letter}": text
            for letter, text in zip("ABCDEFG", options, strict=False)
        },
        **extra,
    }


def test_the_screen_shows_each_part_with_its_flag_and_refuses_a_bad_edit(
    benchmark, personas, client_for
):
    item, campaign = flagged_russian_mc(benchmark, personas["reviewer"])
    client = client_for("reviewer")
    url = reverse("annotation:review", args=[campaign.pk])
    page = take_next_task(client, url)
    html = page.content.decode()
    for letter, text in zip("ABCD", RUSSIAN_OPTIONS, strict=True):
        assert f'data-testid="target-option_{letter}">' in html
        assert f'name="option_{letter}"' in html
        assert text in html
    # The flag sits in option C's row, named by what changed.
    row_c = html.split('data-part="option C"', 1)[1].split("</tr>", 1)[0]
    assert "not preserved: 10.9 → 109" in row_c
    assert 'data-part="answer"' not in html  # an MC item's answer is its key
    task = shown_task(page)
    versions = Rendering.objects.filter(item=item, language="ru").count()

    fixed = ["6 кВ", "10 кВ", "10,9 кВ", "35 кВ"]
    short = client.post(url, _edit(task, fixed[:3]), **HTMX)
    assert short.status_code == 400
    assert "The edit has 3 options; the item has 4." in short.content.decode()
    empty = client.post(url, _edit(task, ["6 кВ", " ", "10,9 кВ", "35 кВ"]), **HTMX)
    assert empty.status_code == 400
    assert "Empty: option B. Every part needs a text." in empty.content.decode()
    extra = client.post(url, _edit(task, fixed, key_point_1="лишнее"), **HTMX)
    assert "The edit has 1 key points; the item has 0." in extra.content.decode()
    assert Rendering.objects.filter(item=item, language="ru").count() == versions
    assert not ReviewDecision.objects.exists()

    client.post(url, _edit(task, fixed), **HTMX)
    current = Rendering.objects.get(item=item, language="ru", is_current=True)
    assert current.options == fixed
    assert (current.origin, current.review_status) == ("human_edited", "approved")
    assert ReviewDecision.objects.get().decision == "edited"


def test_a_short_answer_is_reviewed_and_edited_key_point_by_key_point(
    benchmark, personas, client_for
):
    item = Item.objects.create(
        benchmark=benchmark, external_id="SA-1", format=Item.Format.SHORT_ANSWER
    )
    source_points = ["完全防尘", "浸水1米", "持续30分钟"]
    do_add_rendering_version(
        item,
        "zh",
        question="IP67外壳的防护要求？",
        answer="防尘，可浸水1米30分钟。",
        key_points=source_points,
        origin=Rendering.Origin.SOURCE,
        review_status=Rendering.ReviewStatus.APPROVED,
    )
    # Imported without key points: the editor asks for all three.
    do_add_rendering_version(
        item,
        "en",
        question="What protection does an IP67 enclosure give?",
        answer="Dust-tight; immersion to 1 m for 30 min.",
        origin=Rendering.Origin.IMPORTED,
        review_status=Rendering.ReviewStatus.FLAGGED,
    )
    campaign = do_create_review_campaign(
        benchmark, name="English review", assignees=[personas["reviewer"]]
    )
    client = client_for("reviewer")
    url = reverse("annotation:review", args=[campaign.pk])
    page = take_next_task(client, url)
    html = page.content.decode()
    assert "key points: 3 in the source, 0 translated" in html
    for number, point in enumerate(source_points, start=1):
        assert f'data-testid="source-key_point_{number}">' in html and point in html
        assert f'name="key_point_{number}"' in html
    assert 'data-part="answer"' in html
    task = shown_task(page)
    edit = {
        "task": task,
        "decision": "edited",
        "question": "What protection does an IP67 enclosure give?",
        "answer": "",
        "key_point_1": "dust-tight",
        "key_point_2": "immersion to 1 m",
        "key_point_3": "for 30 min",
    }
    no_answer = client.post(url, edit, **HTMX)
    assert "The edited answer may not be empty." in no_answer.content.decode()
    client.post(url, {**edit, "answer": "Dust-tight; 1 m for 30 min."}, **HTMX)
    current = Rendering.objects.get(item=item, language="en", is_current=True)
    assert current.key_points == ["dust-tight", "immersion to 1 m", "for 30 min"]
    assert current.answer == "Dust-tight; 1 m for 30 min."
