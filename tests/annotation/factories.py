"""Small builders for annotation tests: items with renderings, runs with responses."""

from benchmark.actions import do_add_rendering_version, do_set_final_label
from benchmark.models import FinalLabel, Item, Label, Rendering
from judging.models import EvaluationRun, Judgment, Response

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
