"""One prompt-template check for every run kind: the purpose, the placeholders a
stage needs, and none it does not fill (which would fail item by item on the
worker instead of at the start)."""

import pytest
from django.core.exceptions import ValidationError

from judging.llm.models import PromptTemplate
from judging.llm.prompts import check_template, default_template
from judging.translation.actions import check_start_translation
from tests.judging.translation_fixtures import make_endpoints

Purpose = PromptTemplate.Purpose


def template(text, purpose=Purpose.TRANSLATION):
    return PromptTemplate.objects.create(
        name=f"custom-{purpose}", purpose=purpose, text=text
    )


@pytest.mark.django_db
def test_missing_and_unknown_placeholders_are_named():
    custom = template("{{question}} {{colour}}")
    with pytest.raises(ValidationError) as refused:
        check_template(
            custom,
            Purpose.TRANSLATION,
            needed={"question", "answer"},
            provided={"question", "answer"},
        )
    assert "lacks {{answer}}" in refused.value.messages[0]
    assert (
        "uses {{colour}}, which this stage does not provide"
        in (refused.value.messages[0])
    )
    with pytest.raises(ValidationError, match="not labelling"):
        check_template(custom, Purpose.LABELLING, needed=set(), provided=set())


@pytest.mark.django_db
def test_each_run_kind_refuses_a_placeholder_it_does_not_fill(benchmark):
    from benchmark.models import Item

    Item.objects.create(benchmark=benchmark, external_id="A")
    benchmark.target_languages = ["en"]
    benchmark.save(update_fields=["target_languages"])

    class Stub:
        base_url = "http://127.0.0.1:9/v1"

    translator, reviewer = make_endpoints(Stub)
    typo = template(
        "Translate {{question}} / {{answer}} into {{target_langauge}}."
        " {{target_language}}"
    )
    with pytest.raises(ValidationError, match="target_langauge"):
        check_start_translation(
            benchmark,
            ["en"],
            translator,
            typo,
            reviewer,
            default_template("faithfulness_review"),
            approve_threshold=5,
            item_filter={},
        )
