"""The robustness report read from stored answer grades (what a binary run writes
as each MC/TF reply arrives) equals the report that reads every reply again, on
random replies of several models — refusals, several answers, an item whose answer
is a set, empty and failed answers, two trials, an item outside the design, a run
without grades (imported), replies asked in a rendering that is no longer current;
and only the replies without a usable grade are read. A re-grading or an answer key
change gives a fresh report, not the cached one."""

import numpy as np
import pytest
from django.core.cache import cache

from benchmark import formats
from benchmark.models import Item, ItemVariant, Rendering
from judging.evaluation.grading import grade_stored_answers
from judging.evaluation.models import AnswerGrade, EvaluationRun, Response
from judging.robustness import report
from tests.judging.robustness_fixtures import MC_OPTIONS, make_seed
from tests.judging.test_robustness_report import build_world

MC_REPLIES = (
    "答案：{a}",
    "The answer is {a}.",
    "Ответ: {a}",
    "答案：{a}、{b}",  # several answers
    "答案是{a}。再想一想，答案是{b}",
    "无法回答这个问题。",
    "I cannot answer this question.",
    "不确定",
    "答案：D",  # no option D in a 3-option rendering
)
TF_REPLIES = (
    "正确",
    "错误",
    "True.",
    "The statement is false.",
    "Верно",
    "Đáp án: Sai",
    "无法回答这个问题。",
    "正确还是错误，难说",
    "不确定",
)
STATUSES = [Response.Status.ANSWERED] * 16 + [
    Response.Status.EMPTY,
    Response.Status.FAILED,
    Response.Status.PENDING,
]


def reply(rng, item, n_options):
    """One of the replies above; one with a single answer most of the time."""
    replies = TF_REPLIES if item.format == formats.TRUE_FALSE else MC_REPLIES
    choice = rng.integers(3 if rng.random() < 0.6 else len(replies))
    a, b = rng.choice(list(formats.LETTERS[:n_options] or "AB"), 2, replace=False)
    return replies[choice].format(a=a, b=b)


def make_run(benchmark, name, items, renderings, rng, *, trials=1):
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=name,
        language=benchmark.source_language,
        origin=EvaluationRun.Origin.SIMULATED,
        status=EvaluationRun.Status.COMPLETE,
        binary=True,
        trials=trials,
    )
    responses = []
    for item in items:
        rendering = renderings[item.pk]
        for trial in range(trials):
            status = STATUSES[rng.integers(len(STATUSES))]
            answered = status == Response.Status.ANSWERED
            responses.append(
                Response(
                    run=run,
                    item=item,
                    trial=trial,
                    rendering=rendering,
                    status=status,
                    text=reply(rng, item, len(rendering.options)) if answered else "",
                )
            )
    Response.objects.bulk_create(responses)
    return run


@pytest.fixture
def world(benchmark):
    rng = np.random.default_rng(15)
    build_world(benchmark, rng)
    # A seed whose answer is a set: naming both options is graded, not flagged.
    Item.objects.filter(benchmark=benchmark, external_id="MC-0").update(
        multiple_answers=True, correct_options=["A", "C"]
    )
    # An item that is neither a seed nor a variant: its replies are left out.
    make_seed(benchmark, "ZZ-other", "另一道题？", options=MC_OPTIONS)
    items = list(Item.objects.filter(benchmark=benchmark))
    renderings = {
        r.item_id: r
        for r in Rendering.objects.filter(item__benchmark=benchmark, is_current=True)
    }
    runs = [
        make_run(benchmark, "m-1", items, renderings, rng),
        make_run(benchmark, "m-2", items, renderings, rng, trials=2),
        make_run(benchmark, "m-3", items, renderings, rng),
    ]
    imported = make_run(benchmark, "m-imported", items, renderings, rng)
    # Asked in an earlier wording with three options, or with no rendering recorded:
    # the stored grade (if any) was read against another option count than the
    # report's.
    mc = {item.external_id: item for item in items}
    earlier = Rendering.objects.create(
        item=mc["MC-1"],
        language=benchmark.source_language,
        version=0,
        is_current=False,
        question="旧题",
        options=["110 V", "220 V", "380 V"],
    )
    Response.objects.filter(run=runs[0], item=mc["MC-1"]).update(
        rendering=earlier, text="答案：D", status=Response.Status.ANSWERED
    )
    Response.objects.filter(run=runs[2], item=mc["MC-2"]).update(
        rendering=None, text="答案：B", status=Response.Status.ANSWERED
    )
    Response.objects.filter(run__in=runs[:2], item__external_id="MC-0", trial=0).update(
        text="答案：A、C", status=Response.Status.ANSWERED
    )
    Response.objects.filter(run=runs[1], item__external_id="MC-0", trial=1).update(
        text="答案：C、A", status=Response.Status.ANSWERED
    )
    return runs, imported


def equal_reports(got, want):
    assert (got.seeds, got.variants, got.missing) == (
        want.seeds,
        want.variants,
        want.missing,
    )
    for name in ("pooled", "by_relation", "by_sector"):
        a, b = getattr(got.result, name), getattr(want.result, name)
        assert a.groups == b.groups
        for field in a.__dataclass_fields__:
            if field != "groups":
                np.testing.assert_array_equal(
                    getattr(a, field), getattr(b, field), err_msg=f"{name}.{field}"
                )
    assert got.tables.keys() == want.tables.keys()
    for slug, table in want.tables.items():
        # repr: the cells compare exactly, empty (NaN) ones too.
        assert repr(got.tables[slug].rows) == repr(table.rows), slug
        assert got.tables[slug].support == table.support, slug


def read_again(benchmark, runs):
    """The replies the report must read itself: every trial of each run's reply
    to a seed or variant without a usable grade (the trials then vote)."""
    design = set(ItemVariant.objects.values_list("item_id", flat=True)) | set(
        ItemVariant.objects.values_list("seed_id", flat=True)
    )
    current = dict(
        Rendering.objects.filter(is_current=True).values_list("item_id", "pk")
    )
    return sum(
        1
        for response in Response.objects.filter(run__in=runs)
        if response.item_id in design
        and not (
            AnswerGrade.objects.filter(response=response).exists()
            and response.status == Response.Status.ANSWERED
            and response.rendering_id == current[response.item_id]
        )
    )


def test_stored_grades_give_the_report_of_reading_every_reply(
    benchmark, world, monkeypatch
):
    runs, imported = world
    everything = list(EvaluationRun.objects.filter(benchmark=benchmark))
    reread = report.build(benchmark)  # no grades yet: every reply is read
    assert np.isfinite(reread.result.pooled.correct).all()
    # (The two-trial run's trials vote: most of its split pairs are ties, no
    # single answer, so its own refusals may all be outvoted.)
    assert reread.result.pooled.refused_variants.sum() > 0
    assert reread.result.pooled.unreadable_variants.min() > 0
    assert reread.missing == 0

    graded = grade_stored_answers(Response.objects.filter(run__in=runs))
    assert graded > 0
    grades = AnswerGrade.objects.filter(response__run__in=runs)
    assert grades.filter(grade=AnswerGrade.Grade.MULTIPLE).exists()
    assert grades.filter(grade=AnswerGrade.Grade.REFUSAL).exists()
    # The set-answer seed's "A, C" is graded right, yet is no single answer.
    assert grades.filter(extracted="A, C", grade=AnswerGrade.Grade.CORRECT).exists()
    assert not AnswerGrade.objects.filter(response__run=imported).exists()

    read = []
    extract_all = report.extract_all

    def counted(replies, n_options):
        read.append(len(replies))
        return extract_all(replies, n_options)

    monkeypatch.setattr(report, "extract_all", counted)
    stored = report.build(benchmark)
    equal_reports(stored, reread)
    assert sum(read) == read_again(benchmark, everything)
    assert sum(read) < Response.objects.count() / 2


def test_a_regrading_or_an_answer_key_change_rebuilds_the_cached_report(
    benchmark, world
):
    runs, _ = world
    cache.clear()
    grade_stored_answers(Response.objects.filter(run__in=runs))
    right = report.cached_build(benchmark)
    # Grades written under other rules: a re-grading replaces them, and the page
    # shows the new reading, not the cached report.
    AnswerGrade.objects.filter(
        response__run__in=runs, grade__in=[0, 1], extracted="true"
    ).update(extracted="false")
    stale = report.build(benchmark)
    assert repr(stale.tables["robustness"].rows) != repr(
        right.tables["robustness"].rows
    )
    assert report.cached_build(benchmark).cache_key == right.cache_key
    grade_stored_answers(Response.objects.filter(run__in=runs))
    regraded = report.cached_build(benchmark)
    assert regraded.cache_key != right.cache_key
    equal_reports(regraded, right)

    seed = Item.objects.get(benchmark=benchmark, external_id="TF-1")
    Item.objects.filter(pk=seed.pk).update(correct_answer=not seed.correct_answer)
    rekeyed = report.cached_build(benchmark)
    assert rekeyed.cache_key != regraded.cache_key
    equal_reports(rekeyed, report.build(benchmark))
