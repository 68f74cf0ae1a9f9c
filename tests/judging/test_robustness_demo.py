"""The robustness demo: MC and TF seeds in four sectors, variants of all eight
relations, simulated binary runs with their answers graded and LLM-written
variants awaiting review; loading it
again changes nothing; every robustness page has content."""

import numpy as np
from django.urls import reverse

from benchmark.models import Benchmark, Item, ItemVariant
from judging.evaluation.models import AnswerGrade, EvaluationRun, Response
from judging.robustness import demo, report
from judging.robustness.models import VariantDraft
from judging.robustness.relations import RELATIONS


def counts():
    return (
        Item.objects.count(),
        ItemVariant.objects.count(),
        Response.objects.count(),
        VariantDraft.objects.count(),
    )


def test_the_demo_has_every_relation_runs_and_work_to_review(db, client_for):
    benchmark = demo.seed(None)
    assert benchmark.is_demo
    first = counts()
    assert demo.seed(None) is None and counts() == first

    relations = set(ItemVariant.objects.values_list("relation", flat=True))
    assert relations == set(RELATIONS)
    sectors = set(ItemVariant.objects.values_list("sector", flat=True))
    assert sectors == {"电力", "机械", "化工", "汽车"}
    assert VariantDraft.objects.filter(status="awaiting").count() == demo.AWAITING
    assert EvaluationRun.objects.filter(benchmark=benchmark).count() == len(demo.MODELS)
    # Graded as a binary run grades each MC/TF answer: the report reads the grades.
    assert benchmark.scoring_scale == Benchmark.ScoringScale.BINARY
    responses = Response.objects.filter(run__benchmark=benchmark, run__binary=True)
    assert responses.count() == Response.objects.count()
    assert AnswerGrade.objects.filter(response__in=responses).count() == (
        responses.count()
    )
    built = report.build(benchmark)
    assert built.variants == ItemVariant.objects.count()
    assert built.missing == 0
    pooled = built.result.pooled
    assert np.isfinite(pooled.correct).all()
    assert pooled.refused_variants.sum() > 0
    # The strongest simulated model is the most robust on the seeds it got right.
    assert pooled.correct[:, 0].argmax() == built.labels.index("atlas-pro (zh)")

    manager = client_for("manager")
    for name in ("robustness", "robustness_report", "variant_review"):
        page = manager.get(reverse(f"judging:{name}", args=[benchmark.slug]))
        assert page.status_code == 200, name
    url = reverse("judging:variant_review", args=[benchmark.slug])
    review = manager.post(url, {"action": "next"})
    assert review.context["draft"].relation == "logic"

    # The page names each relation as a person reads it, in the reader's language.
    study = reverse("judging:robustness", args=[benchmark.slug])
    chinese = manager.get(study, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    english = manager.get(study, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<th class="num">数值精度</th>' in chinese
    assert '<th class="num">逻辑否定</th>' in chinese
    assert '<th class="num">numeric precision</th>' in english
    assert 'data-relation="precision"' in chinese


def test_the_pages_take_a_bounded_number_of_queries(
    db, client_for, django_assert_max_num_queries
):
    benchmark = demo.seed(None)
    manager = client_for("manager")
    for name, bound in (("robustness", 25), ("variant_review", 20)):
        url = reverse(f"judging:{name}", args=[benchmark.slug])
        with django_assert_max_num_queries(bound):
            assert manager.get(url).status_code == 200
    report_url = reverse("judging:robustness_report", args=[benchmark.slug])
    manager.get(report_url)
    with django_assert_max_num_queries(12):  # from the cache: its key only
        assert manager.get(report_url).status_code == 200
