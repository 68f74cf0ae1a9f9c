"""The robustness report from PostgreSQL at study 002's scale: 1,200 seeds in its
eight sectors, their variants under the eight relations, × 12 models.

    DATABASE_URL=postgres://… .venv/bin/python bench/robustness_bench.py [--repeat 5]

Creates (once) a binary benchmark `bench-robustness-002`: 600 MC seeds (4 options)
and 600 TF seeds, 150 per sector as in the study, each with a number and unit and
a glossary term so every relation applies: MC seeds get 7 variants (all but
logic), TF seeds 6 (no order or irrelevant option); the deterministic ones are made
by `generate_variants` (the page's action; timed once), the logic ones as approved
LLM text would be. Then 12 simulated binary runs reply to every item: short
replies ("答案：B", "正确"), right on 70 % of the seeds, consistent on 85 % of the
variants, 5 % refusals, 1 % provider refusals (the response's own status); each
reply records the rendering asked and is graded by `grading.grade_stored_answers`,
so every reply has its AnswerGrade as in a real binary run. The report computes
the study's definitions: pooled robustness (Table 4), the relation × sector cells
and their means (Table 6, Figure 3), the variant counts (Table 3), the majority
over each run's trials.

Timed, per build of the report (`judging.robustness.report.build`, what the page
and every CSV download call): the whole build, and within it `report.answers`
(the answer of each run to each item: stored grades, extraction of replies without
one) and the robustness tables (`robustness` pooled / per relation / per sector
plus the report's tables); the rest is reading variants, answer keys and current
renderings. Then the same build with no stored grade (an imported run, or runs from
before grading: every reply is read by the rules; the grades are deleted in a
transaction that is rolled back). Also the report page as a manager gets it (build +
two matplotlib heatmaps + template) through Django's test client. The replies here
are short; bench/extraction_bench.py times extraction on long, mixed-language ones.
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
from django.db.models import OuterRef, Subquery  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from benchmark import formats  # noqa: E402
from benchmark.actions import (  # noqa: E402
    do_create_benchmark,
    do_create_user,
    do_create_variants,
)
from benchmark.models import Benchmark, Item, ItemVariant, Rendering  # noqa: E402
from judging.evaluation.grading import grade_stored_answers  # noqa: E402
from judging.evaluation.models import AnswerGrade, EvaluationRun, Response  # noqa: E402
from judging.robustness import actions, generation, report, views  # noqa: E402
from judging.robustness.relations import RELATIONS, Change  # noqa: E402

SLUG = "bench-robustness-002"
MC_SEEDS, TF_SEEDS, MODELS = 600, 600, 12
# Study 002's eight sectors (§2.1, Table 3).
SECTORS = ("电子", "装备", "钢铁", "矿业", "电力", "石化", "建筑", "纺织")
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
        grade_runs(benchmark)
        return benchmark, float("nan")
    benchmark = do_create_benchmark(name="Robustness bench", slug=SLUG)
    benchmark.scoring_scale = Benchmark.ScoringScale.BINARY
    benchmark.save(update_fields=["scoring_scale"])
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
    grade_runs(benchmark)
    return benchmark, generated


def grade_runs(benchmark) -> None:
    """Grade the replies without a grade as a binary run does (on data made by an
    earlier version of this script: record the rendering asked first)."""
    responses = Response.objects.filter(run__benchmark=benchmark)
    current = Rendering.objects.filter(
        item=OuterRef("item"), is_current=True, language=benchmark.source_language
    ).values("pk")[:1]
    with transaction.atomic():
        EvaluationRun.objects.filter(benchmark=benchmark).update(binary=True)
        responses.filter(rendering__isnull=True).update(rendering=Subquery(current))
    start = time.perf_counter()
    graded = grade_stored_answers(responses.filter(grade__isnull=True))
    if graded:
        took = time.perf_counter() - start
        print(f"grade_stored_answers: {graded} replies graded in {took:.1f} s")


def create_runs(benchmark, rng) -> None:
    links = list(ItemVariant.objects.filter(seed__benchmark=benchmark))
    renderings = dict(
        Rendering.objects.filter(item__benchmark=benchmark, is_current=True)
        .order_by()
        .values_list("item_id", "pk")
    )
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
            binary=True,
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
                Response(
                    run=run,
                    item_id=pk,
                    rendering_id=renderings[pk],
                    text=text,
                    # The provider's filter declines 1 % of the requests.
                    status="refused" if rng.random() < 0.01 else "answered",
                )
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
        print(f"generate_variants (7 relations, 1,200 seeds): {generated:.2f} s")

    grades = AnswerGrade.objects.filter(response__run__benchmark=benchmark).count()
    print(f"stored grades: {grades} of {responses} replies")

    reading, reading_cpu, extracted, tables, table_times = [], [], [], [], []
    report.answers = timed(report.answers, reading, reading_cpu)
    extract_all = report.extract_all

    def counted(replies, n_options):
        extracted.append(len(replies))
        return extract_all(replies, n_options)

    report.extract_all = counted
    report.robustness = timed(report.robustness, tables)
    report._tables = timed(report._tables, table_times)

    def builds(repeat: int) -> dict:
        for into in (reading, reading_cpu, extracted, tables, table_times):
            into.clear()
        wall, cpu = [], []
        for _ in range(repeat):
            start, started_cpu = time.perf_counter(), time.process_time()
            built = report.build(benchmark)
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - started_cpu)
        robustness_tables = [a + b for a, b in zip(tables, table_times, strict=True)]
        rest = [
            b - r - t for b, r, t in zip(wall, reading, robustness_tables, strict=True)
        ]
        print(f"report.build:                {ms(wall)}; CPU {ms(cpu)}")
        print(f"  answers (grades, texts):   {ms(reading)}; CPU {ms(reading_cpu)}")
        print(f"    replies read by rules:   {extracted[0] if extracted else 0}")
        print(f"  robustness tables:         {ms(robustness_tables)}")
        print(f"  variants, keys, renderings: {ms(rest)}")
        return built

    print("-- from stored grades")
    built = builds(args.repeat)
    pooled = built.result.pooled
    low, high = np.nanmin(pooled.correct), np.nanmax(pooled.correct)
    print(f"  correct robustness (pooled) range: {low:.3f}–{high:.3f}")
    counts = built.result.variant_counts
    print(f"  variants per sector (Table 3): {counts.sum(axis=1).tolist()}")
    refused = int(pooled.provider_refused_variants.sum())
    print(f"  provider-refused variants left out: {refused}")
    print("-- no stored grade (every reply read by the rules)")
    with transaction.atomic():
        AnswerGrade.objects.filter(response__run__benchmark=benchmark).delete()
        reread = builds(max(2, args.repeat // 2))
        transaction.set_rollback(True)
    same = repr(reread.tables) == repr(built.tables)
    print(f"  the same tables as from stored grades: {same}")

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
