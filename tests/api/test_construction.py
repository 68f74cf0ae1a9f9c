"""Construction over the API, as its pages: sources in, a stage started and
followed, the funnel and candidates read, a flag reviewed, audits listed."""

import io
import json
from unittest import mock

import pytest

from construction.models import Source, Stage, StageDecision, StageRun
from tests.api.helpers import BASE, token_client
from tests.construction.factories import make_candidate, make_source


@pytest.fixture
def manager_api(personas):
    return token_client(personas["manager"])


def base(benchmark) -> str:
    return f"{BASE}/benchmarks/{benchmark.slug}/construction"


def sources_file(*texts: str) -> io.BytesIO:
    lines = "".join(
        f'{{"kind": "gbt_standard", "reference": "GB/T {n}", "text": "{text}"}}\n'
        for n, text in enumerate(texts)
    )
    upload = io.BytesIO(lines.encode())
    upload.name = "sources.jsonl"
    return upload


def test_sources_are_imported_once(benchmark, manager_api):
    url = f"{base(benchmark)}/sources"
    first = manager_api.post(url, {"file": sources_file("额定电压 250 V", "M8 螺距")})
    assert first.status_code == 201
    assert first.json() == {"added": 2, "already_present": 0, "filtered_out": 0}
    again = manager_api.post(url, {"file": sources_file("额定电压 250 V")})
    assert again.json() == {"added": 0, "already_present": 1, "filtered_out": 0}
    assert Source.objects.count() == 2


def test_a_stage_is_started_by_names_and_followed(benchmark, manager_api):
    make_candidate(make_source(benchmark), "额定电压是多少？")
    url = f"{base(benchmark)}/stages"
    unknown = manager_api.post(
        url, {"stage": "dedup", "endpoint": "nope"}, "application/json"
    )
    assert unknown.status_code == 422
    assert "nope" in unknown.json()["detail"]
    with mock.patch("construction.tasks.start_stage_run.delay"):
        started = manager_api.post(url, {"stage": "dedup"}, "application/json")
    assert started.status_code == 201, started.content
    run = StageRun.objects.get()
    assert (started.json()["id"], started.json()["stage"]) == (run.pk, "dedup")
    polled = manager_api.get(f"{BASE}/construction/runs/{run.pk}").json()
    assert polled["status"] == run.status
    assert set(polled["progress"]) >= {"total", "finished", "pending", "open"}


def test_funnel_and_candidates_are_read(benchmark, manager_api):
    source = make_source(benchmark)
    made = [make_candidate(source, f"Q{n}") for n in range(3)]
    funnel = manager_api.get(f"{base(benchmark)}/funnel").json()
    assert funnel["columns"] and funnel["rows"]
    page = manager_api.get(f"{base(benchmark)}/candidates", {"limit": 2}).json()
    rest = manager_api.get(
        f"{base(benchmark)}/candidates", {"cursor": page["next_cursor"]}
    ).json()
    listed = page["candidates"] + rest["candidates"]
    assert [c["id"] for c in listed] == [c.pk for c in made]
    assert rest["next_cursor"] is None


def test_a_flag_is_reviewed_as_on_the_screen(benchmark, manager_api, personas):
    candidate = make_candidate(make_source(benchmark), "本表中的额定电压？")
    flag = StageDecision.objects.create(
        candidate=candidate,
        stage=Stage.DANGLING,
        outcome=StageDecision.Outcome.PENDING,
        reason="dangling reference",
        prompt_version="post v1",
        evidence={"dangling": {"question": [["本表", 0, 2]]}},
    )
    listed = manager_api.get(f"{base(benchmark)}/flags").json()
    assert [f["id"] for f in listed] == [flag.pk]
    url = f"{base(benchmark)}/flags/{flag.pk}"
    no_reason = manager_api.post(url, {"outcome": "reject"}, "application/json")
    assert no_reason.status_code == 422
    removed = manager_api.post(
        url, {"outcome": "reject", "reason": "needs the table"}, "application/json"
    )
    assert removed.status_code == 200
    assert removed.json()["outcome"] == "reject"
    flag.refresh_from_db()
    assert (flag.reason, flag.decided_by) == ("needs the table", personas["manager"])
    # Decided the other way already: a state conflict, nothing changed.
    conflict = manager_api.post(url, {"outcome": "pass"}, "application/json")
    assert conflict.status_code == 409
    assert "already removed" in conflict.json()["detail"]
    flag.refresh_from_db()
    assert (flag.outcome, flag.reason) == ("reject", "needs the table")
    assert manager_api.get(f"{base(benchmark)}/flags").json() == []


def test_stage_audits_are_listed_and_an_unknown_stage_is_404(benchmark, manager_api):
    assert manager_api.get(f"{base(benchmark)}/stages/quality/audits").json() == []
    assert manager_api.get(f"{base(benchmark)}/stages/nope/audits").status_code == 404


def test_forum_posts_are_filtered_verified_and_released(benchmark, personas):
    """Posts below the query's view threshold are left out; an expert verifies
    the converted items over the API (a broken edit refused, nothing changed);
    the manager releases them."""
    manager_api, expert_api = (
        token_client(personas[name]) for name in ("manager", "expert")
    )
    rows = [
        {
            "kind": "forum_post",
            "reference": f"f {n}",
            "text": f"Q{n}",
            "fields": {"views": views},
        }
        for n, views in enumerate((10, 500, 900))
    ]
    upload = io.BytesIO("\n".join(json.dumps(r) for r in rows).encode())
    upload.name = "posts.jsonl"
    imported = manager_api.post(
        f"{base(benchmark)}/sources?min_views=100", {"file": upload}
    )
    assert imported.json() == {"added": 2, "already_present": 0, "filtered_out": 1}
    early = manager_api.post(f"{base(benchmark)}/expert/open")
    assert early.status_code == 422 and "conversion" in early.json()["detail"]

    forms = {
        "Q1": {
            "format": "multiple_choice",
            "question": "Which?",
            "correct": ["B"],
            "options": ["one", "two", "three", "four", "five"],
        },
        "Q2": {
            "format": "short_answer",
            "question": "Why?",
            "answer": "Heat.",
            "key_points": ["heat"],
        },
    }
    for source in Source.objects.filter(benchmark=benchmark):
        candidate = make_candidate(
            source,
            source.text,
            [
                ("extract_qa", "pass", ""),
                ("qa_filter", "pass", ""),
                ("convert", "pass", ""),
            ],
        )
        candidate.form = forms[source.text]
        candidate.save(update_fields=["form"])
    opened = manager_api.post(f"{base(benchmark)}/expert/open")
    assert opened.json()["count"] == 2
    waiting = expert_api.get(f"{base(benchmark)}/expert").json()
    assert [(w["format"], len(w["options"])) for w in waiting] == [
        ("multiple_choice", 5),
        ("short_answer", 0),
    ]
    mc, short = waiting
    broken = {
        "outcome": "refine",
        "question": "Which?",
        "options": ["a", "a"],
        "correct": "A",
    }
    refused = expert_api.post(
        f"{base(benchmark)}/expert/{mc['id']}", broken, "application/json"
    )
    assert refused.status_code == 422 and "5 to 7 options" in refused.json()["detail"]
    assert StageDecision.objects.get(pk=mc["id"]).outcome == "pending"
    edit = {**broken, "options": ["six", "seven", "eight", "nine", "ten", "eleven"]}
    edited = expert_api.post(
        f"{base(benchmark)}/expert/{mc['id']}", edit, "application/json"
    )
    assert edited.json()["outcome"] == "refine"
    assert edited.json()["options"][0] == "six"
    conflict = expert_api.post(
        f"{base(benchmark)}/expert/{mc['id']}", {"outcome": "pass"}, "application/json"
    )
    assert conflict.status_code == 409 and "already" in conflict.json()["detail"]
    assert StageDecision.objects.get(pk=mc["id"]).outcome == "refine"
    expert_api.post(
        f"{base(benchmark)}/expert/{short['id']}",
        {"outcome": "pass"},
        "application/json",
    )
    released = manager_api.post(f"{base(benchmark)}/forum-release")
    assert released.json()["count"] == 2
    item = benchmark.items.get(format="multiple_choice")
    assert item.correct_options == ["A"]
    assert item.renderings.get(is_current=True).options[0] == "six"
