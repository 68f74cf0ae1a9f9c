"""The robustness demo (seeded, marked simulated): a benchmark of MC and TF seed
items in four sectors, its resources, variants of all eight relations (logic ones
written by a simulated LLM run and approved, a few left awaiting review), and
simulated binary runs of several models whose replies are written here — no LLM
call — and graded by the MC/TF rules as a real run grades them (AnswerGrade).

`seed(benchmark)` is a load_demo seeder: it ignores the IndustryBench demo it is
given and makes its own benchmark once; run again, it changes nothing.
"""

from __future__ import annotations

import numpy as np
from django.db import transaction
from django.utils import timezone

from benchmark import formats
from benchmark.actions import do_create_benchmark
from benchmark.models import Benchmark, Item, ItemVariant, Rendering
from judging.evaluation.grading import grade_stored_answers
from judging.evaluation.models import EvaluationRun, Response
from judging.llm.models import Endpoint
from judging.llm.prompts import default_template
from judging.robustness import actions, generation
from judging.robustness.models import VariantDraft, VariantRun
from judging.robustness.relations import RELATIONS, Change

SLUG = "robustness-demo"
NAME = "Industrial robustness demo"
SEED = 20250301
AWAITING = 2  # logic drafts left for a reviewer

RESOURCES = """kind,language,key,value
synonym,zh,USB,U盘
synonym,zh,PLC,可编程控制器
synonym,zh,变频器,变频调速器
industry,zh,电力,电力能源
industry,zh,化工,石油化工
law,zh,*,安全生产法
law,zh,电力,电力法
irrelevant,zh,,一杯绿茶
irrelevant,zh,,一首唐诗
"""

# (sector, question, options, correct letter)
MC_SEEDS = (
    (
        "电力",
        "家用插座的额定电压一般为多少？",
        ["110 V", "220 V", "380 V", "36 V"],
        "B",
    ),
    (
        "电力",
        "电缆敷设时，直埋深度不应小于多少？",
        ["0.3 m", "0.7 m", "1.5 m", "2 m"],
        "B",
    ),
    ("机械", "M8 螺栓的公称直径是多少？", ["6 mm", "8 mm", "10 mm", "12 mm"], "B"),
    ("机械", "PLC 的扫描周期通常在什么量级？", ["微秒", "毫秒", "秒", "分钟"], "B"),
    (
        "化工",
        "压力容器的安全阀整定压力一般不超过设计压力的多少倍？",
        ["1.0", "1.05", "1.5", "2.0"],
        "B",
    ),
    (
        "化工",
        "储罐呼吸阀的作用是什么？",
        ["降温", "平衡罐内压力", "计量液位", "防止静电"],
        "B",
    ),
    ("汽车", "USB 接口的标准输出电压是多少？", ["3.3 V", "5 V", "12 V", "24 V"], "B"),
    (
        "汽车",
        "变频器主要调节电动机的什么参数？",
        ["电压", "频率", "电阻", "功率因数"],
        "B",
    ),
)
# (sector, statement, true?, negation the simulated LLM writes)
TF_SEEDS = (
    (
        "电力",
        "10 kV 配电线路的绝缘子应定期清扫。",
        True,
        "10 kV 配电线路的绝缘子不需要定期清扫。",
    ),
    ("电力", "变压器油的闪点不低于 135 ℃。", True, "变压器油的闪点低于 135 ℃。"),
    (
        "机械",
        "PLC 的输入模块可以直接驱动 220 V 电机。",
        False,
        "PLC 的输入模块不能直接驱动 220 V 电机。",
    ),
    ("机械", "轴承的游隙越小越好。", False, "轴承的游隙并非越小越好。"),
    ("化工", "易燃液体储罐区应设置防火堤。", True, "易燃液体储罐区不应设置防火堤。"),
    ("化工", "氧气瓶可以与乙炔瓶混放。", False, "氧气瓶不可以与乙炔瓶混放。"),
    (
        "汽车",
        "USB 2.0 接口的最大电流为 500 mA。",
        True,
        "USB 2.0 接口的最大电流不是 500 mA。",
    ),
    (
        "汽车",
        "变频器可以安装在潮湿的环境中。",
        False,
        "变频器不可以安装在潮湿的环境中。",
    ),
)
# (model, share of seeds right, share of variants consistent, refusal rate)
MODELS = (
    ("atlas-pro", 0.85, 0.92, 0.01),
    ("mixtral-moe-xl", 0.75, 0.84, 0.03),
    ("dense-70b", 0.7, 0.78, 0.02),
    ("sparrow-moe", 0.55, 0.7, 0.06),
    ("dense-8b", 0.45, 0.6, 0.08),
)


def seed(_demo_benchmark=None) -> Benchmark | None:
    """Make the robustness demo once; returns it (None when it exists)."""
    if Benchmark.objects.filter(slug=SLUG).exists():
        return None
    with transaction.atomic():
        benchmark = do_create_benchmark(
            name=NAME,
            slug=SLUG,
            target_languages=(),
            is_demo=True,
            description="Simulated: MC and TF seeds, their metamorphic variants "
            "and simulated model replies (the robustness study).",
        )
        # MC and TF answers are graded by the rules, correct or not.
        benchmark.scoring_scale = Benchmark.ScoringScale.BINARY
        benchmark.save(update_fields=["scoring_scale"])
        _seed_items(benchmark)
        actions.do_replace_resources(benchmark, RESOURCES)
        actions.generate_variants(
            benchmark,
            generation.SEED_FORMATS,
            generation.DETERMINISTIC,
            generation.DOMAIN,
        )
        _logic_run(benchmark)
        _runs(benchmark, np.random.default_rng(SEED))
    return benchmark


def _seed_items(benchmark) -> None:
    specs = [
        (f"RB-MC-{n + 1:02d}", sector, question, options, [letter], None)
        for n, (sector, question, options, letter) in enumerate(MC_SEEDS)
    ] + [
        (f"RB-TF-{n + 1:02d}", sector, statement, [], [], truth)
        for n, (sector, statement, truth, _) in enumerate(TF_SEEDS)
    ]
    items = Item.objects.bulk_create(
        Item(
            benchmark=benchmark,
            external_id=external_id,
            domain=sector,
            format=formats.MULTIPLE_CHOICE if options else formats.TRUE_FALSE,
            correct_options=letters,
            correct_answer=truth,
        )
        for external_id, sector, _, options, letters, truth in specs
    )
    Rendering.objects.bulk_create(
        Rendering(
            item=item,
            language=benchmark.source_language,
            question=question,
            answer=", ".join(letters) if options else ("正确" if truth else "错误"),
            options=options,
            origin=Rendering.Origin.SOURCE,
        )
        for item, (_, _, question, options, letters, truth) in zip(
            items, specs, strict=True
        )
    )


def _logic_run(benchmark) -> None:
    """A finished (simulated) LLM run: its negations approved, but the last
    AWAITING left for a reviewer."""
    endpoint, _ = Endpoint.objects.get_or_create(
        name="variant-writer-demo",
        defaults={
            "base_url": "https://llm.example.invalid/v1",
            "model": "variant-writer",
            "api_key_env": "DEMO_API_KEY",
            "is_active": False,
        },
    )
    seeds = generation.seeds(benchmark, [formats.TRUE_FALSE], generation.DOMAIN)
    now = timezone.now()
    run = VariantRun.objects.create(
        benchmark=benchmark,
        relation="logic",
        sector_field=generation.DOMAIN,
        endpoint=endpoint,
        template=default_template("variant_writing"),
        seed_ids=[s.item.pk for s in seeds],
        total_units=len(seeds),
        status=VariantRun.Status.COMPLETE,
        started_at=now,
        finished_at=now,
    )
    negation = {statement: negated for _, statement, _, negated in TF_SEEDS}
    drafts = VariantDraft.objects.bulk_create(
        VariantDraft(
            run=run,
            seed=s.item,
            relation="logic",
            sector=s.sector,
            text=negation[s.rendering.question],
        )
        for s in seeds
    )
    for draft in drafts[:-AWAITING]:
        actions.do_review_draft(draft.pk, actions.Decision.APPROVE, user=None)


def _runs(benchmark, rng) -> None:
    links = list(ItemVariant.objects.filter(seed__benchmark=benchmark))
    items = {item.pk: item for item in Item.objects.filter(benchmark=benchmark)}
    renderings = {
        rendering.item_id: rendering
        for rendering in Rendering.objects.filter(
            item__benchmark=benchmark,
            is_current=True,
            language=benchmark.source_language,
        )
    }
    n_options = {pk: rendering.options for pk, rendering in renderings.items()}
    variant_ids = {link.item_id for link in links}
    now = timezone.now()
    for model, skill, consistency, refusal in MODELS:
        run = EvaluationRun.objects.create(
            benchmark=benchmark,
            model_name=model,
            language=benchmark.source_language,
            origin=EvaluationRun.Origin.SIMULATED,
            status=EvaluationRun.Status.COMPLETE,
            binary=True,
            total_items=len(items),
            answered_count=len(items),
            started_at=now,
            finished_at=now,
        )
        answers = {
            pk: _seed_answer(item, len(n_options[pk]), skill, rng)
            for pk, item in items.items()
            if pk not in variant_ids
        }
        replies = {
            pk: _reply(a, len(n_options[pk]), refusal, rng) for pk, a in answers.items()
        }
        for link in links:
            a = answers[link.seed_id]
            width = len(n_options[link.item_id])
            if rng.random() < consistency:
                b = _expected(link, a)
            else:
                b = int(rng.integers(width if width else 2))
            replies[link.item_id] = _reply(b, width, refusal, rng)
        Response.objects.bulk_create(
            Response(
                run=run,
                item_id=pk,
                rendering=renderings[pk],
                text=text,
                status=Response.Status.ANSWERED,
            )
            for pk, text in replies.items()
        )
        # Graded by the rules as a binary run grades each answer on arrival.
        grade_stored_answers(run.responses.all())


def _seed_answer(item, width, skill, rng) -> int:
    if item.format == formats.TRUE_FALSE:
        right = int(bool(item.correct_answer))
        return right if rng.random() < skill else 1 - right
    right = formats.LETTERS.index(item.correct_options[0])
    if rng.random() < skill:
        return right
    return int(rng.choice([i for i in range(width) if i != right]))


def _expected(link, a: int) -> int:
    change = RELATIONS[link.relation].change
    if change == Change.FLIP:
        return 1 - a
    if change in (Change.REMAP, Change.ADDED):
        return link.option_map.index(a)
    return a


def _reply(answer: int, width: int, refusal: float, rng) -> str:
    if rng.random() < refusal:
        return "[simulated] 抱歉，我无法回答这个问题。"
    if not width:
        return "[simulated]\n" + ("正确。" if answer else "错误。")
    letter = formats.LETTERS[answer]
    return f"[simulated] 根据相关标准分析，答案：{letter}"
