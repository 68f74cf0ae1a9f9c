"""An English multiple-choice evaluation of items translated from Chinese, all on a
real worker: a translation run renders the options into English, then the tested
model — a server that reads its prompt and knows its facts only in English — is
asked in English. It can answer only from the English options shown, so the
accuracy is exactly the share of items it knows."""

import json
import re

import pytest

from benchmark.models import Item, Rendering
from judging.evaluation.actions import do_start_evaluation
from judging.evaluation.models import EvaluationRun
from judging.leaderboard.building import build_report
from judging.llm.models import Endpoint
from judging.translation.models import TranslationRun
from tests.judging.labelling_fixtures import wait_until
from tests.judging.test_translation_parts import _add, _lines_after
from tests.judging.translation_fixtures import make_endpoints, start
from tests.openai_stub import OpenAIStub, ReadingModel, Reply, last_user_text

# Chinese question, its English, options, the right letter.
ITEMS = [
    ("M12螺栓的抗拉强度？", "Tensile strength of an M12 bolt?",
     ["400兆帕", "600兆帕", "800兆帕", "1000兆帕"], "C"),
    ("YJV电缆的额定电压？", "Rated voltage of a YJV cable?",
     ["6千伏", "10千伏", "35千伏", "110千伏"], "B"),
    ("IP67外壳的浸水深度？", "Immersion depth of an IP67 enclosure?",
     ["0.5米", "1米", "2米", "5米"], "B"),
    ("YE3电机的效率等级？", "Efficiency class of a YE3 motor?",
     ["IE1", "IE2", "IE3", "IE4"], "C"),
]  # fmt: skip
ENGLISH = {chinese: english for chinese, english, _, _ in ITEMS}
UNITS = {"兆帕": " MPa", "千伏": " kV", "米": " m"}
# What the tested model believes, in English only: right of three items, a wrong
# option of the cable.
BELIEFS = {
    "M12 bolt": "800 MPa",
    "YJV cable": "35 kV",
    "IP67 enclosure": "1 m",
    "YE3 motor": "IE3",
}


def in_english(text: str) -> str:
    for chinese, english in UNITS.items():
        text = text.replace(chinese, english)
    return text


def translator(body: dict) -> Reply:
    """Translates the question and each option line the prompt shows."""
    prompt = last_user_text(body)
    question = re.search(r"Question:\n(.*)\n", prompt).group(1)
    answer = re.search(r"Reference answer:\n(.*)\n", prompt).group(1)
    # An MC item's reference answer is its letters (a variant's too): kept.
    reply = {"question": ENGLISH[question], "answer": answer}
    options = _lines_after(prompt, "Options (")
    if options:
        reply["options"] = [in_english(option) for option in options]
    return Reply(content=json.dumps(reply, ensure_ascii=False))


@pytest.mark.worker
def test_an_english_mc_run_on_translated_items_scores_what_the_model_knows(
    running_worker, benchmark, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    benchmark.scoring_scale = benchmark.ScoringScale.BINARY
    benchmark.target_languages = ["en"]
    benchmark.save(update_fields=["scoring_scale", "target_languages"])
    for index, (question, _, options, letter) in enumerate(ITEMS):
        _add(
            benchmark,
            f"MC-{index}",
            Item.Format.MULTIPLE_CHOICE,
            question,
            "",
            options=options,
            correct=[letter],
        )
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
        english = Rendering.objects.filter(language="en", is_current=True)
        assert english.count() == 4
        assert all(r.review_status == "approved" for r in english)
        assert {tuple(r.options) for r in english} >= {
            ("400 MPa", "600 MPa", "800 MPa", "1000 MPa")
        }

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
    # Every English prompt named its subject; the model answered from the options.
    assert set(tested_model.subjects_seen) == set(BELIEFS)
    grades = dict(
        run.responses.values_list("item__external_id", "grade__grade").order_by()
    )
    assert grades == {"MC-0": 1, "MC-1": 0, "MC-2": 1, "MC-3": 1}
    (metrics,) = build_report(benchmark, runs=[run], resamples=50).metrics
    assert (metrics.correct, metrics.wrong) == (3, 1)
    assert metrics.accuracy == pytest.approx(75.0)
