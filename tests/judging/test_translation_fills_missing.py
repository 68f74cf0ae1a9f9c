"""A translation run fills only what is missing in a language: a rendering where
there is none (or it was rejected), the options or key points a rendering lacks —
keeping its own text and origin —, machine work again only when asked, and a
person's work (edited, imported, approved by a person) never. The translator reads
its prompt (tests.judging.test_translation_parts.respond)."""

import pytest

from assay.celery import app
from benchmark.actions import do_add_rendering_version, do_set_rendering_review_status
from benchmark.models import Item, Rendering
from judging.translation.models import TranslationTask
from tests.judging.test_translation_parts import MC, SHORT, _add, respond
from tests.judging.translation_fixtures import make_endpoints, run_in_process
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def eager_tasks(settings, monkeypatch):
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    settings.LLM_BACKOFF_BASE_MS = 20
    settings.LLM_MAX_ATTEMPTS = 2
    monkeypatch.setenv("STUB_API_KEY", "k")
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def translate(benchmark, django_capture_on_commit_callbacks):
    benchmark.target_languages = ["en", "ru", "vi"]
    benchmark.save(update_fields=["target_languages"])
    with OpenAIStub(responder=respond) as stub:
        translator, reviewer = make_endpoints(stub)

        def run(**options):
            return run_in_process(
                django_capture_on_commit_callbacks,
                benchmark,
                translator,
                reviewer,
                **options,
            )

        yield run


def english(item):
    return Rendering.objects.get(item=item, language="en", is_current=True)


def _english(item, origin, status=Rendering.ReviewStatus.APPROVED, **parts):
    return do_add_rendering_version(
        item,
        "en",
        question="Which rated voltage does the cable take?",
        answer=parts.pop("answer", ""),
        origin=origin,
        review_status=status,
        **parts,
    )


def _mc(benchmark, external_id="MC-1"):
    return _add(
        benchmark,
        external_id,
        Item.Format.MULTIPLE_CHOICE,
        MC[0],
        "",
        options=MC[1],
        correct=["B"],
    )


def test_an_imported_rendering_without_options_gets_only_its_options(
    benchmark, translate
):
    mc = _mc(benchmark)
    imported = _english(mc, Rendering.Origin.IMPORTED)
    run = translate()
    filled = english(mc)
    assert (run.translated, run.kept_reviewed) == (1, 0)
    assert filled.version == imported.version + 1
    # The person's question is kept byte for byte, and so is its origin.
    assert (filled.question, filled.answer, filled.origin) == (
        "Which rated voltage does the cable take?",
        "",
        Rendering.Origin.IMPORTED,
    )
    assert filled.options == [f"[English] {option}" for option in MC[1]]
    assert filled.note.endswith("translated its options")
    # Reviewed like any translation: shown every part, the reviewer passed it.
    assert filled.review_status == Rendering.ReviewStatus.APPROVED
    # Whole now: a second run keeps it.
    again = translate(overwrite_machine=True)
    assert (again.translated, again.kept_reviewed) == (0, 1)


def test_a_machine_short_answer_without_key_points_gets_only_its_key_points(
    benchmark, translate
):
    short = _add(
        benchmark,
        "SA-1",
        Item.Format.SHORT_ANSWER,
        SHORT[0],
        SHORT[1],
        key_points=SHORT[2],
    )
    machine = _english(short, Rendering.Origin.MACHINE, answer="Machine answer.")
    translate()
    filled = english(short)
    assert (filled.question, filled.answer, filled.origin) == (
        machine.question,
        "Machine answer.",
        Rendering.Origin.MACHINE,
    )
    assert filled.key_points == [f"[English] {point}" for point in SHORT[2]]


def test_machine_work_is_translated_again_only_when_asked(
    benchmark, translate, personas
):
    auto = _mc(benchmark, "MC-auto")
    by_person = _mc(benchmark, "MC-person")
    for item in (auto, by_person):
        _english(item, Rendering.Origin.MACHINE, options=["a", "b", "c", "d"])
    # A person approved one machine translation: that is a person's work now.
    do_set_rendering_review_status(
        english(by_person),
        Rendering.ReviewStatus.APPROVED,
        user=personas["reviewer"],
    )
    untouched = translate()
    assert (untouched.already_present, untouched.kept_reviewed) == (1, 1)
    assert untouched.translated == 0
    forced = translate(overwrite_machine=True)
    assert (forced.translated, forced.kept_reviewed) == (1, 1)
    assert english(auto).options[0] == "[English] 6千伏"
    assert english(by_person).options == ["a", "b", "c", "d"]
    stages = dict(
        TranslationTask.objects.filter(run=forced).values_list("item_id", "stage")
    )
    assert stages == {auto.pk: "reviewed", by_person.pk: "kept"}


def test_a_rejected_rendering_is_translated_again(benchmark, translate):
    mc = _mc(benchmark)
    _english(
        mc,
        Rendering.Origin.IMPORTED,
        status=Rendering.ReviewStatus.REJECTED,
        options=["a", "b", "c", "d"],
    )
    run = translate()
    assert run.translated == 1
    assert english(mc).origin == Rendering.Origin.MACHINE
    assert english(mc).question.startswith("[English] ")
