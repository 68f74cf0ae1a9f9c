"""A real Celery worker runs IndustryBench preset runs queued by start_evaluation
(no --wait): the zh run is judged with the Chinese judge, the en run with the
English one, and every verdict records the template version it used."""

import io

import pytest
from django.core.management import call_command

from judging.evaluation.models import EvaluationRun, Judgment
from tests.judging.evaluation_stub import preset_responder, role_endpoints
from tests.judging.factories import make_items
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import OpenAIStub


@pytest.mark.worker
def test_worker_judges_each_language_with_its_template(running_worker, benchmark):
    make_items(benchmark, 6)
    with OpenAIStub(api_key="k", latency=0.02, responder=preset_responder) as stub:
        role_endpoints(stub, concurrency=4)
        for language in ("zh", "en"):
            call_command(
                "start_evaluation",
                *("--benchmark", benchmark.slug, "--model", "tested"),
                *("--judge", "judge", "--sv-judge", "sv", "--language", language),
                *("--preset", "industrybench"),
                stdout=io.StringIO(),
            )
        wait_until(
            lambda: (
                set(EvaluationRun.objects.values_list("status", flat=True))
                == {EvaluationRun.Status.COMPLETE}
            ),
            90,
            "the preset runs never completed",
        )
        assert stub.duplicate_answers() == {}
    for language, judge, score in (
        ("zh", "industrybench-judge-zh v1", 2),
        ("en", "industrybench-judge-en v1", 3),
    ):
        run = EvaluationRun.objects.get(language=language)
        rubric = Judgment.objects.filter(response__run=run, kind="rubric")
        assert {(j.prompt_version, j.template.language, j.score) for j in rubric} == {
            (judge, language, score)
        }
        safety = Judgment.objects.filter(response__run=run, kind="safety")
        assert {j.prompt_version for j in safety} == {"industrybench-sv v1"}
        assert safety.filter(safety_violation=True).count() == 1
        assert run.judge_set_versions == {
            "zh": "industrybench-judge-zh v1",
            "*": "industrybench-judge-en v1",
        }
