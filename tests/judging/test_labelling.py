"""Labelling runs end to end against the stub: three annotator endpoints, consensus,
final labels, re-runs from the record, adding an annotator, cancel and resume.

Celery runs eagerly here (the worker subprocess test is test_labelling_worker.py);
every task still goes through `transaction.on_commit` as in production.
"""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from assay.celery import app
from benchmark.actions import do_set_final_label
from benchmark.models import FinalLabel, Label
from judging.labelling.actions import (
    do_add_annotator,
    do_cancel_run,
    do_resume_run,
    do_start_labelling,
)
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.labelling.runs import run_progress
from judging.llm.actions import do_save_endpoint
from judging.llm.models import LLMCall
from judging.llm.prompts import default_template
from tests.judging.labelling_fixtures import PLAN, add_items, annotate
from tests.openai_stub import OpenAIStub


@pytest.fixture(autouse=True)
def eager_celery(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_PARSE_RETRIES = 1
    monkeypatch.setenv("STUB_API_KEY", "k")
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """committed(action, ...) runs the action and then, as a commit would, the
    work it queued (tasks run eagerly, including the ones they queue)."""

    def call(action, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            result = action(*args, **kwargs)
        return result

    return call


@pytest.fixture
def stub():
    with OpenAIStub(responder=annotate) as running:
        yield running


@pytest.fixture
def items(benchmark):
    return add_items(benchmark, PLAN)


def endpoint(stub, name):
    return do_save_endpoint(
        name,
        base_url=stub.base_url,
        model=f"{name}-model",
        api_key_env="STUB_API_KEY",
        max_concurrency=4,
    )


@pytest.fixture
def annotators(stub, db):
    return [endpoint(stub, name) for name in ("ann-a", "ann-b", "ann-c")]


@pytest.fixture
def start(committed):
    def start_run(benchmark, annotators, **kwargs):
        template = default_template("labelling")
        return committed(do_start_labelling, benchmark, annotators, template, **kwargs)

    return start_run


def final(item, dimension):
    return FinalLabel.objects.select_related("label").get(
        item=item, dimension__code=dimension
    )


def outcomes(run):
    return {
        (row.item.external_id, row.dimension.code): (
            row.outcome,
            row.label.code if row.label else None,
        )
        for row in LabelConsensus.objects.filter(run=run).select_related(
            "item", "dimension", "label"
        )
    }


def test_run_labels_items_and_applies_consensus(
    benchmark, items, annotators, stub, start
):
    run = start(benchmark, annotators)
    run.refresh_from_db()
    assert run.status == LabellingRun.Status.COMPLETE
    assert (run.total_calls, run.done_calls, run.unparseable_calls) == (12, 11, 1)
    assert run.pending_calls == 0 and run.consensus_at is not None
    assert run.input_tokens > 0
    assert AnnotatorLabel.objects.filter(run=run).count() == 24
    assert stub.duplicate_answers() == {}
    assert outcomes(run) == {
        ("IT-1", "capability"): ("full", "fault_diagnosis"),
        ("IT-1", "industry"): ("full", "energy_storage"),
        ("IT-2", "capability"): ("majority", "engineering_calculation"),
        ("IT-2", "industry"): ("majority", "electrical_power"),
        ("IT-3", "capability"): ("none", None),
        ("IT-3", "industry"): ("none", None),
        ("IT-4", "capability"): ("majority", "standards_terminology"),
        ("IT-4", "industry"): ("majority", "cross_industry"),
    }
    it1, it2, it3, _ = items
    assert final(it1, "capability").provenance == FinalLabel.Provenance.FULL_CONSENSUS
    assert final(it2, "industry").label.code == "electrical_power"
    assert final(it2, "industry").provenance == FinalLabel.Provenance.MAJORITY
    assert not FinalLabel.objects.filter(item=it3).exists()


def test_no_majority_rows_carry_the_candidates(benchmark, items, annotators, start):
    run = start(benchmark, annotators)
    row = LabelConsensus.objects.get(
        run=run, item__external_id="IT-3", dimension__code="industry"
    )
    assert row.votes == {
        "chemical_coatings": 1,
        "metallurgy_mining": 1,
        "textile_leather": 1,
    }
    candidates = {
        c.annotator.name: (c.label.code, c.rationale) for c in row.candidates()
    }
    assert candidates == {
        "ann-a": ("chemical_coatings", "ann-a thinks so"),
        "ann-b": ("metallurgy_mining", "ann-b thinks so"),
        "ann-c": ("textile_leather", "ann-c thinks so"),
    }


def test_unparseable_annotator_is_flagged_with_its_raw_text(
    benchmark, items, annotators, start
):
    run = start(benchmark, annotators)
    flagged = AnnotatorLabel.objects.get(
        run=run,
        item__external_id="IT-4",
        annotator__name="ann-c",
        dimension__code="capability",
    )
    assert flagged.status == AnnotatorLabel.Status.UNPARSEABLE
    assert flagged.label is None
    assert flagged.call.raw_response == "I would rather not say."
    assert flagged.call.status == LLMCall.Status.UNPARSEABLE


def test_human_decisions_are_never_overwritten(benchmark, items, annotators, start):
    it1 = items[0]
    manual = Label.objects.get(dimension__code="capability", code="quality_metrology")
    do_set_final_label(it1, manual, provenance=FinalLabel.Provenance.ADJUDICATED)
    run = start(benchmark, annotators)
    assert final(it1, "capability").label == manual
    assert final(it1, "capability").provenance == FinalLabel.Provenance.ADJUDICATED
    row = LabelConsensus.objects.get(run=run, item=it1, dimension__code="capability")
    assert row.kept_final_label


def test_a_second_run_is_served_from_the_record_unless_refreshed(
    benchmark, items, annotators, stub, start
):
    start(benchmark, annotators)
    first_requests = stub.request_count
    second = start(benchmark, annotators)
    second.refresh_from_db()
    assert stub.request_count == first_requests
    assert second.cached_calls == 12
    assert outcomes(second)[("IT-2", "capability")] == (
        "majority",
        "engineering_calculation",
    )
    refreshed = start(benchmark, annotators, refresh=True)
    refreshed.refresh_from_db()
    assert refreshed.cached_calls == 0
    assert stub.request_count == 2 * first_requests


def test_adding_an_annotator_recomputes_consensus(
    benchmark, items, annotators, stub, start, committed
):
    run = start(benchmark, annotators)
    committed(do_add_annotator, run, endpoint(stub, "ann-d"))
    run.refresh_from_db()
    assert run.total_calls == 16 and run.pending_calls == 0
    result = outcomes(run)
    # IT-2 capability: calc, calc, quality, quality — a tie among four.
    assert result[("IT-2", "capability")] == ("none", None)
    # IT-3: the fourth agrees with ann-a only, still no majority of four.
    assert result[("IT-3", "capability")] == ("none", None)
    assert result[("IT-1", "industry")] == ("full", "energy_storage")
    assert (
        LabelConsensus.objects.get(
            run=run, item__external_id="IT-1", dimension__code="industry"
        ).annotator_count
        == 4
    )


def test_subset_filter(benchmark, items, annotators, start):
    run = start(benchmark, annotators, item_filter={"external_ids": ["IT-1", "IT-2"]})
    run.refresh_from_db()
    assert run.total_calls == 6
    assert {key[0] for key in outcomes(run)} == {"IT-1", "IT-2"}


def test_cancel_then_resume(benchmark, items, annotators, stub, committed):
    from judging.labelling import runs

    run = LabellingRun.objects.create(
        benchmark=benchmark, template=default_template("labelling")
    )
    run.annotators.set(annotators)
    # Started, but its queued chunks never run (nothing commits outside `committed`).
    runs.start_run(run.pk)
    do_cancel_run(run)
    run.refresh_from_db()
    assert run.status == LabellingRun.Status.CANCELLED
    assert runs.label_chunk(run.pk, [items[0].pk]) is None
    assert stub.request_count == 0
    with pytest.raises(ValidationError):
        do_cancel_run(run)
    committed(do_resume_run, run)
    run.refresh_from_db()
    assert run.status == LabellingRun.Status.COMPLETE
    assert run.done_calls == 11
    assert run_progress(run)["pending"] == 0


def test_failed_calls_are_retried_on_resume(
    benchmark, items, annotators, stub, start, committed
):
    stub.models = {"ann-a-model", "ann-b-model"}  # ann-c answers 404 for now
    run = start(benchmark, annotators)
    run.refresh_from_db()
    assert (run.done_calls, run.failed_calls) == (8, 4)
    assert run.status == LabellingRun.Status.ATTENTION
    assert run.consensus_at is not None, "consensus over the labels it has"
    stub.models = None
    committed(do_resume_run, run)
    run.refresh_from_db()
    assert (run.done_calls, run.failed_calls, run.unparseable_calls) == (11, 0, 1)
    # An unparseable reply is a flagged result, not a failure: nothing to retry.
    assert run.status == LabellingRun.Status.COMPLETE
    assert outcomes(run)[("IT-2", "industry")] == ("majority", "electrical_power")


def test_start_refuses_bad_input(benchmark, items, annotators):
    template = default_template("labelling")
    with pytest.raises(ValidationError, match="at least two"):
        do_start_labelling(benchmark, annotators[:1], template)
    with pytest.raises(ValidationError, match="not labelling"):
        do_start_labelling(benchmark, annotators, default_template("rubric_judging"))
    assert not LabellingRun.objects.exists()


def test_start_labelling_reads_items_listed_with_spaces(
    transactional_db, benchmark, items, annotators, stub, capsys
):
    listed = [item.external_id for item in items[:2]]
    call_command(
        "start_labelling",
        "--benchmark",
        benchmark.slug,
        "--annotators",
        "ann-a, ann-b, ann-c",
        "--items",
        ", ".join(listed),
        "--wait",
    )
    run = LabellingRun.objects.get()
    assert run.total_calls == 2 * 3
    asked = {label.item.external_id for label in AnnotatorLabel.objects.filter(run=run)}
    assert asked == set(listed)


def test_commands(transactional_db, benchmark, items, annotators, stub, capsys):
    call_command(
        "add_endpoint",
        "ann-x",
        "--base-url",
        stub.base_url,
        "--model",
        "ann-a-model",
        "--api-key-env",
        "STUB_API_KEY",
        "--max-concurrency",
        "3",
        "--rpm",
        "6000",
        "--param",
        "temperature=0",
        "--param",
        "enable_thinking=false",
    )
    call_command(
        "start_labelling",
        "--benchmark",
        benchmark.slug,
        "--annotators",
        "ann-x,ann-b,ann-c",
        "--wait",
    )
    lines = capsys.readouterr().out.strip().splitlines()
    run_id = int(lines[-2])
    summary = json.loads(lines[-1])
    assert summary["status"] == "complete"
    assert (summary["done"], summary["unparseable"], summary["pending"]) == (11, 1, 0)
    assert summary["consensus"]["capability"] == {"full": 1, "majority": 2, "none": 1}
    from_ann_x = [r.body for r in stub.requests if "enable_thinking" in r.body]
    assert len(from_ann_x) == 4
    assert all(
        b["enable_thinking"] is False and b["temperature"] == 0 for b in from_ann_x
    )
    call_command("run_status", str(run_id), "--format", "json")
    assert json.loads(capsys.readouterr().out)["done"] == 11
    call_command("consensus_report", "--benchmark", benchmark.slug, "--format", "json")
    report = json.loads(capsys.readouterr().out)
    capability = report["dimensions"][0]
    assert (capability["full"], capability["majority"], capability["none"]) == (1, 2, 1)
    assert capability["full_pct"] == 25.0
    assert len(capability["pairwise"]) == 3
    call_command("consensus_report", "--benchmark", benchmark.slug, "--format", "csv")
    csv_text = capsys.readouterr().out
    assert csv_text.startswith("dimension,units,full,full_pct")
    assert "cohen_kappa,ann-b,ann-c" in csv_text or "ann-b,ann-c" in csv_text


def test_keep_alive_beats_the_heart_until_the_run_is_cancelled(
    benchmark, items, annotators
):
    from datetime import timedelta

    from django.utils import timezone

    from judging.runs.lifecycle import keep_alive

    run = do_start_labelling(benchmark, annotators, default_template("labelling"))
    long_ago = timezone.now() - timedelta(hours=1)
    LabellingRun.objects.filter(pk=run.pk).update(
        status=LabellingRun.Status.RUNNING, heartbeat_at=long_ago
    )
    assert keep_alive(LabellingRun, run.pk)
    run.refresh_from_db()
    assert run.heartbeat_at > long_ago
    do_cancel_run(run)
    assert not keep_alive(LabellingRun, run.pk)
