"""Prompt iteration: a trial decides a seeded sample of the stage's input under
a new prompt version; the full run with that version later asks only for the
rest; the comparison page puts two versions side by side."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from construction import pipeline
from construction.actions import do_start_stage
from construction.models import StageDecision, StageRun
from judging.llm.models import PromptTemplate
from judging.llm.prompts import default_template
from tests.construction.stage_fixtures import (
    import_sources,
    respond,
    run_here,
    stub_endpoint,
)
from tests.openai_stub import OpenAIStub, first_user_text


def strict_or_planned(body):
    if first_user_text(body).startswith("Strictly"):
        return json.dumps({"verdict": "reject", "reason": "Strict: no tolerance."})
    return respond(body)


@pytest.fixture
def built(benchmark, monkeypatch, settings):
    """Generation and dedup done: three candidates wait for the quality check."""
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_PARSE_RETRIES = 0
    monkeypatch.setenv("STUB_API_KEY", "k")
    import_sources(benchmark)
    with OpenAIStub(responder=strict_or_planned) as stub:
        endpoint = stub_endpoint(stub)
        run_here(
            benchmark,
            "generation",
            endpoint=endpoint,
            template=default_template("generation"),
            questions_per_source=2,
        )
        run_here(benchmark, "dedup")
        stub.reset()
        yield stub, endpoint


@pytest.fixture
def strict(db):
    return PromptTemplate.objects.create(
        name="quality-strict",
        purpose="quality_check",
        text="Strictly check the candidate.\n{{question}}\n{{reference_answer}}\n"
        "{{knowledge_text}}",
    )


def quality(version):
    return dict(
        StageDecision.objects.filter(
            stage="quality", prompt_version=version
        ).values_list("candidate_id", "outcome")
    )


def test_a_trial_decides_its_sample_and_the_full_run_pays_only_for_the_rest(
    benchmark, built, strict
):
    stub, endpoint = built
    pool = [c.pk for c in pipeline.stage_pool(benchmark.pk, "quality")]
    assert len(pool) == 3
    trial = run_here(
        benchmark, "quality", endpoint=endpoint, template=strict, trial_size=2
    )
    assert trial.is_trial and trial.status == StageRun.Status.COMPLETE
    assert len(trial.trial_units) == 2 and set(trial.trial_units) <= set(pool)
    assert trial.total_units == 2 and stub.request_count == 2
    assert set(quality("quality-strict v1")) == set(trial.trial_units)
    # The same size and seed draw the same sample.
    again = do_start_stage(
        benchmark, "quality", endpoint=endpoint, template=strict, trial_size=2
    )
    assert pipeline.draw_trial(again) == trial.trial_units

    full = run_here(benchmark, "quality", endpoint=endpoint, template=strict)
    assert full.total_units == 1  # the trial's two are in the ledger already
    assert stub.request_count == 3  # one more call, none repeated
    assert stub.duplicate_answers() == {}
    assert set(quality("quality-strict v1")) == set(pool)


def test_only_an_llm_stage_is_tried(benchmark, built):
    with pytest.raises(ValidationError, match="Only a stage that asks an LLM"):
        do_start_stage(benchmark, "dedup", trial_size=2)


def test_two_versions_side_by_side(benchmark, built, strict, client_for):
    _, endpoint = built
    run_here(
        benchmark,
        "quality",
        endpoint=endpoint,
        template=default_template("quality_check"),
    )
    run_here(benchmark, "quality", endpoint=endpoint, template=strict, trial_size=2)
    default_version = StageDecision.objects.filter(stage="quality").first()
    version_a = default_version.prompt_version
    url = reverse("construction:compare", args=[benchmark.slug, "quality"])
    page = client_for("manager").get(url, {"a": version_a, "b": "quality-strict v1"})
    assert page.status_code == 200
    result = page.context["result"]
    a, b = quality(version_a), quality("quality-strict v1")
    common = a.keys() & b.keys()
    assert result.comparison.agreement.n == 2 == len(common)
    differ = {pk for pk in common if a[pk] != b[pk]}
    assert result.total_differences == len(differ)
    assert {row[0].pk for row in result.differences} == differ
    table = dict(result.rows)
    assert sum(map(sum, table.values())) == 2
    assert table["reject"][1] == sum(1 for pk in common if a[pk] == "reject")
    html = page.content.decode()
    assert "Strict: no tolerance." in html
    assert "All four hold." in html or "Not enough constraints." in html

    same = client_for("manager").get(url, {"a": version_a, "b": version_a})
    assert same.status_code == 400
    assert "Choose two different versions" in same.content.decode()


def test_a_manager_starts_a_trial_on_the_stage_page(
    benchmark, built, strict, client_for, django_capture_on_commit_callbacks
):
    _, endpoint = built
    url = reverse("construction:start_trial", args=[benchmark.slug, "quality"])
    with django_capture_on_commit_callbacks() as queued:
        response = client_for("manager").post(
            url,
            {"endpoint": endpoint.pk, "template": strict.pk, "size": 2, "seed": 4},
        )
    assert response.status_code == 302
    run = StageRun.objects.get(trial_size=2)
    assert (run.trial_seed, run.template, run.stage) == (4, strict, "quality")
    assert len(queued) == 1
    refused = client_for("manager").post(
        url, {"endpoint": endpoint.pk, "template": strict.pk, "size": 0, "seed": 4}
    )
    assert refused.status_code == 400
    assert StageRun.objects.filter(trial_size__gt=0).count() == 1
    dedup = reverse("construction:start_trial", args=[benchmark.slug, "dedup"])
    assert client_for("manager").post(dedup, {}).status_code == 404
