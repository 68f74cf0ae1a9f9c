"""Item formats on the item page and in the item browser."""

import io
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from benchmark.importing import do_import_items
from benchmark.models import Item
from tests.benchmark.importing_helpers import OPTIONS, format_item, jsonl

FORMATS = ["open", "multiple_choice", "true_false", "short_answer"]


@pytest.fixture
def items(benchmark):
    """One item of each format: F-0 open … F-3 short answer."""
    lines = [
        format_item(f"F-{n}", item_format) for n, item_format in enumerate(FORMATS)
    ]
    do_import_items(io.BytesIO(jsonl(lines)), slug=benchmark.slug)
    return {item.format: item for item in Item.objects.filter(benchmark=benchmark)}


@pytest.fixture
def expert(client_for):
    return client_for("expert")


def item_page(client, item):
    response = client.get(
        reverse("benchmark:item_detail", args=[item.benchmark.slug, item.pk])
    )
    assert response.status_code == 200
    return response


def list_page(client, benchmark, **params):
    url = reverse("benchmark:item_list", args=[benchmark.slug])
    return client.get(f"{url}?{urlencode(params)}")


def test_item_page_marks_the_correct_option_in_each_language(expert, items):
    response = item_page(expert, items["multiple_choice"])

    content = response.content.decode()
    assert "Multiple choice · correct: B" in content
    english = next(c for c in response.context["columns"] if c.code == "en")
    assert [(o.letter, o.text, o.correct) for o in english.options] == [
        ("A", "Class 4.6", False),
        ("B", "Class 8.8", True),
        ("C", "Class 10.9", False),
        ("D", "Class 12.9", False),
    ]
    assert (
        '<li data-option="B" class="correct"><span class="letter">B</span> '
        '<span class="text-block">8.8 级</span> <span class="badge ok">correct</span>'
    ) in content
    assert '<li data-option="A"><span class="letter">A</span>' in content
    # ru and vi have no rendering; the item's empty reference answer is not shown.
    assert "Reference answer" not in content


def test_a_translation_without_its_options_says_so(expert, benchmark, items):
    line = format_item("F-9", "multiple_choice")
    del line["renderings"]["en"]["options"]
    do_import_items(io.BytesIO(jsonl([line])), slug=benchmark.slug)
    content = item_page(expert, Item.objects.get(external_id="F-9")).content.decode()
    assert "No options in this language yet." in content
    assert OPTIONS["zh"][1] in content


def test_a_declared_set_of_correct_options_is_shown(expert, benchmark):
    line = format_item("F-S", "multiple_choice", correct_options=["A", "C"])
    line["multiple_answers"] = True
    do_import_items(io.BytesIO(jsonl([line])), slug=benchmark.slug)
    response = item_page(expert, Item.objects.get())
    assert "correct: A, C" in response.content.decode()
    assert "(all that apply)" in response.content.decode()
    zh = response.context["columns"][0]
    assert [o.letter for o in zh.options if o.correct] == ["A", "C"]


def test_item_page_shows_the_true_false_answer(expert, items):
    content = item_page(expert, items["true_false"]).content.decode()
    assert "True/false · answer: true" in content
    assert "Options" not in content


def test_item_page_lists_the_key_points(expert, items):
    content = item_page(expert, items["short_answer"]).content.decode()
    assert "Short answer with key points" in content
    assert '<li class="text-block">公称屈服强度 640 MPa</li>' in content
    assert '<li class="text-block">640 MPa nominal yield strength</li>' in content
    assert "Reference answer" in content


def test_an_open_item_page_shows_no_format_data(expert, items):
    content = item_page(expert, items["open"]).content.decode()
    assert "Open QA" in content
    assert "Options" not in content and "Key points" not in content
    assert "Reference answer" in content


def test_the_browser_filters_by_format_and_shows_it(expert, benchmark, items):
    response = list_page(expert, benchmark, format="short_answer")

    rows = response.context["result"].rows
    assert [row.item.external_id for row in rows] == ["F-3"]
    assert '<td class="nowrap">Short answer with key points</td>' in (
        response.content.decode()
    )
    facet = next(f for f in response.context["result"].facets if f.name == "format")
    # A facet's counts leave its own filter out.
    assert {o.value: o.count for o in facet.options} == {
        "open": 1,
        "multiple_choice": 1,
        "true_false": 1,
        "short_answer": 1,
    }
    assert facet.selected == "short_answer"


def test_the_format_facet_counts_with_the_other_filters(expert, benchmark, items):
    response = list_page(expert, benchmark, language="en", format="true_false")
    assert [r.item.external_id for r in response.context["result"].rows] == ["F-2"]
    difficulty = next(
        f for f in response.context["result"].facets if f.name == "difficulty"
    )
    assert {o.value: o.count for o in difficulty.options}["easy"] == 1


def test_an_unknown_format_is_reported_and_ignored(expert, benchmark, items):
    response = list_page(expert, benchmark, format="essay")
    assert response.context["result"].total == 4
    assert "This filter is ignored." in response.content.decode()


def test_the_list_query_count_stays_bounded_with_formats(
    expert, benchmark, items, django_assert_max_num_queries
):
    # The format facet is counted in the same aggregate as the other item fields.
    with django_assert_max_num_queries(12):
        list_page(expert, benchmark, format="multiple_choice", q="8.8")


def test_the_admin_shows_the_format_but_cannot_write_it_unchecked(client_for, items):
    item = items["multiple_choice"]
    url = reverse("admin:benchmark_item_change", args=[item.pk])
    content = client_for("manager").get(url).content.decode()
    assert "Multiple choice" in content
    assert 'name="format"' not in content
    assert 'name="correct_options"' not in content
    assert 'name="renderings-0-options"' not in content
