"""The forum pipeline's stages in this process against the reading stub: the
import filter, the screenshots sent as image parts, the refused conversion asked
again, the item forms, the expert's verdicts and the release; plus the rules of
the pure parts (metadata, output contracts) and the refusals."""

import json

import pytest
from django.core.exceptions import ValidationError

from benchmark.models import Item
from benchmark.validation import ImportRejected
from construction.actions import do_import_sources, do_start_stage
from construction.expert.actions import (
    do_open_expert_review,
    do_release_forum,
    do_verify_item,
    waiting,
)
from construction.forum import outputs
from construction.forum.posts import PostFilter
from construction.models import Candidate, Source, StageDecision
from construction.report import funnel_rows
from judging.llm.outputs import OutputError
from judging.llm.prompts import default_template
from reviewqueue.engine import StaleRefusal
from tests.construction.forum_fixtures import (
    FORUM_FUNNEL_BEFORE_EXPERTS,
    MULTIPLE_CHOICE,
    SHORT_ANSWER,
    import_posts,
)
from tests.construction.stage_fixtures import run_here, stub_endpoint
from tests.openai_stub import ForumModel, OpenAIStub


def funnel(benchmark):
    return [
        (row.stage, (row.entered, row.passed, row.rejected, row.pending))
        for row in funnel_rows(benchmark.pk)
        if row.group == "all"
    ]


def run_forum_stages(benchmark, endpoint, run=run_here):
    template = default_template
    run(
        benchmark,
        "extract_qa",
        endpoint=endpoint,
        template=template("forum_extract"),
    )
    run(benchmark, "dedup", threshold=0.9)
    run(benchmark, "qa_filter", endpoint=endpoint, template=template("forum_quality"))
    return run(
        benchmark,
        "convert",
        endpoint=endpoint,
        template=template("forum_multiple_choice"),
        verifier_template=template("forum_short_answer"),
    )


@pytest.mark.django_db(transaction=True)
def test_posts_become_items_through_every_stage(benchmark, personas, monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "k")
    result = import_posts(benchmark)
    assert (result.added, result.filtered_out) == (10, 1)
    model = ForumModel()
    with OpenAIStub(responder=model) as stub:
        convert = run_forum_stages(benchmark, stub_endpoint(stub))
        image_requests = [
            r
            for r in stub.requests
            if isinstance(r.body["messages"][-1]["content"], list)
        ]
    assert convert.status == "complete"
    assert model.images_seen == 2 and len(image_requests) == 2
    assert funnel(benchmark) == [
        *FORUM_FUNNEL_BEFORE_EXPERTS,
        ("expert", (0, 0, 0, 0)),
        ("released", (0, 0, 0, 0)),
    ]
    forms = {c.source.fields["post_id"]: c.form for c in Candidate.objects.all()}
    for post_id in MULTIPLE_CHOICE:
        form = forms[post_id]
        assert form["format"] == "multiple_choice"
        assert 5 <= len(form["options"]) <= 7
        assert len({outputs.normal(o) for o in form["options"]}) == len(form["options"])
        (key,) = form["correct"]
        # The key is the option carrying the answer the replies gave.
        answer = Candidate.objects.get(source__fields__post_id=post_id)
        assert form["options"]["ABCDEFG".index(key)] == answer.reference_answer
    for post_id in SHORT_ANSWER:
        assert forms[post_id]["format"] == "short_answer"
        assert 1 <= len(forms[post_id]["key_points"]) <= 5
    # The screenshot-only question was read off the image.
    assert "tremolo" in forms["POST-03"]["question"]
    torque = StageDecision.objects.get(
        stage="convert", candidate__source__fields__post_id="POST-09"
    )
    assert "repeats option A" in torque.call.parse_errors[0]["error"]

    assert do_open_expert_review(benchmark) == 6
    assert do_open_expert_review(benchmark) == 0
    expert = personas["expert"]
    pending = list(waiting(benchmark.pk).select_related("candidate"))
    # Candidates are numbered as the extraction's replies come back: pick by form.
    pending.sort(key=lambda d: d.candidate.form["format"] != "multiple_choice")
    with pytest.raises(ValidationError, match="Say why"):
        do_verify_item(pending[0], "reject", reason=" ", user=expert)
    with pytest.raises(ValidationError, match="wait for expert verification"):
        do_release_forum(benchmark, user=personas["manager"])
    bad_edit = {"question": "Q?", "options": ["a", "b", "a"], "correct": "H"}
    with pytest.raises(ValidationError, match="5 to 7 options"):
        do_verify_item(pending[0], "refine", edit=bad_edit, user=expert)
    first = pending[0].candidate
    key_text = first.form["options"]["ABCDEFG".index(first.form["correct"][0])]
    others = [o for o in first.form["options"] if o != key_text][:3]
    options = [key_text, *others, "A fifth, new distractor"]
    edit = {"question": "Edited: " + first.form["question"], "options": options}
    edit["correct"] = "A"
    do_verify_item(pending[0], "refine", edit=edit, user=expert)
    do_verify_item(
        pending[1], "reject", reason="Key points miss the cause.", user=expert
    )
    for decision in pending[2:]:
        do_verify_item(decision, "pass", user=expert)
    with pytest.raises(StaleRefusal):
        do_verify_item(pending[1], "pass", user=expert)

    release = do_release_forum(benchmark, user=personas["manager"])
    assert release.released == 5
    assert do_release_forum(benchmark).released == 0
    items = Item.objects.filter(benchmark=benchmark, status="active")
    kept = StageDecision.objects.filter(stage="expert").exclude(outcome="reject")
    expected = sorted(decision.candidate.form["format"] for decision in kept)
    assert sorted(items.values_list("format", flat=True)) == expected
    assert set(expected) == {"multiple_choice", "short_answer"}
    edited = Item.objects.get(candidate=first)
    rendering = edited.renderings.get(is_current=True)
    assert rendering.question.startswith("Edited: ")
    assert rendering.options == options
    events = edited.events.get(kind="created")
    assert events.after["post"]["post_id"] == first.source.fields["post_id"]
    assert events.after["post"]["views"] == 400
    assert funnel(benchmark)[-2:] == [
        ("expert", (6, 5, 1, 0)),
        ("released", (5, 5, 0, 0)),
    ]


def test_post_metadata_is_checked_and_nothing_is_written(benchmark):
    rows = [
        {"kind": "forum_post", "reference": "f 1", "text": "Q: x", "fields": f}
        for f in (
            {"views": "many"},
            {"replies": -2},
            {"posted_at": "yesterday"},
            {"images": ["ftp://host/shot.png"]},
            {"format": "essay"},
        )
    ]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    with pytest.raises(ImportRejected) as rejected:
        do_import_sources(benchmark, data, "posts.jsonl")
    fields = [problem.field for problem in rejected.value.problems]
    assert fields == ["views", "replies", "posted_at", "images", "format"]
    assert not Source.objects.exists()


def test_the_filter_keeps_posts_by_views_replies_votes_and_dates():
    fields = {"views": 120, "replies": 3, "votes": -1, "posted_at": "2024-05-02"}
    assert PostFilter().keeps(fields)
    assert PostFilter(min_views=100, min_replies=3).keeps(fields)
    assert not PostFilter(min_views=121).keeps(fields)
    assert not PostFilter(min_votes=0).keeps(fields)
    from datetime import date

    assert PostFilter(posted_from=date(2024, 5, 1)).keeps(fields)
    assert not PostFilter(posted_to=date(2024, 5, 1)).keeps(fields)
    assert not PostFilter(posted_from=date(2024, 1, 1)).keeps({"views": 1})


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ({"options": ["a", "b", "c", "d"], "correct": "A"}, "5 to 7 options"),
        ({"options": ["a", "b", "c", "d", "A."], "correct": "A"}, "repeats option A"),
        ({"options": ["a", "b", "c", "d", "e"], "correct": "F"}, "not one of"),
        ({"options": ["a", "b", "c", "d", "e"], "correct": "A, B"}, "exactly one"),
    ],
)
def test_a_multiple_choice_reply_breaking_a_rule_is_refused(reply, error):
    with pytest.raises(OutputError, match=error):
        outputs.multiple_choice(json.dumps({"question": "Which?", **reply}))


def test_lettered_options_lose_their_letters():
    reply = {
        "question": "Which?",
        "options": ["A. one", "B) two", "(C) three", "D. four", "E. five"],
        "correct": "c",
    }
    parsed = outputs.multiple_choice(json.dumps(reply))
    assert parsed["options"] == ["one", "two", "three", "four", "five"]
    assert parsed["correct"] == ["C"]


def test_a_stage_prompt_lacking_its_placeholders_is_refused(benchmark, monkeypatch):
    monkeypatch.setenv("STUB_API_KEY", "k")
    import_posts(benchmark)
    with OpenAIStub(responder=ForumModel()) as stub:
        endpoint = stub_endpoint(stub)
        with pytest.raises(ValidationError, match="not qa extraction"):
            do_start_stage(
                benchmark,
                "extract_qa",
                endpoint=endpoint,
                template=default_template("forum_quality"),
            )
        with pytest.raises(ValidationError, match="Run the qa extraction"):
            do_start_stage(
                benchmark,
                "qa_filter",
                endpoint=endpoint,
                template=default_template("forum_quality"),
            )
