import pytest
from django.urls import reverse

from benchmark.actions import (
    do_add_rendering_version,
    do_create_benchmark,
    do_set_final_label,
    do_set_rendering_review_status,
)
from benchmark.browse import PAGE_SIZE, event_changes
from benchmark.models import Item, Label, Rendering
from tests.benchmark.factories import make_item, make_plain_items, make_sample_items


@pytest.fixture
def samples(benchmark, personas):
    return make_sample_items(benchmark, user=personas["manager"])


@pytest.fixture
def expert(client_for):
    return client_for("expert")


def list_url(benchmark, **params):
    from urllib.parse import urlencode

    url = reverse("benchmark:item_list", args=[benchmark.slug])
    return f"{url}?{urlencode(params)}" if params else url


def listed_ids(response) -> list[str]:
    return [row.item.external_id for row in response.context["result"].rows]


def facet_counts(response, name) -> dict[str, int]:
    facet = next(f for f in response.context["result"].facets if f.name == name)
    return {option.value: option.count for option in facet.options}


@pytest.mark.smoke
def test_lists_all_items_with_source_language_questions(expert, benchmark, samples):
    response = expert.get(list_url(benchmark))
    assert response.status_code == 200
    assert listed_ids(response) == [f"IB-000{n}" for n in range(1, 6)]
    assert response.context["result"].total == 5
    content = response.content.decode()
    assert "外壳防护等级 IP67 中的两位数字分别代表什么含义？" in content
    assert "Capability" in content and "Industry" in content


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"difficulty": "easy"}, ["IB-0001"]),
        ({"difficulty": "medium"}, ["IB-0002", "IB-0004"]),
        ({"difficulty": "unset"}, ["IB-0005"]),
        ({"source_kind": "product"}, ["IB-0004"]),
        ({"source_kind": "other"}, ["IB-0005"]),
        ({"capability": "standards_terminology"}, ["IB-0001", "IB-0002"]),
        ({"capability": "none"}, []),
        ({"industry": "electrical_power"}, ["IB-0004"]),
        ({"industry": "none"}, ["IB-0005"]),
        (
            {"capability": "standards_terminology", "industry": "electronics_sensors"},
            ["IB-0002"],
        ),
        ({"difficulty": "medium", "source_kind": "standard"}, ["IB-0002"]),
    ],
)
def test_each_filter(expert, benchmark, samples, params, expected):
    response = expert.get(list_url(benchmark, **params))
    assert listed_ids(response) == expected


def test_status_filter(expert, benchmark, samples):
    Item.objects.filter(external_id="IB-0003").update(status=Item.Status.RETIRED)
    response = expert.get(list_url(benchmark, status="retired"))
    assert listed_ids(response) == ["IB-0003"]
    response = expert.get(list_url(benchmark, status="active"))
    assert "IB-0003" not in listed_ids(response)
    assert facet_counts(response, "status") == {"active": 4, "draft": 0, "retired": 1}


def test_language_filter_keeps_items_with_that_rendering_and_shows_it(
    expert, benchmark, samples
):
    make_item(benchmark, "ZH-ONLY", renderings={"zh": ("只有中文的问题", "答案")})
    response = expert.get(list_url(benchmark, language="ru"))
    assert "ZH-ONLY" not in listed_ids(response)
    assert len(listed_ids(response)) == 5
    assert response.context["result"].shown_language == "ru"
    assert "Что означают две цифры в степени защиты оболочки IP67?" in (
        response.content.decode()
    )
    counts = facet_counts(response, "language")
    assert counts == {"zh": 6, "en": 5, "ru": 5, "vi": 5}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("尘密", ["IB-0002"]),
        ("螺栓", ["IB-0001"]),
        ("сшитого полиэтилена", ["IB-0004"]),
        ("ПЫЛЕНЕПРОНИЦАЕМОСТЬ", ["IB-0002"]),
        ("bu lông cấp bền", ["IB-0001"]),
        ("Nhiệt độ bề mặt", ["IB-0003"]),
        ("xlpe", ["IB-0004"]),
        ("GB/T 3836", ["IB-0003"]),
        ("IB-0005", ["IB-0005"]),
        ("no such text anywhere", []),
    ],
)
def test_search_in_every_language(expert, benchmark, samples, text, expected):
    response = expert.get(list_url(benchmark, q=text))
    assert listed_ids(response) == expected


def test_search_only_sees_current_renderings(expert, benchmark, samples):
    item = samples["IB-0002"]
    do_add_rendering_version(
        item,
        "en",
        question="Explain the enclosure code IP67.",
        answer="Dust-tight; temporary immersion.",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.PENDING,
    )
    assert listed_ids(expert.get(list_url(benchmark, q="two digits"))) == []
    assert listed_ids(expert.get(list_url(benchmark, q="enclosure code"))) == [
        "IB-0002"
    ]


def test_facet_counts_ignore_their_own_filter_and_apply_the_others(
    expert, benchmark, samples
):
    response = expert.get(list_url(benchmark, difficulty="medium"))
    assert facet_counts(response, "difficulty") == {
        "unset": 1,
        "easy": 1,
        "medium": 2,
        "hard": 1,
    }
    assert facet_counts(response, "source_kind") == {
        "standard": 1,
        "product": 1,
        "other": 0,
    }
    industry = facet_counts(response, "industry")
    assert industry["electronics_sensors"] == 1
    assert industry["electrical_power"] == 1
    assert industry["machinery_hardware"] == 0
    assert industry["none"] == 0
    capability = facet_counts(expert.get(list_url(benchmark, q="MPa")), "capability")
    assert capability["standards_terminology"] == 1
    assert capability["engineering_calculation"] == 1
    assert capability["selection_substitution"] == 0
    assert sum(capability.values()) == 2


def test_pagination_keeps_filters(expert, benchmark):
    make_plain_items(benchmark, PAGE_SIZE + 7)
    make_item(benchmark, "Q-ZH", renderings={"zh": ("问题", "答案")})
    first = expert.get(list_url(benchmark, language="en"))
    assert first.context["result"].total == PAGE_SIZE + 7
    assert len(listed_ids(first)) == PAGE_SIZE
    assert 'href="?language=en&amp;page=2"' in first.content.decode()
    second = expert.get(list_url(benchmark, language="en", page=2))
    assert listed_ids(second) == [f"P-{n:04d}" for n in range(PAGE_SIZE, PAGE_SIZE + 7)]
    beyond = expert.get(list_url(benchmark, language="en", page=99))
    assert listed_ids(beyond) == listed_ids(second)


def test_invalid_filter_value_is_reported_and_ignored(expert, benchmark, samples):
    response = expert.get(list_url(benchmark, difficulty="impossible", industry="x"))
    assert response.status_code == 200
    assert len(listed_ids(response)) == 5
    content = response.content.decode()
    assert "Difficulty: Select a valid choice. impossible is not one of" in content
    assert "This filter is ignored." in content


def test_htmx_request_renders_only_the_results_partial(expert, benchmark, samples):
    url = list_url(benchmark, capability="safety_compliance")
    partial = expert.get(url, headers={"HX-Request": "true"})
    body = partial.content.decode()
    assert body.lstrip().startswith('<div id="results"')
    assert "<html" not in body and 'name="q"' not in body
    assert "IB-0003" in body and "IB-0001" not in body
    full = expert.get(url)
    page = full.content.decode()
    assert "<html" in page and 'id="results"' in page
    assert 'value="safety_compliance" checked' in page
    assert listed_ids(full) == ["IB-0003"]


def test_search_box_keeps_its_text_on_full_page_load(expert, benchmark, samples):
    response = expert.get(list_url(benchmark, q="尘密"))
    assert 'value="尘密"' in response.content.decode()


def test_demo_banner_only_on_demo_benchmarks(expert, benchmark, samples):
    assert "Demo data." not in expert.get(list_url(benchmark)).content.decode()
    demo = do_create_benchmark(name="Demo", slug="demo", is_demo=True)
    assert "Demo data." in expert.get(list_url(demo)).content.decode()


def test_list_query_count_is_bounded(
    expert, benchmark, samples, django_assert_max_num_queries
):
    make_plain_items(benchmark, 30)
    url = list_url(benchmark, q="a", capability="standards_terminology", language="en")
    # session, user, roles, benchmark, dimensions, labels, search matches, one
    # aggregate for label and field facets and the total, one for languages, the
    # page, and its two prefetches.
    with django_assert_max_num_queries(12):
        expert.get(url)
    with django_assert_max_num_queries(12):
        expert.get(list_url(benchmark))


def test_item_page_shows_renderings_labels_versions_and_history(
    expert, benchmark, samples, personas
):
    item = samples["IB-0002"]
    reviewer = personas["reviewer"]
    edited = do_add_rendering_version(
        item,
        "vi",
        question="Hai chữ số trong mã IP67 nghĩa là gì?",
        answer="6: kín bụi; 7: ngâm nước tạm thời 1 m trong 30 phút.",
        origin=Rendering.Origin.HUMAN_EDITED,
        review_status=Rendering.ReviewStatus.PENDING,
        user=reviewer,
    )
    do_set_rendering_review_status(
        edited, Rendering.ReviewStatus.FLAGGED, user=reviewer, note="check unit"
    )
    adjudicated = Label.objects.get(
        dimension__benchmark=benchmark, code="quality_metrology"
    )
    do_set_final_label(
        item, adjudicated, provenance="adjudicated", user=personas["adjudicator"]
    )
    response = expert.get(
        reverse("benchmark:item_detail", args=[benchmark.slug, item.pk])
    )
    assert response.status_code == 200
    content = response.content.decode()
    for text in (
        "外壳防护等级 IP67 中的两位数字分别代表什么含义？",
        "What do the two digits in the enclosure rating IP67 mean?",
        "Что означают две цифры в степени защиты оболочки IP67?",
        "Hai chữ số trong mã IP67 nghĩa là gì?",
        "GB/T 4208-2017",
        "第一位特征数字 6 表示尘密",
        "Quality &amp; Metrology",
        "Adjudicated",
        "Flagged for review",
        "Human edited",
    ):
        assert text in content, text
    columns = response.context["columns"]
    assert [c.code for c in columns] == ["zh", "en", "ru", "vi"]
    vietnamese = columns[3]
    assert vietnamese.current.version == 2
    assert [v.version for v in vietnamese.versions] == [2, 1]
    capability = next(
        f for f in response.context["final_labels"] if f.dimension.code == "capability"
    )
    assert capability.decided_by == personas["adjudicator"]
    events = response.context["events"]
    assert events[0].event.user == personas["adjudicator"]
    changes = [[(c.name, c.before, c.after) for c in e.changes] for e in events[:2]]
    assert ("label", "standards_terminology", "quality_metrology") in changes[0]
    assert ("review_status", "pending", "flagged") in changes[1]
    assert "adjudicator" in content and "reviewer" in content


def test_history_shows_the_changed_words_of_an_edited_text(expert, benchmark):
    long_answer = " ".join(f"word{i:03d}" for i in range(63))  # 503 characters
    item = make_item(
        benchmark,
        "IB-DIFF",
        renderings={
            "zh": ("外壳防护等级 IP67 中的两位数字分别代表什么含义？", "尘密"),
            "en": ("What does IP67 mean?", long_answer),
        },
    )
    edit = {"origin": Rendering.Origin.HUMAN_EDITED, "review_status": "pending"}
    do_add_rendering_version(
        item,
        "zh",
        question="外壳防护等级 IP68 中的两位数字分别代表什么意思？",
        answer="尘密",
        **edit,
    )
    do_add_rendering_version(
        item,
        "en",
        question="What does <b>IP67</b> mean?",
        answer=long_answer.replace("word025", "CHANGED"),
        **edit,
    )
    html = expert.get(
        reverse("benchmark:item_detail", args=[benchmark.slug, item.pk])
    ).content.decode()
    assert "<del>IP67</del><ins>IP68</ins>" in html
    assert "<del>含义</del><ins>意思</ins>" in html
    # A change 200 characters into the answer, with 40 characters around it.
    gap = '<span class="gap" title="unchanged text left out">…</span>'
    assert (
        f'<span class="diff" data-recorded>{gap}{long_answer[160:200]}'
        f"<del>word025</del><ins>CHANGED</ins>{long_answer[207:247]}{gap}</span>"
    ) in html
    # Edited text is escaped, never markup.
    assert "What does <ins>&lt;b&gt;</ins>IP67<ins>&lt;/b&gt;</ins> mean?" in html


def test_item_of_another_benchmark_is_404(expert, benchmark, samples):
    other = do_create_benchmark(name="Other", slug="other")
    item = samples["IB-0001"]
    response = expert.get(reverse("benchmark:item_detail", args=[other.slug, item.pk]))
    assert response.status_code == 404


@pytest.mark.smoke
def test_event_changes_lists_only_what_differs():
    assert event_changes(None, {"label": "a", "provenance": "imported"}) == [
        ("label", None, "a"),
        ("provenance", None, "imported"),
    ]
    assert event_changes(
        {"version": 1, "question": "q", "answer": "a"},
        {"version": 2, "question": "q", "answer": "b"},
    ) == [("version", 1, 2), ("answer", "a", "b")]


def test_home_links_each_benchmark_to_its_browser(expert, client_for, benchmark):
    url = reverse("benchmark:item_list", args=[benchmark.slug])
    assert url in expert.get(reverse("benchmark:home")).content.decode()
    outsider_home = client_for("outsider").get(reverse("benchmark:home"))
    assert outsider_home.status_code == 403
    assert url not in outsider_home.content.decode()


@pytest.mark.smoke
def test_count_facets_matches_filtering_item_by_item():
    import random

    from benchmark.browse import count_facets

    rng = random.Random(7)
    names = ["capability", "industry", "difficulty"]
    items = [
        {
            "capability": rng.choice(["a", "b", "none"]),
            "industry": rng.choice(["x", "y", "z", "none"]),
            "difficulty": rng.choice(["easy", "hard", "unset"]),
        }
        for _ in range(300)
    ]
    groups = {}
    for item in items:
        key = tuple(item[name] for name in names)
        groups[key] = groups.get(key, 0) + 1
    grouped = [(dict(zip(names, key, strict=True)), n) for key, n in groups.items()]

    def keeps(item, criteria, skip=""):
        return all(
            item[name] == value for name, value in criteria.items() if name != skip
        )

    for criteria in (
        {},
        {"industry": "y"},
        {"capability": "b", "difficulty": "hard"},
        {"industry": "z", "capability": "none", "difficulty": "easy"},
    ):
        counts, total = count_facets(grouped, criteria, names)
        assert total == sum(keeps(item, criteria) for item in items)
        for name in names:
            expected = {}
            for item in items:
                if keeps(item, criteria, skip=name):
                    expected[item[name]] = expected.get(item[name], 0) + 1
            assert counts[name] == expected, (criteria, name)


@pytest.mark.smoke  # PostgreSQL passes the ids as an array, SQLite uses subqueries
def test_search_combines_with_filters_and_counts(expert, benchmark, samples):
    response = expert.get(list_url(benchmark, q="MPa", difficulty="easy"))
    assert listed_ids(response) == ["IB-0001"]
    assert facet_counts(response, "difficulty") == {
        "unset": 1,
        "easy": 1,
        "medium": 0,
        "hard": 0,
    }
    assert facet_counts(response, "language")["vi"] == 1
