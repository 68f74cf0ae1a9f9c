"""An LPFQA-style demo benchmark with simulated runs (seeded, marked simulated).

`seed(_)` (a `load_demo` seeder; the IndustryBench demo it is handed is not used)
creates the benchmark "LPFQA-style demo" on the binary scale: multiple-choice and
short-answer items with key points in four fields, in Chinese and English. Four
simulated models answer every item three times. Multiple-choice replies are written
as a model would write them — an answer marker, a bare letter, now and then two
answers, a refusal or no answer — and graded by the same rules a real run uses
(judging.evaluation.choices), so the outcomes shown are the rules' own; short
answers carry a key-point verdict from a simulated judge. No LLM call is made.
Safe to repeat: nothing is added once the benchmark has its runs.
"""

from __future__ import annotations

import io
import json

import numpy as np
from django.db import transaction
from django.utils import timezone

from benchmark.actions import do_create_benchmark
from benchmark.importing import do_import_items
from benchmark.models import Benchmark, Item, Rendering
from judging.evaluation.choices import answer_key, read_answer
from judging.evaluation.models import AnswerGrade, EvaluationRun, Judgment, Response

SLUG = "lpfqa-demo"
NAME = "LPFQA-style demo"
SEED = 20250301
TRIALS = 3
JUDGE = "keypoint-judge"
JUDGE_PROMPT = "lpfqa-keypoint-judge v1"
LETTERS = "ABCD"

# (model, category, skill, how often it flags: refusal or two answers)
MODELS = (
    ("atlas-pro", "closed", 1.5, 0.02),
    ("mixtral-moe-xl", "open MoE", 0.8, 0.05),
    ("dense-70b", "open dense", 0.5, 0.04),
    ("dense-8b", "open dense", -0.4, 0.10),
)

# (id, field, zh question, en question, options zh, options en, correct letter)
MULTIPLE_CHOICE = (
    (
        "LP-MC-01",
        "machinery",
        "8.8 级螺栓的公称抗拉强度是多少？",
        "What is the nominal tensile strength of a class 8.8 bolt?",
        ["640 MPa", "800 MPa", "880 MPa", "1000 MPa"],
        ["640 MPa", "800 MPa", "880 MPa", "1000 MPa"],
        "B",
    ),
    (
        "LP-MC-02",
        "machinery",
        "深沟球轴承代号 6205 的内径是多少？",
        "What is the bore of a 6205 deep-groove ball bearing?",
        ["20 mm", "25 mm", "52 mm", "15 mm"],
        ["20 mm", "25 mm", "52 mm", "15 mm"],
        "B",
    ),
    (
        "LP-MC-03",
        "machinery",
        "渐开线标准直齿圆柱齿轮的标准压力角是多少？",
        "What is the standard pressure angle of an involute spur gear?",
        ["14.5°", "25°", "20°", "30°"],
        ["14.5°", "25°", "20°", "30°"],
        "C",
    ),
    (
        "LP-MC-04",
        "electrical",
        "IP67 中第一位数字 6 表示什么？",
        "In IP67, what does the first digit 6 mean?",
        ["防溅水", "尘密", "防尘", "可短时浸水"],
        ["Splash-proof", "Dust-tight", "Dust-protected", "Temporary immersion"],
        "B",
    ),
    (
        "LP-MC-05",
        "electrical",
        "我国低压配电系统的标准频率是多少？",
        "What is the standard mains frequency of China's low-voltage grid?",
        ["50 Hz", "60 Hz", "400 Hz", "25 Hz"],
        ["50 Hz", "60 Hz", "400 Hz", "25 Hz"],
        "A",
    ),
    (
        "LP-MC-06",
        "electrical",
        "TN-S 系统中 PE 线的作用是什么？",
        "What is the PE conductor for in a TN-S system?",
        ["工作中性线", "保护接地", "相线", "信号地"],
        ["Working neutral", "Protective earth", "Phase conductor", "Signal ground"],
        "B",
    ),
    (
        "LP-MC-07",
        "chemical",
        "压力容器水压试验压力一般为设计压力的多少倍？",
        "A pressure vessel's hydrostatic test pressure is usually how many times its "
        "design pressure?",
        ["1.0", "1.25", "2.0", "3.0"],
        ["1.0", "1.25", "2.0", "3.0"],
        "B",
    ),
    (
        "LP-MC-08",
        "chemical",
        "爆炸性气体环境中 0 区指什么？",
        "What is Zone 0 in an explosive gas atmosphere?",
        ["偶尔出现", "连续或长期出现", "不太可能出现", "从不出现"],
        [
            "Occasionally present",
            "Present continuously or for long periods",
            "Unlikely to be present",
            "Never present",
        ],
        "B",
    ),
    (
        "LP-MC-09",
        "materials",
        "Q235 钢中 235 表示什么？",
        "What does 235 stand for in Q235 steel?",
        ["抗拉强度 235 MPa", "屈服强度 235 MPa", "含碳量 0.235%", "硬度 235 HB"],
        [
            "Tensile strength 235 MPa",
            "Yield strength 235 MPa",
            "0.235 % carbon",
            "Hardness 235 HB",
        ],
        "B",
    ),
    (
        "LP-MC-10",
        "materials",
        "304 不锈钢的主要合金元素是哪一组？",
        "Which are the main alloying elements of 304 stainless steel?",
        ["铬和钼", "铬和镍", "锰和硅", "钛和铌"],
        [
            "Chromium and molybdenum",
            "Chromium and nickel",
            "Manganese and silicon",
            "Titanium and niobium",
        ],
        "B",
    ),
    (
        "LP-MC-11",
        "materials",
        "HRC 是哪种硬度的符号？",
        "What kind of hardness does HRC denote?",
        ["布氏硬度", "维氏硬度", "洛氏硬度 C 标尺", "肖氏硬度"],
        ["Brinell", "Vickers", "Rockwell, C scale", "Shore"],
        "C",
    ),
    (
        "LP-MC-12",
        "chemical",
        "离心泵启动前通常应先做什么？",
        "What is usually done before starting a centrifugal pump?",
        ["全开出口阀", "灌泵排气", "关闭入口阀", "反转试车"],
        [
            "Open the discharge valve fully",
            "Prime the pump and vent it",
            "Close the suction valve",
            "Run it in reverse",
        ],
        "B",
    ),
)

# (id, field, zh question, en question, zh answer, en answer, zh points, en points)
SHORT_ANSWER = (
    (
        "LP-SA-01",
        "machinery",
        "8.8 级螺栓的公称抗拉强度和屈服强度各是多少？",
        "What are the nominal tensile and yield strengths of a class 8.8 bolt?",
        "抗拉强度 800 MPa，屈服强度 640 MPa。",
        "800 MPa tensile, 640 MPa yield.",
        ["公称抗拉强度 800 MPa", "公称屈服强度 640 MPa"],
        ["nominal tensile strength 800 MPa", "nominal yield strength 640 MPa"],
    ),
    (
        "LP-SA-02",
        "electrical",
        "电气设备保护接地的目的是什么？",
        "Why is electrical equipment protectively earthed?",
        "外壳带电时使故障电流经接地导体流走并使保护电器动作，防止触电。",
        "So that a fault current flows to earth and trips the protective device, "
        "preventing electric shock.",
        ["故障电流经接地导体流走", "使保护电器动作切断电源"],
        [
            "fault current flows through the earth conductor",
            "the protective device trips and disconnects the supply",
        ],
    ),
    (
        "LP-SA-03",
        "chemical",
        "压力容器安全阀的整定压力应如何确定？",
        "How is the set pressure of a pressure vessel's safety valve chosen?",
        "不得超过容器的设计压力，一般取最高工作压力的 1.05–1.1 倍。",
        "No higher than the design pressure, usually 1.05–1.1 times the maximum "
        "working pressure.",
        ["不超过设计压力", "约为最高工作压力的 1.05–1.1 倍"],
        [
            "not above the design pressure",
            "about 1.05–1.1 × the maximum working pressure",
        ],
    ),
    (
        "LP-SA-04",
        "materials",
        "淬火后为什么要回火？",
        "Why is steel tempered after quenching?",
        "降低淬火应力和脆性，获得所需的强度与韧性配合。",
        "To relieve quenching stresses and brittleness and reach the required balance "
        "of strength and toughness.",
        ["消除或降低淬火应力", "降低脆性、提高韧性"],
        ["relieves quenching stresses", "reduces brittleness, raises toughness"],
    ),
    (
        "LP-SA-05",
        "machinery",
        "滚动轴承的基本额定寿命 L10 是什么意思？",
        "What does a rolling bearing's basic rating life L10 mean?",
        "一批相同轴承在相同条件下运转，90% 不发生疲劳点蚀前所达到的寿命。",
        "The life that 90 % of a group of identical bearings reach before fatigue "
        "pitting under the same conditions.",
        ["90% 的轴承可达到", "以疲劳点蚀为失效判据"],
        ["reached by 90 % of the bearings", "failure means fatigue pitting"],
    ),
    (
        "LP-SA-06",
        "electrical",
        "为什么电流互感器二次侧不得开路？",
        "Why must a current transformer's secondary never be open-circuited?",
        "开路时二次侧会感应出很高的电压，危及人身和设备，并使铁芯过热。",
        "An open secondary develops a dangerously high voltage and overheats the core.",
        ["二次侧产生高电压危及安全", "铁芯严重饱和过热"],
        [
            "a dangerous high voltage appears on the secondary",
            "the core saturates and overheats",
        ],
    ),
)


def _lines() -> list[dict]:
    lines = []
    for key, field, q_zh, q_en, o_zh, o_en, correct in MULTIPLE_CHOICE:
        lines.append(
            {
                "id": key,
                "domain": field,
                "item_format": "multiple_choice",
                "correct_options": [correct],
                "renderings": {
                    "zh": {"question": q_zh, "answer": "", "options": o_zh},
                    "en": {"question": q_en, "answer": "", "options": o_en},
                },
            }
        )
    for key, field, q_zh, q_en, a_zh, a_en, k_zh, k_en in SHORT_ANSWER:
        lines.append(
            {
                "id": key,
                "domain": field,
                "item_format": "short_answer",
                "renderings": {
                    "zh": {"question": q_zh, "answer": a_zh, "key_points": k_zh},
                    "en": {"question": q_en, "answer": a_en, "key_points": k_en},
                },
            }
        )
    return lines


def seed(_benchmark=None) -> Benchmark:
    """Create the LPFQA-style demo and its simulated runs, unless present."""
    benchmark = Benchmark.objects.filter(slug=SLUG).first()
    if benchmark is None:
        with transaction.atomic():
            benchmark = do_create_benchmark(
                name=NAME,
                slug=SLUG,
                target_languages=("en",),
                description="Multiple choice and short answers with key points, "
                "graded correct / incorrect over three trials (LPFQA's protocol).",
                is_demo=True,
            )
            benchmark.scoring_scale = Benchmark.ScoringScale.BINARY
            benchmark.save(update_fields=["scoring_scale"])
            data = "\n".join(json.dumps(line, ensure_ascii=False) for line in _lines())
            do_import_items(
                io.BytesIO(data.encode()),
                slug=SLUG,
                layout="jsonl",
                filename="lpfqa_demo.jsonl",
                is_demo=True,
            )
    if not EvaluationRun.objects.filter(benchmark=benchmark).exists():
        with transaction.atomic():
            _seed_runs(benchmark)
    return benchmark


def _mc_reply(rng, key: int, right: bool, flags: float) -> str:
    draw = rng.random()
    if draw < flags / 2:
        return "我无法确定，这取决于具体标准的版本。"
    if draw < flags:
        first, second = (LETTERS[k] for k in sorted(rng.choice(4, 2, replace=False)))
        return f"可能是{first}，也可能是{second}。答案是{first}和{second}"
    letter = LETTERS[key] if right else LETTERS[(key + 1 + rng.integers(3)) % 4]
    style = rng.integers(3)
    if style == 0:
        return f"答案：{letter}"
    if style == 1:
        return f"{letter}"
    return f"根据相关标准分析各选项，正确答案是{letter}。"


def _seed_runs(benchmark) -> None:
    rng = np.random.default_rng(SEED)
    items = list(benchmark.items.order_by("external_id"))
    renderings = {
        r.item_id: r
        for r in Rendering.objects.filter(
            item__in=items, language="zh", is_current=True
        )
    }
    difficulty = rng.normal(0.0, 1.0, len(items))
    now = timezone.now()
    for model, category, skill, flags in MODELS:
        run = EvaluationRun.objects.create(
            benchmark=benchmark,
            model_name=model,
            model_category=category,
            language="zh",
            origin=EvaluationRun.Origin.SIMULATED,
            status=EvaluationRun.Status.COMPLETE,
            binary=True,
            trials=TRIALS,
            judge_name=JUDGE,
            judge_prompt_version=JUDGE_PROMPT,
            total_items=len(items) * TRIALS,
            answered_count=len(items) * TRIALS,
            started_at=now,
            finished_at=now,
        )
        responses, verdicts, grades = [], [], []
        for i, item in enumerate(items):
            rendering = renderings[item.pk]
            p_right = 1 / (1 + np.exp(-(skill - difficulty[i]) * 1.5))
            for trial in range(TRIALS):
                right = bool(rng.random() < p_right)
                response = Response(
                    run=run,
                    item=item,
                    rendering=rendering,
                    trial=trial,
                    status=Response.Status.ANSWERED,
                )
                if item.format == Item.Format.MULTIPLE_CHOICE:
                    key = answer_key(
                        item.format,
                        n_options=len(rendering.options),
                        correct_options=item.correct_options,
                        correct_answer=None,
                    )
                    correct = LETTERS.index(item.correct_options[0])
                    response.text = _mc_reply(rng, correct, right, flags)
                    extracted, grade = read_answer(response.text, key)
                    grades.append(
                        AnswerGrade(
                            response=response, extracted=extracted, grade=int(grade)
                        )
                    )
                else:
                    response.text = "[simulated] " + (
                        rendering.answer if right else rendering.key_points[0] + "。"
                    )
                    verdicts.append((response, right))
                responses.append(response)
        Response.objects.bulk_create(responses)
        AnswerGrade.objects.bulk_create(grades)
        Judgment.objects.bulk_create(
            Judgment(
                response=response,
                kind=Judgment.Kind.KEYPOINT,
                judge_name=JUDGE,
                prompt_version=JUDGE_PROMPT,
                score=int(right),
                reason="Every key point is met (simulated)."
                if right
                else "Misses a key point (simulated).",
                status=Judgment.Status.DONE,
            )
            for response, right in verdicts
        )
        EvaluationRun.objects.filter(pk=run.pk).update(
            judged_count=len(verdicts),
            scored_count=len(responses),
        )
