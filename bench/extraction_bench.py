"""MC/TF answer extraction and scoring at study scale: 13,631 items × 13 models =
177,203 replies in Chinese, English, Russian and Vietnamese (target ≤ 2 s); then the
robustness tables for 13,631 seeds × 13 models (target ≤ 1 s).

    .venv/bin/python bench/extraction_bench.py [--repeat 3]

Replies are synthetic (seeded): bare letters and verdicts, answer markers after a
paragraph of filler, final answers overriding an earlier one, several answers,
refusals and replies with no answer, in the four languages, each with the outcome
and value it was written to have. Templates are drawn uniformly, so about 40 % of
the replies are flagged: more than real runs, and the slow path (a flagged reply
goes through every tier). The script times extract_all + grade + accuracy, and
checks that every reply gets the outcome it was written with.

Robustness: every one of the 13,631 items is taken as a seed with a variant for each
relation of relations.RELATIONS whose formats include it (TF: 6 relations, MC: 7),
about 92,000 variants; the study's own design has fewer (13,631 items counting
seeds and variants), so this is the harder case. Answers are random with 5 %
refusals and 2 % unreadable replies; the script times `robustness` (pooled, per
relation, per sector). No database or Django settings needed.

With --db, the same replies are stored first, as an evaluation run's responses
(13 runs of a binary benchmark in PostgreSQL, once), and the script times what a run
does with them: `grading.grade_stored_answers` — read the replies and answer keys,
extract and grade (`stored_answer_grades`), then write the AnswerGrade rows
(`write_grades`: one COPY, or COPY and one INSERT … ON CONFLICT when re-grading);
first with no grade rows, then re-grading over them — and the
leaderboard's read of the stored grades (`accuracy_report.load_binary` and every
run's accuracy). Every stored grade is checked against the written one.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/assay_bench_extraction \
      SECRET_KEY=bench ALLOWED_HOSTS=testserver \
      .venv/bin/python bench/extraction_bench.py --db [--repeat 3]
"""

import argparse
import os
import pathlib
import random
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from judging.evaluation.extraction import (  # noqa: E402
    Outcome,
    accuracy,
    extract_all,
    grade,
)
from judging.robustness.measures import (  # noqa: E402
    REFUSED,
    UNREADABLE,
    Change,
    Variants,
    robustness,
)
from judging.robustness.relations import MC, RELATIONS, TF  # noqa: E402

ITEMS, MODELS = 13_631, 13
RIGHT = 0.7  # share of replies that name the key (before any flagged template)
LANGUAGES = ("zh", "en", "ru", "vi")
LETTERS = "ABCDEFG"

# Filler words that hold no marker, verdict, refusal or capital letter.
WORDS = {
    "zh": "螺栓 扭矩 焊缝 钢材 压力 管道 阀门 电缆 变压器 轴承 齿轮 温度 强度 "
    "标准 规定 设备 检修 工艺 材料 厚度 直径 介质 传感器 控制 回路 首先 其次 "
    "根据 分析 可知 因为 其中 考虑 一般 要求 条件".split(),
    "en": "the bolt torque weld steel pressure pipe valve cable transformer bearing "
    "gear temperature strength standard requires equipment maintenance process "
    "material thickness diameter medium sensor control loop first because "
    "typically given considering which under conditions rated".split(),
    "ru": "болт момент шов сталь давление труба клапан кабель трансформатор "
    "подшипник шестерня температура прочность стандарт требует оборудование "
    "обслуживание процесс материал толщина диаметр среда датчик контур сначала "
    "потому обычно учитывая при условиях номинальный".split(),
    "vi": "bu lông mô men mối hàn thép áp suất ống van cáp máy biến áp ổ bi bánh "
    "răng nhiệt độ độ bền tiêu chuẩn yêu cầu thiết bị bảo trì quy trình vật liệu "
    "độ dày đường kính môi chất cảm biến điều khiển vòng trước hết vì thường".split(),
}
JOIN = {"zh": "", "en": " ", "ru": " ", "vi": " "}
STOP = {"zh": "。", "en": ". ", "ru": ". ", "vi": ". "}

# (template, outcome); {L} is the answer, {M} an earlier or second answer, {F} filler.
CHOICE_TEMPLATES = {
    "zh": [
        ("{L}", "one"),
        ("答案：{L}", "one"),
        ("（{L}）", "one"),
        ("{F}因此答案是{L}。", "one"),
        ("{F}故选{L}。", "one"),
        ("答案是{M}。{F}最终答案：{L}", "one"),
        ("答案是{L}和{M}", "multiple"),
        ("{F}我无法回答这个问题。", "refusal"),
        ("{F}", "none"),
    ],
    "en": [
        ("**{L}**", "one"),
        ("Answer: {L}", "one"),
        ("{F}Therefore, the correct answer is ({L}).", "one"),
        ("{L}. {F}", "one"),
        ("The answer is {M}. {F}Final answer: {L}", "one"),
        ("{F}The answer is {L} and {M}.", "multiple"),
        ("{F}I cannot answer this question.", "refusal"),
        ("{F}", "none"),
    ],
    "ru": [
        ("Ответ: {L}", "one"),
        ("{F}Правильный ответ — {L}.", "one"),
        ("{F}Окончательный ответ: {L}", "one"),
        ("Ответ: {L} или {M}", "multiple"),
        ("Не могу ответить. {F}", "refusal"),
        ("{F}", "none"),
    ],
    "vi": [
        ("Đáp án: {L}", "one"),
        ("{F}Chọn {L}.", "one"),
        ("{F}Đáp án đúng là {L}.", "one"),
        ("Đáp án: {L} và {M}", "multiple"),
        ("{F}Tôi không thể trả lời câu hỏi này.", "refusal"),
        ("{F}", "none"),
    ],
}
VERDICTS = {
    "zh": (("正确", "对"), ("错误", "不正确")),
    "en": (("True", "correct"), ("False", "not true")),
    "ru": (("Верно", "верно"), ("Неверно", "не верно")),
    "vi": (("Đúng", "đúng"), ("Sai", "không đúng")),
}
# {V} a verdict word that may open a reply, {W} one that follows a statement subject.
TF_TEMPLATES = {
    "zh": [
        ("{V}", "one"),
        ("{F}答案：{V}", "one"),
        ("{F}因此该说法{W}。", "one"),
        ("{F}我无法判断。", "refusal"),
        ("{F}", "none"),
    ],
    "en": [
        ("{V}. {F}", "one"),
        ("{F}The statement is {W}.", "one"),
        ("{F}Final answer: {V}", "one"),
        ("{F}I don't know.", "refusal"),
        ("{F}", "none"),
    ],
    "ru": [
        ("{V}. {F}", "one"),
        ("{F}Утверждение {W}.", "one"),
        ("{F}Не могу сказать.", "refusal"),
        ("{F}", "none"),
    ],
    "vi": [
        ("{V}. {F}", "one"),
        ("{F}Nhận định này {W}.", "one"),
        ("{F}Tôi không biết.", "refusal"),
        ("{F}", "none"),
    ],
}
OUTCOMES = {"one": Outcome.ANSWERED, "multiple": Outcome.MULTIPLE}
OUTCOMES |= {"refusal": Outcome.REFUSAL, "none": Outcome.NONE}


def filler(rng: random.Random, language: str) -> str:
    """Zero to four sentences of 4–20 words: replies from a few to ~600 characters."""
    words, join, stop = WORDS[language], JOIN[language], STOP[language]
    sentences = [
        join.join(rng.choices(words, k=rng.randint(4, 20)))
        for _ in range(rng.choice((0, 1, 2, 4)))
    ]
    return "".join(sentence + stop for sentence in sentences)


def synthetic(seed: int = 0):
    """Replies (models × items, flattened), option counts (0 = TF), expected outcome
    and value, and the accepted-values matrix."""
    rng = random.Random(seed)
    n_options = [rng.choice((0, 0, 4, 4, 4, 5, 6)) for _ in range(ITEMS)]
    language = [rng.choice(LANGUAGES) for _ in range(ITEMS)]
    key = [rng.randrange(n) if n else rng.randrange(2) for n in n_options]
    replies, expected_outcome, expected_value = [], [], []
    for _ in range(MODELS):
        for item, (n, lang) in enumerate(zip(n_options, language, strict=True)):
            if n:
                template, kind = rng.choice(CHOICE_TEMPLATES[lang])
                answer = key[item] if rng.random() < RIGHT else rng.randrange(n)
                other = rng.choice([k for k in range(n) if k != answer])
                text = template.format(
                    L=LETTERS[answer], M=LETTERS[other], F=filler(rng, lang)
                )
            else:
                template, kind = rng.choice(TF_TEMPLATES[lang])
                answer = key[item] if rng.random() < RIGHT else rng.randrange(2)
                lead, word = VERDICTS[lang][1 - answer]  # index 0 holds "true"
                text = template.format(V=lead, W=word, F=filler(rng, lang))
            replies.append(text)
            expected_outcome.append(OUTCOMES[kind])
            expected_value.append(answer if kind == "one" else -1)
    accepted = np.zeros((ITEMS, max(n_options)), dtype=bool)
    accepted[np.arange(ITEMS), key] = True
    return (
        replies,
        np.tile(n_options, MODELS),
        np.array(expected_outcome, dtype=np.int8),
        np.array(expected_value, dtype=np.int16),
        np.tile(accepted, (MODELS, 1)),
    )


SECTORS = tuple(f"sector {k}" for k in range(12))


def synthetic_design(seed: int = 1):
    """Seed answers and correctness, variant answers and the Variants design: each
    item is a seed with one variant per relation whose formats include it."""
    rng = np.random.default_rng(seed)
    n_options = rng.choice([0, 0, 4, 4, 4, 5, 6], ITEMS)
    sector = rng.integers(0, len(SECTORS), ITEMS)
    relations = list(RELATIONS.values())
    rows = [
        (item, r)
        for item in range(ITEMS)
        for r, relation in enumerate(relations)
        if (MC if n_options[item] else TF) in relation.formats
    ]
    seed_of, relation = np.array(rows).T
    change = np.array([relations[r].change for r in relation])
    width = np.where(n_options == 0, 2, n_options)
    option_map = np.full((len(rows), 8), -1)
    for v in np.flatnonzero(change == Change.REMAP):
        option_map[v, : width[seed_of[v]]] = rng.permutation(width[seed_of[v]])
    for v in np.flatnonzero(change == Change.ADDED):
        option_map[v, : width[seed_of[v]]] = np.arange(width[seed_of[v]])
    variants = Variants(seed_of, relation, sector[seed_of], change, option_map)

    def answers(widths):
        values = rng.integers(0, 1000, (MODELS, len(widths))) % widths
        noise = rng.random(values.shape)
        values[noise < 0.05] = REFUSED
        values[(noise >= 0.05) & (noise < 0.07)] = UNREADABLE
        return values

    seed_answer = answers(width)
    seed_correct = rng.random((MODELS, ITEMS)) < 0.6
    variant_answer = answers(width[seed_of] + (change == Change.ADDED))
    return seed_answer, seed_correct, variant_answer, variants


def timed(repeat: int, work):
    """The last result, and wall and CPU seconds of each run: the machine is shared,
    so CPU time is the steadier figure."""
    wall, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = work()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return result, wall, cpu


def seconds(wall: list[float], cpu: list[float]) -> str:
    return (
        f"wall best {min(wall):.2f} s, median {statistics.median(wall):.2f} s; "
        f"CPU best {min(cpu):.2f} s"
    )


SLUG = "bench-extraction"


def store(replies, n_options, accepted):
    """The synthetic items and replies as a binary benchmark with 13 runs (once);
    returns the runs."""
    from benchmark.actions import do_create_benchmark
    from benchmark.models import Benchmark, Item, Rendering
    from judging.evaluation.models import EvaluationRun, Response

    benchmark = Benchmark.objects.filter(slug=SLUG).first()
    if benchmark is not None:
        runs = list(benchmark.evaluation_runs.order_by("pk"))
        if len(runs) == MODELS and sum(r.total_items for r in runs) == len(replies):
            return runs
        benchmark.delete()
    benchmark = do_create_benchmark(name="Extraction bench", slug=SLUG)
    benchmark.scoring_scale = Benchmark.ScoringScale.BINARY
    benchmark.save(update_fields=["scoring_scale"])
    widths = n_options[:ITEMS].tolist()
    items = Item.objects.bulk_create(
        (
            Item(
                benchmark=benchmark,
                external_id=f"X-{k:05d}",
                format="multiple_choice" if width else "true_false",
                correct_options=(
                    [LETTERS[int(np.argmax(accepted[k]))]] if width else []
                ),
                correct_answer=None if width else bool(accepted[k, 1]),
            )
            for k, width in enumerate(widths)
        ),
        batch_size=5000,
    )
    renderings = Rendering.objects.bulk_create(
        (
            Rendering(
                item=item,
                language="zh",
                question=f"Question {k}",
                answer="",
                origin=Rendering.Origin.SOURCE,
                options=[f"option {i}" for i in range(width)],
            )
            for k, (item, width) in enumerate(zip(items, widths, strict=True))
        ),
        batch_size=5000,
    )
    runs = []
    for model in range(MODELS):
        run = EvaluationRun.objects.create(
            benchmark=benchmark,
            model_name=f"model-{model:02d}",
            language="zh",
            origin=EvaluationRun.Origin.IMPORTED,
            status=EvaluationRun.Status.COMPLETE,
            binary=True,
            total_items=ITEMS,
        )
        Response.objects.bulk_create(
            (
                Response(
                    run=run,
                    item=item,
                    rendering=rendering,
                    text=replies[model * ITEMS + k],
                    status=Response.Status.ANSWERED,
                )
                for k, (item, rendering) in enumerate(
                    zip(items, renderings, strict=True)
                )
            ),
            batch_size=5000,
        )
        runs.append(run)
    return runs


def database_bench(
    repeat, replies, n_options, expected_outcome, expected_value, accepted
):
    from browse_bench import setup_database

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("Set DATABASE_URL to a PostgreSQL database for --db.")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")
    setup_database(url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from judging.evaluation.extraction import Extractions
    from judging.evaluation.grades import load_binary
    from judging.evaluation.grading import stored_answer_grades, write_grades
    from judging.evaluation.models import AnswerGrade, Response
    from judging.leaderboard.binary_tables import run_metrics

    call_command("migrate", verbosity=0)
    runs = store(replies, n_options, accepted[:ITEMS])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    responses = Response.objects.filter(run__in=runs)

    def grade_stored(fresh):
        # Not timed: a first grading starts with no grade rows; a re-grading
        # (after the rules change) replaces them.
        if fresh:
            AnswerGrade.objects.filter(response__run__in=runs).delete()
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE judging_answergrade")
        started, started_cpu = time.perf_counter(), time.process_time()
        graded = stored_answer_grades(responses)
        read = time.perf_counter() - started, time.process_time() - started_cpu
        write_grades(graded)
        total = time.perf_counter() - started, time.process_time() - started_cpu
        return len(graded.ids), read, total

    for fresh, what in ((True, "first grading"), (False, "re-grading")):
        results = [grade_stored(fresh) for _ in range(repeat)]
        for label, at in (("read + extract + grade", 1), ("and write", 2)):
            wall = [result[at][0] for result in results]
            cpu = [result[at][1] for result in results]
            print(
                f"stored replies, {what}, {label}: {results[0][0]:,} responses of "
                f"{len(runs)} runs: {seconds(wall, cpu)} (CPU of this process; "
                "PostgreSQL works beside it)"
            )
    stored = dict(responses.values_list("pk", "grade__grade"))
    order = list(responses.order_by("run_id", "item_id").values_list("pk", flat=True))
    expected = grade(Extractions(expected_outcome, expected_value), accepted)
    differ = sum(
        stored[pk] != int(want) for pk, want in zip(order, expected, strict=True)
    )
    print(f"{differ} stored grades differ from the replies as written (expected 0)")

    def leaderboard_read():
        matrix = load_binary(runs)
        return [run_metrics(matrix, row) for row in range(len(runs))]

    metrics, wall, cpu = timed(repeat, leaderboard_read)
    print(
        f"leaderboard read of the stored grades (load_binary + accuracy per run): "
        f"{seconds(wall, cpu)}; accuracy "
        f"{np.mean([m.accuracy for m in metrics]):.1f} %, "
        f"flagged {sum(m.flagged for m in metrics):,}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--db", action="store_true", help="also from replies stored in PostgreSQL"
    )
    args = parser.parse_args()
    replies, n_options, expected_outcome, expected_value, accepted = synthetic()

    def extract_and_score():
        extractions = extract_all(replies, n_options)
        grades = grade(extractions, accepted).reshape(MODELS, ITEMS)
        return extractions, accuracy(grades)

    (extractions, table), wall, cpu = timed(args.repeat, extract_and_score)
    wrong = np.flatnonzero(
        (extractions.outcome != expected_outcome)
        | (extractions.value != expected_value)
    )
    characters = sum(map(len, replies))
    print(
        f"extraction + scoring: {len(replies):,} replies "
        f"({characters / len(replies):.0f} characters on average): "
        f"{seconds(wall, cpu)}; {len(wrong)} read otherwise than written "
        f"(expected 0); flagged {table.flagged.sum():,}, "
        f"accuracy {np.nanmean(table.accuracy):.3f}"
    )
    for k in wrong[:5]:
        print("  ", repr(replies[k]), extractions.outcome[k], extractions.value[k])

    design = synthetic_design()
    tables, wall, cpu = timed(
        args.repeat,
        lambda: robustness(*design, relations=list(RELATIONS), sectors=SECTORS),
    )
    pooled = tables.pooled
    print(
        f"robustness tables: {ITEMS:,} seeds, {len(design[3].seed):,} variants × "
        f"{MODELS} models: {seconds(wall, cpu)}; pooled correct "
        f"{np.mean(pooled.correct):.3f}, incorrect {np.mean(pooled.incorrect):.3f}, "
        f"{pooled.refused_variants.sum():,} refused variants excluded"
    )
    if args.db:
        database_bench(
            args.repeat,
            replies,
            n_options,
            expected_outcome,
            expected_value,
            accepted,
        )


if __name__ == "__main__":
    main()
