"""The translation review screen part by part: source beside target for the
question, each option under its letter and each key point, the part's flag beside
it; an edit gives every part, and a bad one (a count other than the item's, an
empty part) is refused with the reason and changes nothing."""

import pytest
from django.urls import reverse

from annotation.models import ReviewDecision
from benchmark.models import Rendering
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
