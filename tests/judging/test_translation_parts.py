"""A translation carries the whole item: the prompt shows the source's options and
key points and asks for each, a reply with another number of them is refused, the
preservation check names the part that changed, and the reviewer sees them too.

The worker test's translator reads its prompt: it translates exactly the option
and key-point lines the prompt shows, so a prompt without them yields a rendering
without them (and, on the code before options were carried, `options == []`)."""

import json
import re

import pytest

from benchmark.actions import do_add_rendering_version
from benchmark.models import Item, Rendering
from judging.llm.outputs import OutputError, translation_validator
from judging.llm.prompts import default_template, render_text
from judging.translation.models import TranslationRun
from judging.translation.parts import (
    PLAIN_REPLY,
    key_points_block,
    options_block,
    reply_format,
)
from judging.translation.rendering_check import check_rendering
from tests.judging.labelling_fixtures import wait_until
from tests.judging.translation_fixtures import make_endpoints, start
from tests.openai_stub import OpenAIStub, Reply, first_user_text, last_user_text

# The open-item prompt as it read before options and key points were carried: the
# same bytes mean calls already recorded are served, not paid for again.
OLD_ITEM = (
    "Question:\n{question}\n\nReference answer:\n{answer}\n\n"
    'Reply with only a JSON object: {{"question": "<translated question>", '
    '"answer": "<translated reference answer>"}}'
)


@pytest.mark.django_db
def test_an_open_item_prompt_is_byte_for_byte_the_old_one():
    template = default_template("translation")
    text = render_text(
        template.text,
        {
            "source_language": "Chinese",
            "target_language": "English",
            "question": "额定电压？",
            "answer": "10千伏。",
            "options": options_block([]),
            "key_points": key_points_block([]),
            "reply_format": reply_format(0, 0),
        },
    )
    assert text.endswith(OLD_ITEM.format(question="额定电压？", answer="10千伏。"))
    assert reply_format(0, 0) == PLAIN_REPLY


def test_the_reply_format_names_every_option_and_key_point():
    shape = reply_format(4, 2)
    assert '"<translated option A>"' in shape and '"<translated option D>"' in shape
    assert '"<translated option E>"' not in shape
    assert '"<translated key point 2>"' in shape
    assert options_block(["十", "二十"]) == (
        "Options (translate each one; keep its letter and their order):\n"
        "A. 十\nB. 二十\n"
    )


def test_a_reply_with_another_number_of_options_is_refused():
    validate = translation_validator(4, 0, answer_required=False)
    reply = {"question": "Q", "answer": "", "options": ["a", "b", "c"]}
    with pytest.raises(OutputError, match="has 3 options; the source has 4"):
        validate(json.dumps(reply))
    reply["options"].append("d")
    assert validate(json.dumps(reply))["options"] == ["a", "b", "c", "d"]
    with pytest.raises(OutputError, match="key_points"):
        translation_validator(0, 2)(json.dumps({"question": "Q", "answer": "A"}))
    with pytest.raises(OutputError, match='"answer" must not be empty'):
        translation_validator(0, 0)(json.dumps({"question": "Q", "answer": " "}))


def test_the_preservation_flag_names_the_part():
    check = check_rendering(
        "哪个电压？",
        "",
        "Which voltage?",
        "",
        source_language="zh",
        target_language="en",
        source_options=["6千伏", "10千伏", "10.9千伏", "35千伏"],
        target_options=["6 kV", "10 kV", "109 kV", "35 kV"],
    )
    assert not check.passed
    assert check.problems() == ["option C: 10.9 → 109"]
    assert [part["name"] for part in check.as_dict()["parts"]] == [
        "option A",
        "option B",
        "option C",
        "option D",
    ]
    short = check_rendering(
        "Q",
        "A",
        "Q",
        "A",
        source_language="en",
        target_language="en",
        source_key_points=["x", "y"],
        target_key_points=["x"],
    )
    assert short.problems() == ["key points: 2 in the source, 1 translated"]


# --- A real worker translating MC, TF and short-answer items -------------------------

MC = (
    "电缆额定电压选哪个？",
    ["6千伏", "10千伏", "10.9千伏", "35千伏"],
)
TF = ("M12螺栓的抗拉强度是800兆帕。", "正确。")
SHORT = (
    "IP67外壳的防护要求？",
    "防尘，可浸水1米30分钟。",
    ["完全防尘", "浸水1米", "持续30分钟"],
)
LANGUAGES = ("en", "ru", "vi")


def _lines_after(prompt: str, heading: str) -> list[str]:
    """The lettered or numbered lines under `heading` in the prompt, if shown."""
    block = prompt.split(heading, 1)
    if len(block) < 2:
        return []
    found = []
    for line in block[1].split("\n")[1:]:
        match = re.match(r"^(?:[A-G]|\d+)\. (.*)$", line)
        if not match:
            break
        found.append(match.group(1))
    return found


def _translate(text: str, language: str) -> str:
    # Numbers are kept, except the sloppy Russian translation of "10.9".
    if language == "Russian":
        text = text.replace("10.9", "109")
    return f"[{language}] {text}"


def respond(body: dict) -> Reply:
    prompt = last_user_text(body)
    language = re.search(r"into (\w+)\.", first_user_text(body))
    if body["model"] == "translator-model":
        target = language.group(1)
        question = re.search(r"Question:\n(.*)\n", prompt).group(1)
        answer = re.search(r"Reference answer:\n(.*)\n", prompt).group(1)
        reply = {
            "question": _translate(question, target),
            "answer": _translate(answer, target) if answer else "",
        }
        options = _lines_after(prompt, "Options (")
        if options:
            reply["options"] = [_translate(option, target) for option in options]
        key_points = _lines_after(prompt, "Key points (")
        if key_points:
            reply["key_points"] = [_translate(point, target) for point in key_points]
        return Reply(content=json.dumps(reply, ensure_ascii=False))
    # The reviewer scores 5 only when it is shown every translated part the
    # source has: an MC item's options, a short answer's key points.
    source = _lines_after(prompt, "Source options:") + _lines_after(
        prompt, "Source key points:"
    )
    shown = _lines_after(prompt, "Translated options:") + _lines_after(
        prompt, "Translated key points:"
    )
    score = 5 if len(shown) == len(source) else 1
    return Reply(content=json.dumps({"score": score, "reason": "read"}))


def _add(benchmark, external_id, item_format, question, answer, **parts):
    item = Item.objects.create(
        benchmark=benchmark,
        external_id=external_id,
        format=item_format,
        correct_options=parts.pop("correct", []),
    )
    do_add_rendering_version(
        item,
        benchmark.source_language,
        question=question,
        answer=answer,
        origin=Rendering.Origin.SOURCE,
        review_status=Rendering.ReviewStatus.APPROVED,
        **parts,
    )
    return item


@pytest.mark.worker
def test_mc_tf_and_short_answer_items_are_translated_whole(
    running_worker, benchmark, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    benchmark.target_languages = list(LANGUAGES)
    benchmark.save(update_fields=["target_languages"])
    mc = _add(
        benchmark,
        "MC-1",
        Item.Format.MULTIPLE_CHOICE,
        MC[0],
        "",
        options=MC[1],
        correct=["B"],
    )
    tf = _add(benchmark, "TF-1", Item.Format.TRUE_FALSE, *TF)
    short = _add(
        benchmark,
        "SA-1",
        Item.Format.SHORT_ANSWER,
        SHORT[0],
        SHORT[1],
        key_points=SHORT[2],
    )
    with OpenAIStub(responder=respond) as stub:
        translator, reviewer = make_endpoints(stub)
        run = start(benchmark, translator, reviewer, languages=LANGUAGES)

        def ended():
            run.refresh_from_db()
            return run.status in TranslationRun.ENDED_WITH_RESULTS

        wait_until(ended, 120, "the translation run did not end")

    current = {
        (r.item_id, r.language): r
        for r in Rendering.objects.filter(is_current=True, language__in=LANGUAGES)
    }
    for language in LANGUAGES:
        name = {"en": "English", "ru": "Russian", "vi": "Vietnamese"}[language]
        mc_text = current[mc.pk, language]
        assert len(mc_text.options) == 4
        assert mc_text.options[0] == f"[{name}] 6千伏"
        assert current[tf.pk, language].options == []
        assert current[short.pk, language].key_points == [
            f"[{name}] {point}" for point in SHORT[2]
        ]
    # Only the Russian option C lost its number; nothing else is flagged, and the
    # reviewer, shown every part, scored every rendering 5.
    flagged = {
        (r.item_id, r.language)
        for r in current.values()
        if r.review_status == Rendering.ReviewStatus.FLAGGED
    }
    assert flagged == {(mc.pk, "ru")}
    notes = [event.after["note"] for event in mc.events.filter(kind="review")]
    flag_notes = [note for note in notes if "preservation check" in note]
    assert len(flag_notes) == 1
    assert "option C: 10.9 → 109" in flag_notes[0]
    assert "faithfulness" not in flag_notes[0]


@pytest.mark.django_db
def test_a_run_in_a_language_whose_renderings_lack_parts_is_refused(benchmark):
    from judging.evaluation.actions import EvaluationActionError, do_start_evaluation
    from judging.llm.models import Endpoint

    benchmark.scoring_scale = benchmark.ScoringScale.BINARY
    benchmark.target_languages = ["en"]
    benchmark.save(update_fields=["scoring_scale", "target_languages"])
    mc = _add(
        benchmark,
        "MC-1",
        Item.Format.MULTIPLE_CHOICE,
        MC[0],
        "",
        options=MC[1],
        correct=["B"],
    )
    short = _add(
        benchmark,
        "SA-1",
        Item.Format.SHORT_ANSWER,
        SHORT[0],
        SHORT[1],
        key_points=SHORT[2],
    )
    # English renderings imported with question and answer only.
    for item in (mc, short):
        do_add_rendering_version(
            item,
            "en",
            question="Q?",
            answer="A.",
            origin=Rendering.Origin.IMPORTED,
            review_status=Rendering.ReviewStatus.APPROVED,
        )
    endpoint = Endpoint.objects.create(
        name="tested", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=""
    )

    def start(language):
        return do_start_evaluation(
            benchmark,
            tested=endpoint,
            judge=endpoint,
            sv_judge=None,
            language=language,
            enqueue=False,
        )

    with pytest.raises(EvaluationActionError) as refused:
        start("en")
    assert str(refused.value).startswith(
        "In en, the selection has 1 multiple-choice item without options and "
        "1 short-answer item without key points. Translate them first"
    )
    assert not benchmark.evaluation_runs.exists()
    assert start("zh").responses.count() == 2
