"""Files made by the real tools (tests/fixtures/interop/README.md: inspect_ai 0.3.285,
lm_eval 0.4.13) import with the expected scores: the score map, epochs as trials,
integer sample ids, the model and language the file names, what the run keeps."""

from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.models import Item
from benchmark.validation import ImportRejected
from judging.evaluation.grades import load_binary
from judging.evaluation.importing import do_import_run
from judging.evaluation.models import AnswerGrade, Judgment, Response
from judging.interop import score_maps
from judging.interop.detect import EVALUATE, INSPECT, LM_EVAL, detect_format
from judging.interop.importing import Choices, make_reader, preview_file
from tests.judging.factories import make_format_items, make_items

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interop"
OPEN_LOG = FIXTURES / "inspect" / "open_answers.eval"
OPEN_LOG_ZH = FIXTURES / "inspect" / "open_answers_zh.json"
CHOICE_LOG = FIXTURES / "inspect" / "choices_2_epochs.eval"
LM_QA = FIXTURES / "lm_eval" / "samples_assay_qa.jsonl"
LM_MC = FIXTURES / "lm_eval" / "samples_assay_mc.jsonl"
LM_RESULTS = FIXTURES / "lm_eval" / "results.json"


@pytest.fixture
def open_bench(benchmark):
    make_items(benchmark, 4, languages=("zh", "en"))
    return benchmark


@pytest.fixture
def choice_bench(benchmark):
    make_format_items(benchmark, mc=3)
    return benchmark


def import_file(benchmark, path, choices=None, language="en", model=""):
    data = path.read_bytes()
    choices = choices or Choices()
    return do_import_run(
        benchmark,
        data,
        filename=path.name,
        model_name=model,
        language=language,
        reader=make_reader(benchmark, data, choices),
    )


def rubric_scores(run) -> dict:
    return {
        j.response.item.external_id: j.score
        for j in Judgment.objects.filter(
            response__run=run, kind=Judgment.Kind.RUBRIC
        ).select_related("response__item")
    }


def test_every_fixture_is_detected():
    assert detect_format(OPEN_LOG.read_bytes()) == INSPECT
    assert detect_format(OPEN_LOG_ZH.read_bytes()) == INSPECT
    assert detect_format(LM_QA.read_bytes()) == LM_EVAL
    assert detect_format(LM_RESULTS.read_bytes()) == EVALUATE
    assert detect_format(b"id,model_response,score\n") == EVALUATE


def test_match_letters_import_with_the_default_map(open_bench):
    data = OPEN_LOG.read_bytes()
    preview = preview_file(open_bench, data, Choices(scorer="match"))
    assert preview.sources == ["match", "includes", "f1", "model_graded_qa", "rubric03"]
    assert preview.model == "mockllm/model" and preview.language == "en"
    # Inspect numbers the samples 1–4; each names its item in metadata.item_id.
    assert preview.integer_ids and preview.ids == "metadata.item_id"
    assert [(r.value, r.count, r.score) for r in preview.rows] == [
        ("C", 3, 3),
        ("I", 1, 0),
    ]
    assert preview.distribution == [
        ("0", 1),
        ("1", 0),
        ("2", 0),
        ("3", 3),
        ("pending", 0),
    ]
    run = import_file(open_bench, OPEN_LOG, Choices(scorer="match"))
    assert run.model_name == "mockllm/model" and run.language == "en"
    assert rubric_scores(run) == {
        "item-000": 3,
        "item-001": 3,
        "item-002": 0,
        "item-003": 3,
    }
    assert run.source_metadata["scorer"] == "match"
    assert run.source_metadata["task"] == "open_answers"
    response = run.responses.get(item__external_id="item-002")
    assert response.text == "Default output from mockllm/model"
    assert response.source_record["sample_id"] == 3
    assert response.source_record["target"] == "dust protected and splash proof"
    assert response.source_record["metadata"] == {
        "item_id": "item-002",
        "source": "GB/T 4208",
    }
    assert response.source_record["score"]["value"] == "I"
    usage = response.source_record["usage"]
    assert run.input_tokens > 0 and usage["input_tokens"] > 0


def test_floats_custom_scores_and_nan_follow_the_map(open_bench):
    f1 = preview_file(open_bench, OPEN_LOG.read_bytes(), Choices(scorer="f1"))
    # 0–1 floats: 1.0 is full marks, 0.4 × 3 = 1.2 → 1.
    assert f1.score_map.full == 3
    assert [(r.value, r.score) for r in f1.rows] == [("0", 0), ("0.4", 1), ("1", 3)]
    custom = import_file(open_bench, OPEN_LOG, Choices(scorer="rubric03"))
    assert rubric_scores(custom) == {
        "item-000": 1,
        "item-001": 2,
        "item-002": 0,
        "item-003": 3,
    }
    # The model-graded scorer found no grade in mockllm's reply: NaN, no verdict.
    graded = preview_file(
        open_bench, OPEN_LOG.read_bytes(), Choices(scorer="model_graded_qa")
    )
    assert [(r.value, r.count, r.score) for r in graded.rows] == [("NaN", 4, None)]
    run = import_file(open_bench, OPEN_LOG, Choices(scorer="model_graded_qa"))
    assert set(rubric_scores(run).values()) == {None}
    assert run.failed_count == 4


def test_a_chosen_map_overrides_the_default(open_bench):
    choices = Choices(scorer="match", values={"C": 2, "I": None})
    run = import_file(open_bench, OPEN_LOG, choices)
    assert rubric_scores(run)["item-000"] == 2
    assert rubric_scores(run)["item-002"] is None
    assert run.source_metadata["score_map"]["values"] == {"C": 2, "I": None}


def test_the_logs_language_must_agree_with_the_form(open_bench):
    with pytest.raises(ImportRejected) as rejected:
        import_file(open_bench, OPEN_LOG_ZH, Choices(scorer="match"), language="en")
    assert "'zh', not 'en'" in str(rejected.value.problems[0])
    assert not Response.objects.exists()
    run = import_file(open_bench, OPEN_LOG_ZH, Choices(scorer="match"), language="zh")
    assert run.language == "zh"


def test_integer_ids_by_position(open_bench):
    choices = Choices(scorer="rubric03", ids="position")
    run = import_file(open_bench, OPEN_LOG, choices)
    # Sample n is the n-th item by external id; here the same as metadata.item_id.
    assert rubric_scores(run)["item-003"] == 3
    with pytest.raises(ImportRejected) as rejected:
        import_file(open_bench, OPEN_LOG, Choices(scorer="match", ids="id"))
    assert "unknown item id '1'" in str(rejected.value.problems[0])


def test_two_epochs_become_two_trials_on_a_binary_benchmark(choice_bench):
    preview = preview_file(choice_bench, CHOICE_LOG.read_bytes(), Choices())
    assert preview.epochs == 2 and preview.reducer == "mode"
    assert preview.source == ""  # two scorers: the person chooses
    run = import_file(choice_bench, CHOICE_LOG, Choices(scorer="includes"))
    assert run.binary and run.trials == 2 and run.total_items == 6
    grades = {
        (g.response.item.external_id, g.response.trial): g.grade
        for g in AnswerGrade.objects.filter(response__run=run).select_related(
            "response__item"
        )
    }
    correct, wrong = AnswerGrade.Grade.CORRECT, AnswerGrade.Grade.WRONG
    assert grades == {
        ("mc-000", 0): wrong,
        ("mc-000", 1): wrong,
        ("mc-001", 0): wrong,
        ("mc-001", 1): wrong,
        ("mc-002", 0): correct,
        ("mc-002", 1): correct,
    }
    assert run.source_metadata["reducer"] == "mode"
    assert run.source_metadata["epochs"] == 2
    # The binary reports read the imported trials as they read the pipeline's.
    matrix = load_binary([run])
    assert matrix.score.shape == (1, 3, 2)
    assert matrix.score.mean() == pytest.approx(2 / 6)


def test_a_0_to_3_benchmark_takes_one_chosen_epoch(benchmark):
    for external_id in ("mc-000", "mc-001", "mc-002"):
        Item.objects.create(benchmark=benchmark, external_id=external_id)
    with pytest.raises(ImportRejected) as rejected:
        import_file(benchmark, CHOICE_LOG, Choices(scorer="choice"))
    assert "choose the epoch" in str(rejected.value.problems[0])
    run = import_file(benchmark, CHOICE_LOG, Choices(scorer="choice", epoch=2))
    assert run.total_items == 3 and run.trials == 1
    assert set(rubric_scores(run).values()) == {0}


def test_lm_eval_generation_needs_the_person_to_say_what_1_means(open_bench):
    preview = preview_file(open_bench, LM_QA.read_bytes(), Choices())
    assert preview.source == "exact_match"
    # No default: every value waits for the person to say what 1.0 means.
    assert [(r.value, r.count, r.problem != "") for r in preview.rows] == [
        ("0", 2, True),
        ("1", 1, True),
    ]
    with pytest.raises(ImportRejected) as rejected:
        import_file(open_bench, LM_QA, model="dummy")
    assert "say what 1.0 means" in str(rejected.value.problems[0])
    run = import_file(
        open_bench, LM_QA, Choices(full=3, assume_no_violation=True), model="dummy"
    )
    assert rubric_scores(run) == {"item-000": 0, "item-001": 0, "item-002": 3}
    assert run.source_metadata["task"] == "assay_qa"


def test_lm_eval_multiple_choice_imports_as_binary_with_the_chosen_option(
    choice_bench,
):
    results = LM_RESULTS.read_bytes()
    for metric, expected in (
        ("acc", {"mc-000": ("A", 0), "mc-001": ("B", 1), "mc-002": ("B", 0)}),
        ("acc_norm", {"mc-000": ("A", 0), "mc-001": ("B", 1), "mc-002": ("A", 1)}),
    ):
        choices = Choices(scorer=metric, full=1, results=results)
        preview = preview_file(choice_bench, LM_MC.read_bytes(), choices)
        assert preview.model == "0k9ep1fr"  # the dummy model's random name
        run = import_file(choice_bench, LM_MC, choices)
        assert run.binary and run.model_name == "0k9ep1fr"
        got = {
            g.response.item.external_id: (
                g.extracted,
                int(g.grade == AnswerGrade.Grade.CORRECT),
            )
            for g in AnswerGrade.objects.filter(response__run=run).select_related(
                "response__item"
            )
        }
        assert got == expected
        chosen = run.responses.get(item__external_id="mc-002")
        assert chosen.text in ("1000 V AC", "10 kV")
        assert chosen.source_record["chosen_option"] == "AB".index(
            expected["mc-002"][0]
        )


def test_the_command_detects_the_format_and_shows_the_map(open_bench, capsys):
    call_command(
        "import_run",
        str(OPEN_LOG),
        "--benchmark",
        open_bench.slug,
        "--language",
        "en",
        "--scorer",
        "match",
        "--map",
        "C=3,I=0",
        "--assume-no-violation",
    )
    out = capsys.readouterr().out
    assert "Inspect AI log" in out
    assert "C ×3 → 3" in out and "I ×1 → 0" in out
    assert "final 2.250" in out
    assert "Scores not read: f1 (4)" in out
    assert score_maps.RUBRIC_TOP == 3
