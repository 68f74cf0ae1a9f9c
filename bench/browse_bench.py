"""Item browser at scale: 100,000 items × 4 languages (target: each page < 1 s).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/assay_bench_browse \\
      SECRET_KEY=bench ALLOWED_HOSTS=testserver \\
      .venv/bin/python bench/browse_bench.py [--items 100000] [--repeat 3]

Creates the database if needed, migrates it, fills a benchmark `bench-browse` with
synthetic items (zh/en/ru/vi renderings, capability and industry labels) once, then
requests the item browser through Django's test client — full view, queries and
template — for typical filter combinations and prints the median time and the
number of queries of each.
"""

import argparse
import os
import pathlib
import random
import statistics
import sys
import time
from urllib.parse import urlencode, urlparse

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

SLUG = "bench-browse"
BATCH = 5_000

SCENARIOS = [
    ("no filter", {}),
    ("page 1,000", {"page": 1000}),
    ("capability", {"capability": "fault_diagnosis"}),
    (
        "capability + industry + difficulty",
        {
            "capability": "safety_compliance",
            "industry": "electrical_power",
            "difficulty": "hard",
        },
    ),
    ("language ru", {"language": "ru"}),
    ("search zh, rare", {"q": "编号 77777"}),
    ("search ru, rare", {"q": "номер 77777"}),
    ("search vi, common", {"q": "bu lông"}),
    ("search + capability", {"q": "IP67", "capability": "standards_terminology"}),
]

TEMPLATES = {
    "zh": (
        "{part}（编号 {n}）的{prop}应符合哪项要求？",
        "应符合 {std} 的规定，数值为 {v}。",
    ),
    "en": (
        "Which requirement applies to the {prop} of {part} (no. {n})?",
        "It must meet {std}; the value is {v}.",
    ),
    "ru": (
        "Какое требование относится к {prop} для {part} (номер {n})?",
        "Должно соответствовать {std}; значение {v}.",
    ),
    "vi": (
        "Yêu cầu nào áp dụng cho {prop} của {part} (số {n})?",
        "Phải đáp ứng {std}; giá trị là {v}.",
    ),
}
PARTS = {
    "zh": ["螺栓", "电缆", "外壳 IP67", "轴承", "涂层"],
    "en": ["bolts", "cables", "IP67 enclosures", "bearings", "coatings"],
    "ru": ["болтов", "кабелей", "оболочек IP67", "подшипников", "покрытий"],
    "vi": ["bu lông", "cáp", "vỏ IP67", "ổ trục", "lớp phủ"],
}
PROPS = {
    "zh": "抗拉强度",
    "en": "tensile strength",
    "ru": "прочности",
    "vi": "độ bền kéo",
}


def setup_database(url: str) -> None:
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(
        host=parsed.hostname,
        port=parsed.port or 5432,
        user=parsed.username or "postgres",
        dbname="postgres",
        autocommit=True,
    ) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')


def populate(count: int) -> None:
    from benchmark.actions import do_create_benchmark
    from benchmark.models import Benchmark, FinalLabel, Item, Label, Rendering

    benchmark = Benchmark.objects.filter(slug=SLUG).first()
    if benchmark and benchmark.items.count() == count:
        return
    if benchmark:
        benchmark.delete()
    benchmark = do_create_benchmark(name="Browse bench", slug=SLUG)
    labels = {
        dimension: list(Label.objects.filter(dimension=dimension))
        for dimension in benchmark.dimensions.all()
    }
    rng = random.Random(0)
    difficulties = ["", "easy", "medium", "hard"]
    kinds = ["standard", "product", "other"]
    started = time.perf_counter()
    for start in range(0, count, BATCH):
        items = Item.objects.bulk_create(
            Item(
                benchmark=benchmark,
                external_id=f"B-{n:06d}",
                source_kind=rng.choice(kinds),
                source_reference=(
                    f"GB/T {rng.randint(1000, 40000)}-20{rng.randint(10, 24)}"
                ),
                difficulty=rng.choice(difficulties),
            )
            for n in range(start, min(start + BATCH, count))
        )
        renderings = []
        finals = []
        for item in items:
            n = int(item.external_id[2:])
            part = rng.randrange(5)
            for language, (question, answer) in TEMPLATES.items():
                renderings.append(
                    Rendering(
                        item=item,
                        language=language,
                        question=question.format(
                            part=PARTS[language][part], n=n, prop=PROPS[language]
                        ),
                        answer=answer.format(std=item.source_reference, v=n % 997),
                        origin="source" if language == "zh" else "imported",
                    )
                )
            for dimension, options in labels.items():
                if rng.random() < 0.95:
                    finals.append(
                        FinalLabel(
                            item=item,
                            dimension=dimension,
                            label=rng.choice(options),
                            provenance="imported",
                        )
                    )
        Rendering.objects.bulk_create(renderings)
        FinalLabel.objects.bulk_create(finals)
    print(f"populated {count:,} items in {time.perf_counter() - started:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        print("Set DATABASE_URL to a PostgreSQL database for this benchmark.")
        return 2
    setup_database(url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment
    from django.urls import reverse

    from benchmark.actions import do_create_user

    # Records each response's template context, as in tests.
    setup_test_environment()
    call_command("migrate", verbosity=0)
    populate(args.items)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    client = Client()
    client.force_login(do_create_user("bench-manager", "bench-password", "manager"))
    base = reverse("benchmark:item_list", args=[SLUG])
    print("| scenario | matching items | median ms | queries |")
    print("|---|---|---|---|")
    for name, params in SCENARIOS:
        timings = []
        for _ in range(args.repeat):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(f"{base}?{urlencode(params)}")
                timings.append(time.perf_counter() - started)
            assert response.status_code == 200, response.status_code
        total = response.context["result"].total
        print(
            f"| {name} | {total:,} | {statistics.median(timings) * 1000:.0f} "
            f"| {len(queries)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
