"""Variants are asked for real (issue 25, item 2): each variant's request is
built from its own rendering, so order, irrelevant-option and synonym variants
reach the server as requests of their own; a variant whose prompt would be its
seed's is refused at generation, with the reason; and robustness on a run asked
of `ReadingModel` (a server that reads the options it is sent) equals a hand
count over 24 seeds."""

import pytest
from django.utils import translation

from benchmark import formats
from benchmark.models import Benchmark, ItemVariant, Rendering
from judging.evaluation.actions import do_start_evaluation
from judging.evaluation.models import EvaluationRun
from judging.evaluation.pipeline import run_evaluation
from judging.llm.models import Endpoint
from judging.robustness import actions, report
from judging.robustness.models import Resource
from tests.judging.labelling_fixtures import wait_until
from tests.judging.robustness_fixtures import make_seed
from tests.openai_stub import OpenAIStub, ReadingModel

MC = [formats.MULTIPLE_CHOICE]
RELATIONS = ["order", "irrelevant_content", "synonym"]
VALUES = ["5 V", "12 V", "24 V", "48 V"]
SEEDS = 24
# Seeds 0–11 the model knows (answered right), 12–19 it believes wrongly, 20–23
# it does not know (it refuses them: excluded, with their variants). Of the
# seeds it answers, 0–3 and 12–13 it answers differently once the glossary term
# is renamed (the synonym variant); order and irrelevant-option variants show
# the same option texts, so a model reading them answers the same content.
RIGHT, WRONG = range(12), range(12, 20)
SYNONYM_DIFFERS = {0, 1, 2, 3, 12, 13}


@pytest.fixture(autouse=True)
def fast_llm_settings(settings, monkeypatch):
    settings.LLM_BACKOFF_BASE_MS = 10
    settings.LLM_BACKOFF_MAX_MS = 50
    settings.LLM_MAX_ATTEMPTS = 2
    settings.LLM_PARSE_RETRIES = 1
    settings.LLM_REQUEST_TIMEOUT = 5
    monkeypatch.setenv("STUB_API_KEY", "k")


def seed_study(benchmark) -> dict[str, str]:
    """24 MC seeds naming the glossary term USB, and what the model believes."""
    benchmark.scoring_scale = Benchmark.ScoringScale.BINARY
    benchmark.save(update_fields=["scoring_scale"])
    Resource.objects.create(
        benchmark=benchmark, kind="synonym", language="zh", key="USB", value="U盘"
    )
    facts = {}
    for n in range(SEEDS):
        right = n % 4
        make_seed(
            benchmark,
            f"S-{n:02d}",
            f"型号 K-{n} 的 USB 接口额定电压是多少？",
            options=VALUES,
            correct_options=["ABCD"[right]],
        )
        if n in RIGHT or n in WRONG:
            belief = VALUES[right if n in RIGHT else (right + 1) % 4]
            facts[f"K-{n} 的 USB"] = belief
            other = VALUES[(VALUES.index(belief) + 2) % 4]
            facts[f"K-{n} 的 U盘"] = other if n in SYNONYM_DIFFERS else belief
    return facts


def hand_count() -> dict:
    """Robustness by hand: every answered seed has its three variants compared
    (so the pooled ratio and the mean per seed are the same number)."""
    right_consistent = 3 * len(RIGHT) - len(SYNONYM_DIFFERS & set(RIGHT))
    wrong_consistent = 3 * len(WRONG) - len(SYNONYM_DIFFERS & set(WRONG))
    return {
        "correct": right_consistent / (3 * len(RIGHT)),  # 32 / 36
        "incorrect": wrong_consistent / (3 * len(WRONG)),  # 22 / 24
        "correct_seeds": len(RIGHT),
        "incorrect_seeds": len(WRONG),
        "refused_seeds": SEEDS - len(RIGHT) - len(WRONG),
        "synonym_correct": 1 - len(SYNONYM_DIFFERS & set(RIGHT)) / len(RIGHT),
        "synonym_incorrect": 1 - len(SYNONYM_DIFFERS & set(WRONG)) / len(WRONG),
    }


def start_run(benchmark, stub, **kwargs) -> EvaluationRun:
    endpoint = Endpoint.objects.create(
        name="tested",
        base_url=stub.base_url,
        model="tested-model",
        api_key_env="STUB_API_KEY",
        max_concurrency=8,
    )
    return do_start_evaluation(
        benchmark,
        tested=endpoint,
        judge=None,
        sv_judge=None,
        language="zh",
        **kwargs,
    )


def check_report(benchmark, stub, model):
    # One request per seed and per variant, each its own prompt: none joined,
    # none answered twice.
    assert ItemVariant.objects.count() == 3 * SEEDS
    assert stub.request_count == 4 * SEEDS
    assert len({request.key for request in stub.requests}) == 4 * SEEDS
    assert stub.duplicate_answers() == {}
    # The order variant shows its own shuffled options, the irrelevant-option
    # variant its fifth one, the synonym variant its renamed text.
    prompts = [request.body["messages"][-1]["content"] for request in stub.requests]
    assert sum("E. " in prompt for prompt in prompts) == SEEDS
    assert sum("U盘" in prompt for prompt in prompts) == SEEDS
    built = report.build(benchmark)
    expected = hand_count()
    pooled = built.result.pooled
    assert pooled.correct[0, 0] == pytest.approx(expected["correct"])
    assert pooled.incorrect[0, 0] == pytest.approx(expected["incorrect"])
    assert pooled.correct_seeds[0, 0] == expected["correct_seeds"]
    assert pooled.incorrect_seeds[0, 0] == expected["incorrect_seeds"]
    assert pooled.refused_seeds[0, 0] == expected["refused_seeds"]
    by_relation = built.result.by_relation
    column = {name: i for i, name in enumerate(by_relation.groups)}
    assert by_relation.correct[0, column["order"]] == 1.0
    assert by_relation.correct[0, column["irrelevant_content"]] == 1.0
    assert by_relation.correct[0, column["synonym"]] == pytest.approx(
        expected["synonym_correct"]
    )
    assert by_relation.incorrect[0, column["synonym"]] == pytest.approx(
        expected["synonym_incorrect"]
    )


def test_variants_are_asked_and_robustness_is_the_hand_count(benchmark):
    """On the code before issue 25 the options were not in the prompt: the order
    and irrelevant-option variants were sent their seed's bytes, the gateway
    joined them with their seed's request, and this test failed with 48 requests
    at the server instead of 96 (run once to see)."""
    facts = seed_study(benchmark)
    done = actions.generate_variants(benchmark, MC, RELATIONS, "domain")
    assert done.created == 3 * SEEDS and done.refused == {}
    with OpenAIStub(api_key="k", responder=ReadingModel(facts)) as stub:
        run = start_run(benchmark, stub, enqueue=False)
        run_evaluation(run.pk)
        run.refresh_from_db()
        assert run.status == EvaluationRun.Status.COMPLETE
        check_report(benchmark, stub, "tested")


@pytest.mark.worker
def test_variants_are_asked_on_a_real_worker(running_worker, benchmark):
    facts = seed_study(benchmark)
    actions.generate_variants(benchmark, MC, RELATIONS, "domain")
    with OpenAIStub(api_key="k", responder=ReadingModel(facts)) as stub:
        run = start_run(benchmark, stub)

        def ended():
            run.refresh_from_db()
            return run.status not in (
                EvaluationRun.Status.PENDING,
                EvaluationRun.Status.RUNNING,
            )

        wait_until(ended, 90, "the evaluation run did not end on the worker")
        assert run.status == EvaluationRun.Status.COMPLETE
        check_report(benchmark, stub, "tested")


def test_a_variant_asked_as_its_seed_is_refused_with_the_reason(benchmark):
    """A seed imported with its options in the question: shuffling or adding an
    option would not change what the model is shown."""
    listed = "\n".join(f"{'ABCD'[i]}. {v}" for i, v in enumerate(VALUES))
    make_seed(
        benchmark,
        "LISTED",
        f"插座的额定电压是多少？\n{listed}",
        options=VALUES,
        correct_options=["B"],
    )
    Resource.objects.create(
        benchmark=benchmark, kind="synonym", language="zh", key="插座", value="插口"
    )
    done = actions.generate_variants(benchmark, MC, RELATIONS, "domain")
    # The synonym variant renames the question's words: it is asked as written.
    assert done.created == 1
    assert sorted(ItemVariant.objects.values_list("relation", flat=True)) == ["synonym"]
    assert set(done.refused) == {
        (
            relation,
            "its prompt would be the seed's: the seed's question lists its options "
            "itself, so the variant's changed options would not be shown",
        )
        for relation in ("order", "irrelevant_content")
    }
    assert done.refusals()[0].startswith("1 irrelevant_content variant refused: ")
    # The reason is kept as a msgid and said in the reader's language.
    with translation.override("zh-hans"):
        refusal = done.refusals()[0]
    assert refusal.startswith("1 个 irrelevant_content 变体被拒绝：")
    assert "seed" not in refusal
    synonym = Rendering.objects.get(item__variant_of__relation="synonym")
    assert "插口" in synonym.question
