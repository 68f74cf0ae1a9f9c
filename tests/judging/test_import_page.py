"""The import page's mapping step without a browser: the preview partial an HTMX
change asks for (the language warning, lm-eval's model from its results file, a
binary benchmark's targets), and an lm-eval multiple-choice import."""

from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from judging.evaluation.models import AnswerGrade, EvaluationRun
from tests.judging.factories import make_format_items, make_items

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interop"


def upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes())


def test_the_preview_warns_when_the_logs_language_is_not_the_forms(
    client_for, benchmark
):
    make_items(benchmark, 4)
    url = reverse("judging:import_evaluation_run", args=[benchmark.slug])
    page = client_for("manager").post(
        url,
        {"file": upload(FIXTURES / "inspect/open_answers_zh.json"), "language": "en"},
        headers={"HX-Request": "true"},
    )
    html = page.content.decode()
    assert 'data-testid="mapping"' in html and "<html" not in html
    assert 'data-testid="language-differs"' in html
    assert "mockllm/model" in html
    assert not EvaluationRun.objects.exists()


def test_lm_eval_multiple_choice_on_a_binary_benchmark(client_for, benchmark):
    make_format_items(benchmark, mc=3)
    client = client_for("manager")
    url = reverse("judging:import_evaluation_run", args=[benchmark.slug])
    fields = {"language": "zh", "scorer": "acc_norm"}
    preview = client.post(
        url,
        {
            **fields,
            "file": upload(FIXTURES / "lm_eval/samples_assay_mc.jsonl"),
            "results": upload(FIXTURES / "lm_eval/results.json"),
        },
        headers={"HX-Request": "true"},
    ).content.decode()
    assert "0k9ep1fr" in preview  # the model, from the results file
    assert "not mapped" in preview  # no default: what does 1.0 mean?
    assert ">correct</option>" in preview and "0–1 scale" in preview
    page = client.post(
        url,
        {
            **fields,
            "map_for": "acc_norm",
            "full": "1",
            "file": upload(FIXTURES / "lm_eval/samples_assay_mc.jsonl"),
            "results": upload(FIXTURES / "lm_eval/results.json"),
        },
        follow=True,
    )
    run = EvaluationRun.objects.get()
    assert "Imported 3 answers" in page.content.decode()
    assert "lm-eval task assay_mc, metric acc_norm" in page.content.decode()
    assert run.binary and run.model_name == "0k9ep1fr"
    assert sorted(
        AnswerGrade.objects.filter(response__run=run).values_list("extracted", "grade")
    ) == [
        ("A", AnswerGrade.Grade.WRONG),
        ("A", AnswerGrade.Grade.CORRECT),
        ("B", AnswerGrade.Grade.CORRECT),
    ]
