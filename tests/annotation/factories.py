"""Small builders for annotation tests: items with renderings, runs with responses."""

from benchmark.actions import do_add_rendering_version, do_set_final_label
from benchmark.models import FinalLabel, Item, Label, Rendering
from judging.evaluation.models import EvaluationRun, Judgment, Response

DIFFICULTIES = ("easy", "medium", "hard")
CAPABILITIES = ("standards_terminology", "process_principles", "safety_compliance")


def make_items(benchmark, count: int, *, prefix: str = "Q"):
    items = []
    for index in range(count):
        item = Item.objects.create(
            benchmark=benchmark,
            external_id=f"{prefix}{index:04d}",
            difficulty=DIFFICULTIES[index % 3],
            knowledge_text=f"GB/T {1000 + index}-2020 clause {index}: knowledge text.",
        )
        do_add_rendering_version(
            item,
            "zh",
            question=f"问题 {index}: M{index} 螺栓的强度等级是多少?",
            answer=f"参考答案 {index}: 8.8 级",
            origin=Rendering.Origin.SOURCE,
            review_status=Rendering.ReviewStatus.APPROVED,
        )
        capability = Label.objects.get(
            dimension__benchmark=benchmark, code=CAPABILITIES[index % 3]
        )
        do_set_final_label(item, capability, provenance=FinalLabel.Provenance.IMPORTED)
        items.append(item)
    return items


def make_run(benchmark, items, *, model_name="Model-A", judge_reason="judge says"):
    """A simulated run answering every item, each response judged by one judge."""
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=model_name,
        model_category="closed",
        language="zh",
        origin=EvaluationRun.Origin.SIMULATED,
        status=EvaluationRun.Status.COMPLETE,
    )
    responses = Response.objects.bulk_create(
        Response(
            run=run,
            item=item,
            text=f"Answer by the model to {item.external_id}.",
            status=Response.Status.ANSWERED,
        )
        for item in items
    )
    Judgment.objects.bulk_create(
        Judgment(
            response=response,
            kind=Judgment.Kind.RUBRIC,
            judge_name=f"{model_name}-judge",
            score=index % 4,
            reason=f"{judge_reason} #{response.pk}",
            status=Judgment.Status.DONE,
        )
        for index, response in enumerate(responses)
    )
    return run, responses


def make_split_consensus(benchmark, item, *, dimension_code="capability"):
    """Three annotator endpoints that disagree on `item` in one dimension."""
    from benchmark.models import LabelDimension
    from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
    from judging.llm.models import Endpoint, PromptTemplate

    dimension = LabelDimension.objects.get(benchmark=benchmark, code=dimension_code)
    labels = list(dimension.labels.order_by("position")[:3])
    template, _ = PromptTemplate.objects.get_or_create(
        name="labelling-test",
        version=1,
        defaults={"purpose": PromptTemplate.Purpose.LABELLING, "text": "Label {{q}}"},
    )
    run = LabellingRun.objects.filter(benchmark=benchmark).first()
    if run is None:
        run = LabellingRun.objects.create(
            benchmark=benchmark,
            template=template,
            origin=LabellingRun.Origin.SIMULATED,
            status=LabellingRun.Status.COMPLETE,
        )
    for index, label in enumerate(labels):
        endpoint, _ = Endpoint.objects.get_or_create(
            name=f"annotator-model-{index}",
            defaults={
                "base_url": "http://127.0.0.1:9/v1",
                "model": f"vendor/annotator-{index}",
                "api_key_env": "NO_KEY",
            },
        )
        AnnotatorLabel.objects.create(
            run=run,
            item=item,
            annotator=endpoint,
            dimension=dimension,
            label=label,
            rationale=f"Rationale {index}: it is about {label.name}.",
            status=AnnotatorLabel.Status.LABELLED,
        )
    return LabelConsensus.objects.create(
        run=run,
        item=item,
        dimension=dimension,
        outcome=LabelConsensus.Outcome.NONE,
        votes={label.code: 1 for label in labels},
        annotator_count=3,
    )


def flag_translation(item, language="en", *, question=None, answer=None):
    """A machine translation of the item, flagged for review."""
    return do_add_rendering_version(
        item,
        language,
        question=question or f"Question {item.external_id}: strength class of M8 bolt?",
        answer=answer or "Reference: class 8.8 per GB/T 3098.1-2010.",
        origin=Rendering.Origin.MACHINE,
        review_status=Rendering.ReviewStatus.FLAGGED,
    )


HTMX = {"HTTP_HX_REQUEST": "true"}


def take_next_task(client, url, **headers):
    """What a work screen does as it loads: ask for the next task. A POST, because
    it leases the task; a GET of the screen only shows a lease already held."""
    return client.post(url, {"action": "next"}, **headers)
