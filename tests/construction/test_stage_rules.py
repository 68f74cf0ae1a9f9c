"""The rules around stage runs that need no worker: the strict output contracts,
the order of stages, and what a start refuses."""

import pytest
from django.core.exceptions import ValidationError

from construction.actions import check_start_stage, do_start_stage
from construction.models import StageDecision, StageRun
from judging.llm.outputs import OutputError, generation_validator, verdict_validator
from judging.llm.prompts import default_template
from tests.construction.stage_fixtures import import_sources


@pytest.mark.parametrize(
    "reply",
    [
        '{"items": []}',
        '{"items": [{"question": "q"}]}',
        '{"items": [{"question": "q", "answer": "a", "label": "x"}]}',
        '{"items": [{"question": " ", "answer": "a"}]}',
        '{"items": [{"question": "q", "answer": "a"}, {"question": "q", '
        '"answer": "a"}, {"question": "q", "answer": "a"}]}',
        '{"questions": [{"question": "q", "answer": "a"}]}',
    ],
)
def test_generation_replies_are_checked_strictly(reply):
    with pytest.raises(OutputError):
        generation_validator(2)(reply)


def test_a_good_generation_reply():
    reply = 'Here: {"items": [{"question": "额定电压？", "answer": "250 V"}]}'
    assert generation_validator(2)(reply) == {
        "items": [{"question": "额定电压？", "answer": "250 V"}]
    }


def test_quality_verdicts():
    assert verdict_validator('{"verdict": "reject", "reason": "vague"}') == {
        "verdict": "reject",
        "reason": "vague",
    }
    for reply in ('{"verdict": "maybe", "reason": "r"}', '{"verdict": "pass"}'):
        with pytest.raises(OutputError):
            verdict_validator(reply)


def test_stages_run_in_order(benchmark, db):
    with pytest.raises(ValidationError, match="no sources"):
        check_start_stage(benchmark, "generation", endpoint=None, template=None)
    with pytest.raises(ValidationError, match="generation stage first"):
        check_start_stage(benchmark, "dedup", endpoint=None, template=None)
    import_sources(benchmark)
    with pytest.raises(ValidationError, match="active endpoint"):
        check_start_stage(
            benchmark,
            "generation",
            endpoint=None,
            template=default_template("generation"),
        )


def test_a_prompt_of_another_purpose_is_refused(benchmark, db):
    from judging.llm.actions import do_save_endpoint

    import_sources(benchmark)
    endpoint = do_save_endpoint(
        "e", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="STUB_API_KEY"
    )
    with pytest.raises(ValidationError, match="prompt, not question generation"):
        do_start_stage(
            benchmark,
            "generation",
            endpoint=endpoint,
            template=default_template("quality_check"),
        )
    assert not StageRun.objects.exists()


def test_chunks_start_with_a_half_one_and_skip_decided_units(benchmark, monkeypatch):
    from construction import pipeline
    from tests.construction.factories import make_candidate, make_source

    source = make_source(benchmark)
    candidates = [
        make_candidate(source, f"问题 {n}", [("dedup", "pass", "")]) for n in range(9)
    ]
    run = StageRun.objects.create(
        benchmark=benchmark,
        stage="quality",
        template=default_template("quality_check"),
    )
    monkeypatch.setattr(pipeline, "CHUNK_CANDIDATES", 4)
    ids = [candidate.pk for candidate in candidates]
    assert pipeline.open_chunks(run) == [
        (run.pk, ids[:2]),
        (run.pk, ids[2:6]),
        (run.pk, ids[6:]),
    ]
    # A chunk run again (queued twice, or after a resume) asks only for the
    # units still without a result.
    StageDecision.objects.create(
        candidate=candidates[3],
        stage="quality",
        outcome="pass",
        prompt_version=run.prompt_version,
    )
    StageDecision.objects.create(
        candidate=candidates[4],
        stage="quality",
        outcome="pending",
        prompt_version=run.prompt_version,
    )
    assert pipeline.still_open(run, ids[2:6]) == [ids[2], ids[4], ids[5]]


def test_a_stage_start_lists_its_open_units_once(benchmark, monkeypatch):
    """Listing a stage's open units costs 0.2–0.4 s at 10,000 candidates: the
    start counts them and cuts its chunks from the one list."""
    from construction import pipeline
    from judging.runs import lifecycle
    from tests.construction.factories import make_candidate, make_source

    source = make_source(benchmark)
    ids = [
        make_candidate(source, f"问题 {n}", [("dedup", "pass", "")]).pk
        for n in range(9)
    ]
    run = StageRun.objects.create(
        benchmark=benchmark,
        stage="quality",
        template=default_template("quality_check"),
    )
    monkeypatch.setattr(pipeline, "CHUNK_CANDIDATES", 4)
    listed, queued = [], []
    open_units = pipeline.open_units
    monkeypatch.setattr(
        pipeline, "open_units", lambda run: listed.append(run.pk) or open_units(run)
    )
    monkeypatch.setattr(lifecycle, "enqueue", lambda task, *args: queued.append(args))
    assert lifecycle.start(pipeline.STAGES, run.pk) == 3
    assert listed == [run.pk]
    assert queued == [(run.pk, ids[:2]), (run.pk, ids[2:6]), (run.pk, ids[6:])]
    run.refresh_from_db()
    assert (run.status, run.total_units) == (StageRun.Status.RUNNING, 9)
