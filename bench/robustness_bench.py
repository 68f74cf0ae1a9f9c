"""The robustness report from PostgreSQL at the study's scale: 13,631 items (1,829
seeds and their 11,802 variants) × 13 models = 177,203 stored replies.

    DATABASE_URL=postgres://… .venv/bin/python bench/robustness_bench.py [--repeat 5]

Creates (once) a benchmark `bench-robustness`: 828 MC seeds (4 options) and 1,001
TF seeds in six sectors, each with a number and unit and a glossary term so every
relation applies: MC seeds get 7 variants (all but logic), TF seeds 6 (no order or
irrelevant option); the deterministic ones are made by `generate_variants` (the
page's action; timed once), the logic ones as approved LLM text would be. Then 13
simulated runs reply to every item: short replies ("答案：B", "正确"), right on 70 %
of the seeds, consistent on 85 % of the variants, 5 % refusals.

Timed, per build of the report (`judging.robustness.report.build`, what the page
and every CSV download call): the whole build, and within it `extract_all`
(reading 177,203 replies by the MC/TF rules) and the robustness tables
(`robustness` pooled / per relation / per sector plus the report's tables); the
rest is reading variants, answer keys, option counts and replies from
PostgreSQL. Also the report page as a manager gets it (build + two matplotlib
heatmaps + template) through Django's test client. The replies here are short;
bench/extraction_bench.py times extraction on long, mixed-language ones.
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from benchmark import formats  # noqa: E402
from benchmark.actions import (  # noqa: E402
    do_create_benchmark,
    do_create_user,
    do_create_variants,
)
from benchmark.models import Benchmark, Item, ItemVariant, Rendering  # noqa: E402
from judging.evaluation.models import EvaluationRun, Response  # noqa: E402
from judging.evaluation.relations import RELATIONS, Change  # noqa: E402
from judging.robustness import actions, generation, report, views  # noqa: E402

SLUG = "bench-robustness"
MC_SEEDS, TF_SEEDS, MODELS = 828, 1001, 13
SECTORS = ("电力", "机械", "化工", "汽车", "冶金", "建筑")
RESOURCES = "kind,language,key,value\nsynonym,zh,USB,U盘\nlaw,zh,*,安全生产法\n"


def ms(values) -> str:
    return (
        f"best {min(values) * 1000:.0f} ms, median "
        f"{statistics.median(values) * 1000:.0f} ms (n={len(values)})"
    )


@transaction.atomic
def create_seeds(benchmark) -> None:
    items = Item.objects.bulk_create(
        [
            Item(
                benchmark=benchmark,
                external_id=f"MC-{n:05d}",
                domain=SECTORS[n % len(SECTORS)],
                format=formats.MULTIPLE_CHOICE,
                correct_options=["ABCD"[n % 4]],
            )
            for n in range(MC_SEEDS)
        ]
        + [
            Item(
                benchmark=benchmark,
                external_id=f"TF-{n:05d}",
                domain=SECTORS[n % len(SECTORS)],
                format=formats.TRUE_FALSE,
                correct_answer=bool(n % 2),
            )
            for n in range(TF_SEEDS)
        ]
    )
    Rendering.objects.bulk_create(
        Rendering(
            item=item,
            language="zh",
            question=(
                f"第{n}题：USB 设备的线缆长度为 {n % 90 + 10}0 cm 时，额定电压是多少？"
                if item.format == formats.MULTIPLE_CHOICE
                else f"第{n}题：USB 接口的线缆长度为 {n % 90 + 10}0 cm。"
            ),
            answer="",
            options=["5 V", "12 V", "24 V", "220 V"]
            if item.format == formats.MULTIPLE_CHOICE
            else [],
            origin=Rendering.Origin.SOURCE,
        )
        for n, item in enumerate(items)
    )


def create_data() -> tuple[Benchmark, float]:
    benchmark = Benchmark.objects.filter(slug=SLUG).first()
    if benchmark is not None:
        return benchmark, float("nan")
    benchmark = do_create_benchmark(name="Robustness bench", slug=SLUG)
    create_seeds(benchmark)
    actions.do_replace_resources(benchmark, RESOURCES)
    start = time.perf_counter()
    actions.generate_variants(
        benchmark, generation.SEED_FORMATS, generation.DETERMINISTIC, "domain"
    )
    generated = time.perf_counter() - start
    entries = generation.stored_entries(benchmark)
    with transaction.atomic():
        do_create_variants(
            benchmark,
            [
                generation.variant_spec(
                    seed, "logic", entries, llm_text=seed.rendering.question + "（否）"
                )
                for seed in generation.seeds(benchmark, [formats.TRUE_FALSE], "domain")
            ],
        )
    create_runs(benchmark, np.random.default_rng(0))
    return benchmark, generated


def create_runs(benchmark, rng) -> None:
    links = list(ItemVariant.objects.filter(seed__benchmark=benchmark))
    keys = {
        pk: (item_format, correct_options, correct_answer)
        for pk, item_format, correct_options, correct_answer in Item.objects.filter(
            benchmark=benchmark, variant_of__isnull=True
        ).values_list("id", "format", "correct_options", "correct_answer")
    }
    for m in range(MODELS):
        run = EvaluationRun.objects.create(
            benchmark=benchmark,
            model_name=f"model-{m:02d}",
            language="zh",
            origin=EvaluationRun.Origin.SIMULATED,
            status=EvaluationRun.Status.COMPLETE,
        )
        answers, replies = {}, {}
        for pk, (item_format, correct_options, correct_answer) in keys.items():
            tf = item_format == formats.TRUE_FALSE
            right = int(correct_answer) if tf else "ABCD".index(correct_options[0])
            width = 2 if tf else 4
            answer = right if rng.random() < 0.7 else int(rng.integers(width))
            answers[pk] = answer
            replies[pk] = reply(answer, tf, rng)
        for link in links:
            a, tf = answers[link.seed_id], keys[link.seed_id][0] == formats.TRUE_FALSE
            change = RELATIONS[link.relation].change
            if rng.random() < 0.85:
                b = (
                    1 - a
                    if change == Change.FLIP
                    else link.option_map.index(a)
                    if change in (Change.REMAP, Change.ADDED)
                    else a
                )
            else:
                b = int(rng.integers(2 if tf else len(link.option_map) or 4))
            replies[link.item_id] = reply(b, tf, rng)
        Response.objects.bulk_create(
            (
                Response(run=run, item_id=pk, text=text, status="answered")
                for pk, text in replies.items()
            ),
            batch_size=5000,
        )


def reply(answer: int, tf: bool, rng) -> str:
    if rng.random() < 0.05:
        return "抱歉，我无法回答这个问题。"
    if tf:
        return "正确" if answer else "错误"
    return f"根据相关标准，答案：{'ABCDEFG'[answer]}"


def timed(function, into: list, cpu: list | None = None):
    def wrapper(*args, **kwargs):
        start, started_cpu = time.perf_counter(), time.process_time()
        result = function(*args, **kwargs)
        into.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(time.process_time() - started_cpu)
        return result

    return wrapper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    start = time.perf_counter()
    benchmark, generated = create_data()
    print(f"data ready in {time.perf_counter() - start:.1f} s")
    items = Item.objects.filter(benchmark=benchmark).count()
    responses = Response.objects.filter(run__benchmark=benchmark).count()
    variants = ItemVariant.objects.filter(seed__benchmark=benchmark).count()
    print(f"items={items} (variants {variants}) runs={MODELS} replies={responses}")
    if generated == generated:  # not NaN: the data was made in this call
        print(f"generate_variants (7 relations, 1,829 seeds): {generated:.2f} s")

    extraction, extraction_cpu, tables = [], [], []
    report.extract_all = timed(report.extract_all, extraction, extraction_cpu)
    report.robustness = timed(report.robustness, tables)
    make_tables = report._tables
    table_times = []
    report._tables = timed(make_tables, table_times)
    builds, cpu = [], []
    for _ in range(args.repeat):
        start, started_cpu = time.perf_counter(), time.process_time()
        built = report.build(benchmark)
        builds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - started_cpu)
    robustness_tables = [a + b for a, b in zip(tables, table_times, strict=True)]
    reads = [
        b - e - t for b, e, t in zip(builds, extraction, robustness_tables, strict=True)
    ]
    print(f"report.build:               {ms(builds)}; CPU {ms(cpu)}")
    print(f"  reading from PostgreSQL:  {ms(reads)}")
    print(f"  extract_all:              {ms(extraction)}; CPU {ms(extraction_cpu)}")
    print(f"  robustness tables:        {ms(robustness_tables)}")
    pooled = built.result.pooled
    low, high = np.nanmin(pooled.correct), np.nanmax(pooled.correct)
    print(f"  correct robustness range: {low:.3f}–{high:.3f}")

    manager = do_create_user("bench-manager", "bench-password-1", "manager")
    client = Client()
    client.force_login(manager)
    url = reverse("judging:robustness_report", args=[benchmark.slug])
    heatmaps = []
    views.figures.heatmap_svg = timed(views.figures.heatmap_svg, heatmaps)
    cold, warm = [], []
    for _ in range(args.repeat):
        cache.clear()
        for into in (cold, warm):
            start = time.perf_counter()
            response = client.get(url, HTTP_HOST="localhost")
            into.append(time.perf_counter() - start)
            assert response.status_code == 200, response.status_code
    print(f"report page, cold (build + 2 heatmaps + template): {ms(cold)}")
    print(f"report page, report from the cache:               {ms(warm)}")
    print(f"  one heatmap (matplotlib SVG):                   {ms(heatmaps)}")
    print(f"load average: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
