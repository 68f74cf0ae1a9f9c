"""Seed items (MC and TF, source language zh), simulated runs whose replies are
written directly, and an LLM variant run done in-process."""

from django.utils import timezone

from benchmark import formats
from benchmark.models import Item, Rendering
from judging.evaluation.models import EvaluationRun, Response
from judging.llm.actions import do_save_endpoint
from judging.robustness import pipeline
from judging.runs import lifecycle

MC_OPTIONS = ["250 V", "220 V", "380 V", "110 V"]


def make_seed(
    benchmark,
    external_id,
    question,
    *,
    options=(),
    correct_options=(),
    correct_answer=None,
    domain="电力",
):
    item_format = formats.MULTIPLE_CHOICE if options else formats.TRUE_FALSE
    item = Item.objects.create(
        benchmark=benchmark,
        external_id=external_id,
        domain=domain,
        format=item_format,
        correct_options=list(correct_options),
        correct_answer=correct_answer,
    )
    Rendering.objects.create(
        item=item,
        language=benchmark.source_language,
        question=question,
        answer=", ".join(correct_options) if options else str(correct_answer),
        options=list(options),
        origin=Rendering.Origin.SOURCE,
    )
    return item


def make_replies(benchmark, model, replies: dict) -> EvaluationRun:
    """A complete simulated run whose response to each item is the text given."""
    now = timezone.now()
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=model,
        language=benchmark.source_language,
        origin=EvaluationRun.Origin.SIMULATED,
        status=EvaluationRun.Status.COMPLETE,
        total_items=len(replies),
        started_at=now,
        finished_at=now,
    )
    Response.objects.bulk_create(
        Response(run=run, item=item, text=text, status=Response.Status.ANSWERED)
        for item, text in replies.items()
    )
    return run


def stub_endpoint(stub):
    return do_save_endpoint(
        "stub-writer",
        base_url=stub.base_url,
        model="writer-model",
        api_key_env="STUB_API_KEY",
        max_concurrency=4,
    )


def run_in_process(run):
    """Start a variant run and do its chunks here (no worker)."""
    lifecycle.start(pipeline.VARIANTS, run.pk)
    for run_id, seeds in pipeline.open_chunks(run):
        pipeline.variant_chunk(run_id, seeds)
    lifecycle.finish(pipeline.VARIANTS, run.pk)
    run.refresh_from_db()
    return run
