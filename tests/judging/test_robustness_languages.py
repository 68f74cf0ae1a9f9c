"""Robustness in every language: order variants of Chinese MC seeds are rendered
into English by the same translation run as any item (options in the variant's own
letter order), an English run answers seeds and variants on a real worker, and the
report read in English measures it — the source-language report has no run.

The tested model reads its prompt and knows its facts in English only
(tests.judging.test_translated_mc_evaluation): it picks the option carrying what
it believes wherever the order puts it, so every variant agrees with its seed —
three seeds it knows (correct robustness 1 over three variants) and one it gets
wrong (incorrect robustness 1 over one)."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from benchmark import formats
from benchmark.models import ItemVariant, Rendering
from judging.evaluation.actions import do_start_evaluation
from judging.evaluation.models import EvaluationRun
from judging.llm.models import Endpoint
from judging.robustness import actions, report
from judging.translation.models import TranslationRun
from tests.judging.labelling_fixtures import wait_until
from tests.judging.robustness_fixtures import make_seed
from tests.judging.test_translated_mc_evaluation import (
    BELIEFS,
    ITEMS,
    in_english,
    translator,
)
from tests.judging.translation_fixtures import make_endpoints, start
from tests.openai_stub import OpenAIStub, ReadingModel, Reply


@pytest.mark.worker
def test_order_variants_are_translated_and_reported_per_language(
    running_worker, benchmark, monkeypatch, client_for, capsys
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    benchmark.scoring_scale = benchmark.ScoringScale.BINARY
    benchmark.target_languages = ["en"]
    benchmark.save(update_fields=["scoring_scale", "target_languages"])
    for index, (question, _, options, letter) in enumerate(ITEMS):
        make_seed(
            benchmark,
            f"MC-{index}",
            question,
            options=options,
            correct_options=[letter],
        )
    generated = actions.do_generate_variants(
        benchmark, [formats.MULTIPLE_CHOICE], ["order"], "domain"
    )
    assert generated.created == 4
    tested_model = ReadingModel(BELIEFS)

    def respond(body: dict) -> Reply:
        if body["model"] == "translator-model":
            return translator(body)
        if body["model"] == "reviewer-model":
            return Reply(content=json.dumps({"score": 5, "reason": "faithful"}))
        return tested_model(body)

    with OpenAIStub(api_key="k", responder=respond) as stub:
        translator_endpoint, reviewer = make_endpoints(stub)
        translation = start(benchmark, translator_endpoint, reviewer)

        def translated():
            translation.refresh_from_db()
            return translation.status in TranslationRun.ENDED_WITH_RESULTS

        wait_until(translated, 120, "the translation run did not end")
        assert translation.translated == 8  # four seeds, four variants
        for variant in ItemVariant.objects.all():
            chinese, english = (
                Rendering.objects.get(
                    item=variant.item, language=language, is_current=True
                )
                for language in ("zh", "en")
            )
            # The variant's own order, letter by letter, and approved.
            assert english.options == [in_english(o) for o in chinese.options]
            assert english.review_status == Rendering.ReviewStatus.APPROVED

        tested = Endpoint.objects.create(
            name="tested",
            base_url=stub.base_url,
            model="tested-model",
            api_key_env="STUB_API_KEY",
        )
        run = do_start_evaluation(
            benchmark, tested=tested, judge=None, sv_judge=None, language="en"
        )

        def evaluated():
            run.refresh_from_db()
            return run.status in EvaluationRun.ENDED_WITH_RESULTS

        wait_until(evaluated, 120, "the evaluation run did not end")

    assert run.status == EvaluationRun.Status.COMPLETE
    assert run.responses.count() == 8
    in_chinese = report.build(benchmark)
    assert (in_chinese.language, in_chinese.runs, in_chinese.result) == ("zh", [], None)
    english = report.build(benchmark, "en")
    assert english.runs == [run] and (english.seeds, english.variants) == (4, 4)
    pooled = english.result.pooled
    assert (float(pooled.correct[0, 0]), int(pooled.correct_variants[0, 0])) == (1.0, 3)
    assert (float(pooled.incorrect[0, 0]), int(pooled.incorrect_variants[0, 0])) == (
        1.0,
        1,
    )
    assert report.report_languages(benchmark) == ["zh", "en"]

    # The page and the command read it per language; an unknown one is refused.
    manager = client_for("manager")
    url = reverse("judging:robustness_report", args=[benchmark.slug])
    page = manager.get(url, {"language": "en"}).content.decode()
    assert "Runs asked in English" in page and 'data-table="robustness"' in page
    assert "No evaluation run in" in manager.get(url).content.decode()
    assert manager.get(url, {"language": "xx"}).status_code == 404
    call_command(
        "robustness_report",
        benchmark=benchmark.slug,
        language="en",
        table="robustness",
        format="csv",
    )
    assert "tested (en),1.0,3,3,1.0,1,1," in capsys.readouterr().out
