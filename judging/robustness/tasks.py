"""Robustness tasks: thin wrappers; idempotent (one variant and one draft per
seed and relation)."""

from celery import shared_task
from django.contrib.auth import get_user_model

from benchmark.models import Benchmark
from judging.robustness import actions, pipeline
from judging.runs import lifecycle


@shared_task(name="judging.robustness.tasks.generate_variants")
def generate_variants(
    benchmark_id: int, item_formats, relation_names, sector_field, user_id=None
) -> None:
    benchmark = Benchmark.objects.get(pk=benchmark_id)
    user = get_user_model().objects.filter(pk=user_id).first()
    actions.generate_variants(
        benchmark, item_formats, relation_names, sector_field, user
    )


@shared_task(name="judging.robustness.tasks.start_variant_run")
def start_variant_run(run_id: int) -> None:
    lifecycle.start(pipeline.VARIANTS, run_id)


@shared_task(name="judging.robustness.tasks.variant_chunk")
def variant_chunk(run_id: int, seed_ids: list[int]) -> None:
    pipeline.variant_chunk(run_id, seed_ids)
