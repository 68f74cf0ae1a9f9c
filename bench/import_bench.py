"""Import and export at paper scale: N items × 4 languages (targets: 2,049 in ≤ 3 s,
100,000 in ≤ 20 s with flat memory, on PostgreSQL).

    .venv/bin/python bench/import_bench.py [--items 2049 100000] [--layouts csv jsonl]
    .venv/bin/python bench/import_bench.py --columns 1000 9990 10001 1000000

With `--columns`, each file instead has 100 rows and N extra (ignored) columns, to
show that checking a header is linear in its width and a header wider than
MAX_COLUMNS is refused at once (#13: 40,000 columns used to take 22 s).

Generates synthetic files in the public IndustryBench CSV layout and the generic JSONL
(paper-like lengths: a ~50-character Chinese question, ~150-character answer, a
~300-character knowledge excerpt, English/Russian/Vietnamese renderings, labels by
name), then for each file runs, in a fresh process, `do_import_items` into an empty
benchmark and `write_export` of the result, timing each and recording the process's
peak RSS. Uses its own database (default
postgres://postgres@127.0.0.1:5432/assay_import_bench, created and migrated if missing,
emptied before every run), never the one in DATABASE_URL.
"""

import argparse
import csv
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/assay_import_bench"

ZH = (
    "螺栓性能等级公称抗拉强度屈服强度防护等级外壳防尘防水隔爆型电气设备温度组别"
    "电缆导体截面载流量管道公称压力涂层厚度检测方法标准规定要求试验条件材料牌号"
)
EN = (
    "bolt property class nominal tensile strength yield ratio enclosure ingress "
    "protection explosion-proof motor temperature class cable conductor cross-section "
    "current rating pipe nominal pressure coating thickness test method standard "
    "requires the supplier to state conditions material grade"
).split()
RU = (
    "болт класс прочности номинальный предел текучести оболочка степень защиты "
    "взрывозащищённый двигатель температурный класс кабель сечение жилы ток трубы "
    "номинальное давление толщина покрытия метод испытаний стандарт требует"
).split()
VI = (
    "bu lông cấp bền giới hạn bền kéo danh nghĩa tỷ số chảy vỏ cấp bảo vệ chống cháy "
    "nổ động cơ cấp nhiệt độ cáp tiết diện dây dẫn dòng điện ống áp suất danh định "
    "độ dày lớp phủ phương pháp thử tiêu chuẩn yêu cầu"
).split()
CAPABILITIES = [
    "Selection & Substitution",
    "Standards & Terminology",
    "Process Principles",
    "Safety & Compliance",
    "Quality & Metrology",
    "Fault Diagnosis",
    "Engineering Calculation",
]
INDUSTRIES = [
    "Machinery & Hardware",
    "Chemical & Coatings",
    "Electronics & Sensors",
    "Electrical & Power",
    "Cross-Industry",
    "Metallurgy & Mining",
    "Energy & Storage",
    "Security & Fire Safety",
    "Packaging & Printing",
    "Textile & Leather",
]
COLUMNS = [
    "id",
    "question",
    "answer",
    "question_en",
    "answer_en",
    "question_ru",
    "answer_ru",
    "question_vi",
    "answer_vi",
    "difficulty",
    "_format",
    "industry_primary",
    "capability",
    "knowledge_text",
    "domain",
]


def synthetic_rows(count: int, seed: int = 0):
    rng = random.Random(seed)

    def zh(length):
        return "".join(rng.choice(ZH) for _ in range(length))

    def words(vocabulary, length):
        return " ".join(rng.choice(vocabulary) for _ in range(length))

    for n in range(count):
        yield {
            "id": f"IB-{n:06d}",
            "question": f"GB/T {1000 + n % 9000}-2010 中，{zh(45)}？",
            "answer": zh(150) + "。",
            "question_en": words(EN, 22) + "?",
            "answer_en": words(EN, 70) + ".",
            "question_ru": words(RU, 20) + "?",
            "answer_ru": words(RU, 60) + ".",
            "question_vi": words(VI, 26) + "?",
            "answer_vi": words(VI, 85) + ".",
            "difficulty": ("easy", "medium", "hard", "")[n % 4],
            "_format": "standard_qa" if n % 3 else "product_record",
            "industry_primary": INDUSTRIES[n % len(INDUSTRIES)],
            "capability": CAPABILITIES[n % len(CAPABILITIES)],
            "knowledge_text": f"GB/T {1000 + n % 9000}-2010 " + zh(300),
            "domain": zh(4),
        }


def write_csv(path: Path, count: int):
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(synthetic_rows(count))


def write_wide_csv(path: Path, extra_columns: int):
    columns = COLUMNS + [f"extra_{index}" for index in range(extra_columns)]
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(synthetic_rows(100))


def generic_item(row: dict) -> dict:
    """A synthetic row as an item of the generic JSONL layout."""
    renderings = {"zh": {"question": row["question"], "answer": row["answer"]}}
    for language in ("en", "ru", "vi"):
        renderings[language] = {
            "question": row[f"question_{language}"],
            "answer": row[f"answer_{language}"],
            "origin": "machine",
            "review_status": "pending",
        }
    return {
        "id": row["id"],
        "source_kind": "standard",
        "source_reference": row["knowledge_text"][:17],
        "knowledge_text": row["knowledge_text"],
        "domain": row["domain"],
        "difficulty": row["difficulty"],
        "status": "active",
        "labels": {
            "capability": row["capability"],
            "industry": row["industry_primary"],
        },
        "renderings": renderings,
    }


def write_jsonl(path: Path, count: int):
    with path.open("w", encoding="utf-8") as out:
        for row in synthetic_rows(count):
            out.write(json.dumps(generic_item(row), ensure_ascii=False) + "\n")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def server_cpu_seconds(connection) -> float:
    """CPU used so far by this connection's PostgreSQL backend (same machine only)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(action: str, path: Path, fmt: str):
    """Runs in a fresh process so that peak RSS belongs to this one operation."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")
    import django

    django.setup()
    from django.db import connection

    from benchmark.exporting import write_export
    from benchmark.importing import do_import_items
    from benchmark.models import Benchmark
    from benchmark.validation import ImportRejected

    baseline = peak_rss_mb()
    server_start = server_cpu_seconds(connection)
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    refusal = ""
    if action == "import":
        with path.open("rb") as source:
            try:
                summary = do_import_items(source, slug="bench", filename=path.name)
                count = summary.created
            except ImportRejected as rejected:
                count, refusal = 0, str(rejected.problems[0])
    else:
        with path.open("w", encoding="utf-8", newline="") as out:
            report = write_export(Benchmark.objects.get(slug="bench"), out, fmt)
        count = report.items
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_start
    server_cpu = server_cpu_seconds(connection) - server_start
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": cpu,
                "server_cpu_seconds": server_cpu,
                "items": count,
                "refusal": refusal,
                "baseline_rss_mb": baseline,
                "peak_rss_mb": peak_rss_mb(),
            }
        )
    )


def ensure_database(url: str, env: dict):
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(
        host=parsed.hostname,
        port=parsed.port or 5432,
        user=parsed.username or "postgres",
        password=parsed.password,
        dbname="postgres",
        autocommit=True,
    ) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "-v0"], env=env, check=True
    )


def empty_benchmark_tables(url: str):
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        # An item's renderings, labels and events have no database-level foreign key
        # (benchmark.models ITEM_FK_NOTE), so a cascade from the benchmark misses them.
        connection.execute(
            "TRUNCATE benchmark_benchmark, benchmark_rendering, benchmark_finallabel, "
            "benchmark_itemevent CASCADE"
        )
        connection.execute("VACUUM ANALYZE")


def run_child(env: dict, action: str, path: Path, fmt: str) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--child", action, str(path), fmt],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def cpu(result: dict) -> str:
    return f"{result['cpu_seconds']:.1f} + {result['server_cpu_seconds']:.1f} s"


def wide_headers(env: dict, args):
    print("| extra columns | file | import wall | outcome |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for extra in args.columns:
            path = Path(directory) / f"wide-{extra}.csv"
            write_wide_csv(path, extra)
            empty_benchmark_tables(args.database_url)
            imported = run_child(env, "import", path, "csv")
            outcome = imported["refusal"] or f"{imported['items']} items imported"
            print(
                f"| {extra:,} | {path.stat().st_size / 2**20:.1f} MB "
                f"| {imported['seconds']:.2f} s | {outcome} |",
                flush=True,
            )
    empty_benchmark_tables(args.database_url)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, nargs="+", default=[2049, 100_000])
    parser.add_argument("--layouts", nargs="+", default=["csv", "jsonl"])
    parser.add_argument("--columns", type=int, nargs="+")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        action, path, fmt = args.child
        child(action, Path(path), fmt)
        return
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only"),
        "ALLOWED_HOSTS": os.environ.get("ALLOWED_HOSTS", "localhost"),
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
    }
    ensure_database(args.database_url, env)
    if args.columns:
        wide_headers(env, args)
        return
    print(
        "| items × 4 languages | file | size | import wall | import CPU client + "
        "server | import peak RSS | export wall | export CPU client + server | "
        "export peak RSS | load avg |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for count in args.items:
            for layout in args.layouts:
                path = Path(directory) / f"items-{count}.{layout}"
                (write_csv if layout == "csv" else write_jsonl)(path, count)
                empty_benchmark_tables(args.database_url)
                imported = run_child(env, "import", path, layout)
                assert imported["items"] == count, imported
                exported = run_child(
                    env, "export", Path(directory) / f"export.{layout}", layout
                )
                size = path.stat().st_size / 2**20
                print(
                    f"| {count:,} | {layout} | {size:.0f} MB "
                    f"| {imported['seconds']:.2f} s | {cpu(imported)} "
                    f"| {imported['peak_rss_mb']:.0f} MB "
                    f"(base {imported['baseline_rss_mb']:.0f}) "
                    f"| {exported['seconds']:.2f} s | {cpu(exported)} "
                    f"| {exported['peak_rss_mb']:.0f} MB "
                    f"| {os.getloadavg()[0]:.1f} |",
                    flush=True,
                )
                path.unlink()
        empty_benchmark_tables(args.database_url)


if __name__ == "__main__":
    main()
