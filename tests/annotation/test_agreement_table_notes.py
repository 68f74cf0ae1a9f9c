"""An agreement table's own notes are shown under it on the report page, in the
reader's language (#30), like the report's footnotes: one rubric judge leaves the
judge-vs-judge tables empty, and each says why."""

import re

import pytest
from django.urls import reverse

from tests.annotation.report_factories import bulk_items, judged_runs

ONE_JUDGE = {
    "en": "One rubric judge scored these responses (judge-a): agreement between "
    "judges needs at least two, so this table is empty.",
    "zh-hans": "这些回答只有一个评分细则评判模型评过分（judge-a）",
}
NO_DATA = {
    "en": "No data yet",
    "zh-hans": "暂无数据",
}


def sections(html: str) -> dict[str, str]:
    """Each table's section of the page, by table slug."""
    found = re.findall(
        r'<section class="report-table" id="table-([\w-]+)">(.*?)</section>',
        html,
        re.DOTALL,
    )
    return dict(found)


@pytest.fixture
def one_judge(benchmark):
    judged_runs(
        benchmark, bulk_items(benchmark, 6), models=("Model-A",), judges=("judge-a",)
    )


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize(
    ("report", "tables"),
    [("judge-pairs", ["per_model", "pairs"]), ("cross-judge", ["models"])],
)
def test_each_empty_table_says_why_under_it(
    client_for, benchmark, one_judge, language, report, tables
):
    url = reverse("annotation:report", args=[benchmark.slug, report])
    html = (
        client_for("manager")
        .get(url, headers={"accept-language": language})
        .content.decode()
    )
    shown = sections(html)
    assert sorted(shown) == sorted(tables)
    for slug in tables:
        notes = shown[slug].split('data-testid="table-notes"', 1)[1]
        assert ONE_JUDGE[language] in notes, slug
        assert NO_DATA[language] not in shown[slug]  # the note says it better
    if language != "en":
        assert ONE_JUDGE["en"] not in html


def test_a_table_without_notes_shows_none(client_for, benchmark):
    """No runs at all: the calibration tables have no notes of their own, and say
    there is no data yet."""
    url = reverse("annotation:report", args=[benchmark.slug, "calibration"])
    html = (
        client_for("manager")
        .get(url, headers={"accept-language": "zh-hans"})
        .content.decode()
    )
    assert 'data-testid="table-notes"' not in html
    assert NO_DATA["zh-hans"] in html
