"""An item's history in the reader's language (#30): each event stores its summary
in English (the admin, the REST API) and as a Note's msgid and values, so the item's
page shows it in Chinese to a zh-hans reader; an event recorded before there were
Notes shows its English summary as recorded."""

import io

from django.urls import reverse

from benchmark.actions import (
    do_create_item,
    do_set_final_label,
    do_set_rendering_review_status,
)
from benchmark.importing import do_import_items
from benchmark.models import ItemEvent, Label, Rendering
from tests.benchmark.importing_helpers import industrybench_csv, industrybench_row

ZH = {"accept-language": "zh-hans"}


def history(client, item, **headers) -> str:
    url = reverse("benchmark:item_detail", args=[item.benchmark.slug, item.pk])
    page = client.get(url, headers=headers).content.decode()
    return page[page.index('class="table history"') :]


def test_history_summaries_are_shown_in_the_readers_language(
    client_for, benchmark, personas
):
    item = do_create_item(
        benchmark, external_id="H-1", question="公称压力？", answer="1.6 MPa。"
    )
    label = Label.objects.get(dimension__benchmark=benchmark, code="quality_metrology")
    do_set_final_label(item, label, provenance="adjudicated", user=personas["manager"])
    english = "Capability: Quality & Metrology (Adjudicated)"
    event = item.events.get(kind="label")
    assert event.summary == english
    assert event.summary_note == {
        "msgid": "%(dimension)s: %(label)s (%(provenance)s)",
        "values": {
            "dimension": "Capability",
            "label": "Quality & Metrology",
            "provenance": {"msgid": "Adjudicated", "values": {}},
        },
    }
    rendering = item.renderings.get(language="zh", is_current=True)
    do_set_rendering_review_status(rendering, Rendering.ReviewStatus.FLAGGED)
    ItemEvent.objects.create(item=item, kind="note", summary="Checked by phone")
    client = client_for("expert")

    chinese = history(client, item, **ZH)
    assert "Capability：Quality &amp; Metrology（已仲裁）" in chinese
    assert "zh v1：已标记待审校" in chinese
    assert "zh v1（来源）" in chinese  # the rendering's first version
    assert "已创建题目" in chinese
    assert "<td data-recorded>Checked by phone</td>" in chinese
    assert "Adjudicated" not in chinese

    english_page = history(client, item)
    assert "Capability: Quality &amp; Metrology (Adjudicated)" in english_page
    assert "zh v1: Flagged for review" in english_page
    assert "Item created" in english_page


def test_an_imports_history_is_shown_in_the_readers_language(client_for, benchmark):
    """Both the COPY of new items and the update of an existing one."""
    rows = [industrybench_row("A")]
    do_import_items(
        io.BytesIO(industrybench_csv(rows)), slug=benchmark.slug, filename="a.csv"
    )
    changed = [industrybench_row("A", knowledge_text="GB/T 1048-2019 新版。")]
    do_import_items(
        io.BytesIO(industrybench_csv(changed)),
        slug=benchmark.slug,
        filename="b.csv",
        update=True,
    )
    item = benchmark.items.get(external_id="A")
    assert list(
        item.events.filter(kind="import").values_list("summary", flat=True)
    ) == [
        "Imported from b.csv: knowledge_text changed",
        "Imported from a.csv",
    ]
    chinese = history(client_for("expert"), item, **ZH)
    assert "导入自 a.csv" in chinese
    assert "导入自 b.csv：knowledge_text 已更改" in chinese
