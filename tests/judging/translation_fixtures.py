"""Shared set-up for translation tests: items with Chinese sources, a translator and
a reviewer endpoint on the OpenAI-protocol stub, and running a run in-process."""

import json
import re

from benchmark.actions import do_add_rendering_version
from benchmark.models import Item, Rendering
from judging.llm.models import Endpoint
from judging.llm.prompts import default_template
from judging.translation.actions import do_start_translation
from tests.openai_stub import Reply, first_user_text, last_user_text

SOURCES = {
    "bolt": ("M12螺栓按GB/T 3098.1-2010的抗拉强度是多少？", "800兆帕。"),
    "cable": ("额定电压10千伏电缆的截面积？", "95平方毫米。"),
    "ip": ("IP67外壳可浸水多深？", "1米，30分钟。"),
    "motor": ("YE3-132M-4电机的额定功率？", "7.5千瓦。"),
}
ENGLISH = {
    "bolt": (
        "Per GB/T 3098.1-2010, what is the tensile strength of an M12 bolt?",
        "800 MPa.",
    ),
    "cable": ("What is the cross-section of a 10 kV rated cable?", "95 mm²."),
    "ip": ("How deep can an IP67 enclosure be immersed?", "1 m, for 30 min."),
    "motor": ("What is the rated power of the YE3-132M-4 motor?", "7.5 kW."),
}


def add_item(benchmark, external_id, question, answer):
    item = Item.objects.create(benchmark=benchmark, external_id=external_id)
    do_add_rendering_version(
        item,
        benchmark.source_language,
        question=question,
        answer=answer,
        origin=Rendering.Origin.SOURCE,
        review_status=Rendering.ReviewStatus.APPROVED,
    )
    return item


def add_items(benchmark):
    return {
        key: add_item(benchmark, key, question, answer)
        for key, (question, answer) in SOURCES.items()
    }


def source_key(prompt: str) -> str | None:
    return next(
        (key for key, (question, _) in SOURCES.items() if question in prompt), None
    )


def fake_translation(body: dict, *, changed: set[str] = frozenset()) -> str:
    """An English rendering of the scripted item; keys in `changed` come back with
    the number altered, as a sloppy translator would."""
    key = source_key(first_user_text(body))
    question, answer = ENGLISH[key]
    if key in changed:
        answer = re.sub(r"[0-9]+", lambda m: str(int(m.group()) + 1), answer, count=1)
    return json.dumps({"question": question, "answer": answer}, ensure_ascii=False)


def make_responder(*, scores=None, changed=frozenset(), garbled_reviews=frozenset()):
    """Translator replies with English text; the reviewer scores 5 unless `scores`
    says otherwise, and replies nonsense for keys in `garbled_reviews`."""
    scores = scores or {}

    def respond(body: dict) -> Reply:
        prompt = last_user_text(body)
        if body["model"] == "translator-model":
            return Reply(content=fake_translation(body, changed=changed))
        key = source_key(first_user_text(body))
        if key in garbled_reviews:
            return Reply(content="I think it is quite good overall.")
        score = scores.get(key, 5)
        assert "Translated answer" in prompt
        return Reply(content=json.dumps({"score": score, "reason": f"scored {score}"}))

    return respond


def make_endpoints(stub):
    fields = {"base_url": stub.base_url, "api_key_env": "STUB_API_KEY"}
    translator = Endpoint.objects.create(
        name="translator", model="translator-model", **fields
    )
    reviewer = Endpoint.objects.create(
        name="reviewer", model="reviewer-model", **fields
    )
    return translator, reviewer


def start(benchmark, translator, reviewer, languages=("en",), **options):
    return do_start_translation(
        benchmark,
        list(languages),
        translator,
        default_template("translation"),
        reviewer,
        default_template("faithfulness_review"),
        **options,
    )


def run_in_process(capture, benchmark, translator, reviewer, **options):
    """Start a run and execute its Celery tasks in this process (eagerly, in the
    order the commit callbacks queue them); returns the finished run."""
    with capture(execute=True):
        run = start(benchmark, translator, reviewer, **options)
    run.refresh_from_db()
    return run
